"""Two speed-ups to moto's DynamoDB for the embedded store, found by profiling (docs/design.md,
"The embedded store"). Both keep moto's answers as they are;
tests/integration/test_local_fastpath.py checks each against moto's own path.

- Responses: moto serializes every response through a generic, shape-driven serializer that
  spends about 0.2 ms per attribute value. A DynamoDB response is already in its wire form
  (attribute values are {type: value} maps), so it is written as JSON directly; binary values
  become base64, as the JSON protocol wants.
- Queries: moto's Query looks at every item of the table, not just the partition asked for,
  so its cost grew with everything stored. A query on the table or on a local secondary index
  (same partition key) is given a view of the table holding that one partition. Nor are the
  items of its page deep-copied: nothing on the way out changes them (projections build new
  items), and the copy was a tenth of the time of a queued evaluation.
- Pages: moto sorts the partition again for every page, walks it from the start to find where
  the last page ended, and tests every item against the key condition. For tables the store
  tracks (`track`; the store calls `changed` after every write to them), the partition's order
  is kept until the next write, and a query is given only the run of items its key condition
  and start key can match (found by bisection; moto still tests each of them), cut where
  moto's page loop would stop (its Limit, or 1 MB counted as it counts): a page no longer
  costs the rest of the partition.
- Projections: moto projects an item by turning it into plain Python and back. A projection of
  top-level attributes only takes them as they are.
- Items: moto checks an item's 400 KB limit as each attribute is added, summing every
  attribute so far each time (quadratic in the attributes). A new item is checked once, on its
  total, which is the same test: the running sums only grow.
- Requests: moto reads a request through a shape-driven parser (a fifth of a write's time);
  an item operation's JSON body is read with `json.loads`, binary values becoming bytes as
  that parser makes them.
- Transactions: moto deep-copies every table a TransactWriteItems names, to roll back if it is
  cancelled: a cost that grew with everything stored. Only the items the transaction names are
  copied, and put back if it is cancelled.

`install()` applies them and `uninstall()` takes them away again, counted: moto is patched for
as long as anyone who installed them (a running store, a test comparing both) has not
uninstalled them, and is moto as it is otherwise. Moto versions whose internals differ are left
alone (and say so).

The patches are made by the modules of this package, a concern each: wire.py (responses,
requests), queries.py (queries, pages, item sizes), transactions.py, item_building.py (items,
projections); this module checks moto has what they rely on and applies them together.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from evalsvc_tools.local.fastpath import item_building, queries, transactions, wire
from evalsvc_tools.local.fastpath.queries import changed, track
from evalsvc_tools.local.fastpath.transactions import key_of
from evalsvc_tools.local.fastpath.wire import FAST_RESPONSES, dump_result

__all__ = [
    "FAST_RESPONSES",
    "changed",
    "dump_result",
    "install",
    "installed",
    "key_of",
    "track",
    "uninstall",
]

_originals: list[tuple[Any, str, Any]] = []
# How many installs are not uninstalled yet; moto is patched while this is above 0.
_installs = 0
_installing = threading.Lock()
log = logging.getLogger("evalsvc.local")


def installed() -> bool:
    """Whether moto is patched now."""
    return bool(_originals)


def install() -> bool:
    """Apply the speed-ups (or count one more user of them); False (and a log line) if this
    moto does not have the internals they rely on, and then nothing is counted. Every True is
    to be followed by one `uninstall()`."""
    global _installs
    with _installing:
        if _installs == 0 and not _patch():
            return False
        _installs += 1
        return True


def uninstall() -> None:
    """One user of the speed-ups is done with them; moto is as it was once none is left."""
    global _installs
    with _installing:
        if _installs == 0:
            return
        _installs -= 1
        if _installs == 0:
            while _originals:
                owner, name, original = _originals.pop()
                if original is None:
                    delattr(owner, name)
                else:
                    setattr(owner, name, original)


def _patch() -> bool:
    """Patch moto; False (and a log line) if it lacks what the patches rely on."""
    try:
        # Everything the patches use (those not looked at here are imported only to be there).
        from moto.dynamodb import responses
        from moto.dynamodb.exceptions import ItemSizeTooLarge  # noqa: F401
        from moto.dynamodb.models import DynamoDBBackend, utilities
        from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict  # noqa: F401
        from moto.dynamodb.models.table import Table
        from moto.dynamodb.models.utilities import bytesize  # noqa: F401
        from moto.dynamodb.responses import DynamoHandler
    except ImportError:  # pragma: no cover - moto is a dependency of the local extra
        return False
    handler = ("serialized", "_get_action", "parse_parameters")
    if (
        not all(hasattr(DynamoHandler, name) for name in handler)
        or not all(hasattr(Table, name) for name in ("query", "all_items", "sorted_items"))
        or not all(
            name in Item.__dict__ for name in ("__init__", "__deepcopy__", "project", "size")
        )
        or not hasattr(DynamoDBBackend, "transact_write_items")
        or not isinstance(DynamoType.__dict__.get("cast_value"), property)
        or not hasattr(utilities, "dynamo_to_dict")
        or getattr(responses, "dynamo_to_dict", None) is not utilities.dynamo_to_dict
        or hasattr(Table, "__deepcopy__")
    ):
        log.warning("this moto differs from the one the embedded store was tuned on; not tuned")
        return False
    patches = [
        *transactions.patches(),
        *queries.patches(),
        *wire.patches(),
        *item_building.patches(),
    ]
    for owner, name, replacement in patches:
        _originals.append((owner, name, owner.__dict__.get(name)))
        setattr(owner, name, replacement)
    return True
