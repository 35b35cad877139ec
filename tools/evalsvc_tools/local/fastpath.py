"""Two speed-ups to moto's DynamoDB for the embedded store, found by profiling (docs/design.md,
"The embedded store"). Both keep moto's answers as they are; tests/unit/test_local_fastpath.py
checks each against moto's own path.

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
"""

from __future__ import annotations

import base64
import bisect
import copy
import datetime
import json
import logging
import threading
from typing import Any

from evalsvc_tools.local.journal import binary_values

_originals: list[tuple[Any, str, Any]] = []
# How many installs are not uninstalled yet; moto is patched while this is above 0.
_installs = 0
_installing = threading.Lock()
log = logging.getLogger("evalsvc.local")

# The operations whose results hold only JSON-ready values (besides binary attribute values).
FAST_RESPONSES = frozenset(
    {
        "GetItem",
        "BatchGetItem",
        "Query",
        "Scan",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
    }
)


def _default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def dump_result(result: dict[str, Any]) -> str:
    """A DynamoDB result (from moto's handler) as the JSON protocol's body."""
    return json.dumps(result, default=_default, separators=(",", ":"))


# moto's own item size limit (LimitedSizeDict): DynamoDB's 400 KB, as moto measures it.
ITEM_SIZE_LIMIT = 405_000
_no_table_copies = threading.local()
_no_item_copies = threading.local()
# While a query of a tracked table runs: the sizes of its items, kept until the table changes.
_item_sizes = threading.local()


def _table_deepcopy(self: Any, memo: dict[int, Any]) -> Any:
    """A Table's deep copy, as copy.deepcopy makes it; the table itself inside a transaction
    (whose items are kept and put back item by item instead)."""
    if getattr(_no_table_copies, "active", False):
        return self
    copied = self.__class__.__new__(self.__class__)
    memo[id(self)] = copied
    for name, value in self.__dict__.items():
        setattr(copied, name, copy.deepcopy(value, memo))
    return copied


def key_of(table: Any, attributes: dict[str, Any]) -> tuple[Any, Any] | None:
    """The (hash, range) key moto's `table` indexes an item by, from an item's or a key's
    attributes; None if one of them is missing."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    hash_value = attributes.get(table.hash_key_attr)
    if hash_value is None:
        return None
    if not table.range_key_attr:
        return DynamoType(hash_value), None
    range_value = attributes.get(table.range_key_attr)
    if range_value is None:
        return None
    return DynamoType(hash_value), DynamoType(range_value)


def _touched_items(backend: Any, transact_items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(table, hash, range, a copy of the item or None) for every item a transaction names."""
    saved = []
    for action in transact_items:
        for operation in action.values():
            table = backend.tables.get(operation.get("TableName"))
            key = (
                key_of(table, operation.get("Item") or operation.get("Key") or {})
                if table
                else None
            )
            if key is not None:
                item = table.get_item(*key)
                saved.append((table, *key, copy.deepcopy(item)))
    return saved


def _put_back(saved: list[tuple[Any, ...]]) -> None:
    for table, hash_value, range_value, item in reversed(saved):
        if item is None:
            table.delete_item(hash_value, range_value)
        elif range_value is None:
            table.items[hash_value] = item
        else:
            table.items[hash_value][range_value] = item


def track(table: Any) -> None:
    """Keep page orders for `table`: every write to it must be followed by `changed(table)`."""
    if not hasattr(table, "_evalsvc_writes"):
        table._evalsvc_writes = 0
        table._evalsvc_orders = {}


def _sizes_of(table: Any) -> dict[int, tuple[Any, int]]:
    """The item sizes of a tracked table worked out since its last write, by item."""
    sizes: dict[int, tuple[Any, int]] = table._evalsvc_orders.setdefault("sizes", {})
    return sizes


def changed(table: Any) -> None:
    """A write to `table` happened: forget its page orders."""
    if hasattr(table, "_evalsvc_writes"):
        table._evalsvc_writes += 1
        table._evalsvc_orders = {}


def _ordered(
    table: Any, value: Any, index_name: str | None
) -> tuple[list[Any], dict[Any, int], list[Any], str]:
    """The partition's items in the order moto's query returns them (forward), each one's
    position by its table sort key, their sort key values in that order, and the sort key's
    name; kept until the table changes."""
    orders: dict[Any, Any] = table._evalsvc_orders
    found = orders.get((value, index_name))
    if found is None:
        partition = table.items.get(value) or {}
        if index_name is None:
            sort_key = table.range_key_attr
            items = sorted(partition.values(), key=lambda item: item.range_key)
        else:
            index = next(i for i in table.indexes if i.name == index_name)
            sort_key = next(k["AttributeName"] for k in index.schema if k["KeyType"] == "RANGE")
            items = [item for item in partition.values() if item.attrs.get(sort_key)]
            items = table.sorted_items(
                [table.hash_key_attr, table.hash_key_attr], [sort_key, table.range_key_attr], items
            )
        positions = {item.range_key: k for k, item in enumerate(items)}
        found = items, positions, [item.attrs[sort_key] for item in items], sort_key
        orders[(value, index_name)] = found
    return found


def _run(keys: list[Any], comparison: str | None, values: list[Any]) -> tuple[int, int]:
    """Bounds of a run of `keys` (sorted) holding every key that can meet the condition: a
    superset where unsure (moto tests each item again)."""
    whole = 0, len(keys)
    if not comparison or not values:
        return whole
    try:
        first = values[0]
        if comparison in ("=", "EQ"):
            return bisect.bisect_left(keys, first), bisect.bisect_right(keys, first)
        if comparison in ("<", "LT"):
            return 0, bisect.bisect_left(keys, first)
        if comparison in ("<=", "LE"):
            return 0, bisect.bisect_right(keys, first)
        if comparison in (">", "GT"):
            return bisect.bisect_right(keys, first), len(keys)
        if comparison in (">=", "GE", "BEGINS_WITH", "begins_with"):
            return bisect.bisect_left(keys, first), len(keys)
        if comparison == "BETWEEN" and len(values) == 2:
            return bisect.bisect_left(keys, first), bisect.bisect_right(keys, values[1])
    except TypeError:
        pass
    return whole


def _narrowed(
    table: Any, value: Any, index_name: str | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[Any] | None:
    """The items of a tracked table's partition that a query can return, in order, after its
    start key; None to leave the query to moto as it is."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    comparison, values, _, start, forward = args[:5]
    items, positions, keys, sort_key = _ordered(table, value, index_name)
    conditions = kwargs.get("range_key_conditions") or []
    if comparison and (len(conditions) != 1 or conditions[0][0] != sort_key):
        return None
    low, high = _run(keys, comparison, values)
    if start:
        if table.range_key_attr not in start:
            return None
        position = positions.get(DynamoType(start[table.range_key_attr]))
        if position is None:
            return None  # the start item is gone: moto's own walk decides
        if forward is False:
            high = min(high, position)
        else:
            low = max(low, position + 1)
    return items[low:high]


def _global_partitions(table: Any, index: Any) -> dict[Any, tuple[list[Any], list[Any], list[Any]]]:
    """Every partition of the global index `index` (hash and range key, one each): by its hash
    value, its items in the order moto's query returns them (forward), their index sort key
    values in that order, and their whole sort tuples (index sort key, table hash and range
    key, as moto orders and pages them); kept until the table changes. Items lacking either
    index key are in no partition, as moto leaves them out."""
    orders: dict[Any, Any] = table._evalsvc_orders
    found = orders.get(("global", index.name))
    if found is None:
        hash_name, sort_key = _global_keys(index)
        members: dict[Any, list[Any]] = {}
        for partition in table.items.values():
            for item in partition.values():
                value = item.attrs.get(hash_name)
                if value is not None and item.attrs.get(sort_key) is not None:
                    members.setdefault(value, []).append(item)
        found = {}
        hash_names = [hash_name, table.hash_key_attr]
        range_names = [sort_key, table.range_key_attr]
        for value, items in members.items():
            items = table.sorted_items(hash_names, range_names, items)
            tuples = [
                (
                    item.attrs[sort_key],
                    item.attrs[table.hash_key_attr],
                    item.attrs[table.range_key_attr],
                )
                for item in items
            ]
            found[value] = items, [t[0] for t in tuples], tuples
        orders[("global", index.name)] = found
    return found


def _global_keys(index: Any) -> tuple[str, str]:
    (hash_name,) = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
    (sort_key,) = [k["AttributeName"] for k in index.schema if k["KeyType"] == "RANGE"]
    return hash_name, sort_key


def _global_run(
    table: Any, index_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], str] | None:
    """For a query of a tracked table's global index: the items of the index's partition it
    can return, in order, after its start key, and the index's sort key; None to leave the
    query to moto as it is."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    index = next(i for i in table.global_indexes if i.name == index_name)
    kinds = [k["KeyType"] for k in index.schema]
    if sorted(kinds) != ["HASH", "RANGE"]:
        return None  # a key of several attributes, or no sort key: moto's own walk
    hash_name, sort_key = _global_keys(index)
    conditions = kwargs.get("hash_key_conditions") or []
    if len(conditions) != 1 or conditions[0][0] != hash_name:
        return None
    value = conditions[0][1]
    comparison, values, _, start, forward = args[:5]
    range_conditions = kwargs.get("range_key_conditions") or []
    if comparison and (len(range_conditions) != 1 or range_conditions[0][0] != sort_key):
        return None
    try:
        partitions = _global_partitions(table, index)
    except TypeError:  # sort keys of types that do not compare: moto fails as it does
        table._evalsvc_orders.pop(("global", index_name), None)
        return None
    items, keys, tuples = partitions.get(value) or ([], [], [])
    low, high = _run(keys, comparison, values)
    if start:
        names = (sort_key, table.hash_key_attr, table.range_key_attr)
        if any(name not in start for name in (hash_name, *names)):
            return None
        if DynamoType(start[hash_name]) != value:
            return None
        # moto skips every item up to and including the start key in its order: bisection
        # over the same order finds where it stops skipping.
        position = tuple(DynamoType(start[name]) for name in names)
        try:
            if forward is False:
                high = min(high, bisect.bisect_left(tuples, position))
            else:
                low = max(low, bisect.bisect_right(tuples, position))
        except TypeError:
            return None
    return items[low:high], sort_key


def _page_cut(
    run: list[Any], sort_key: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> int | None:
    """How many items of `run` (from its start, or its end for a backward query) moto's page
    loop reaches before it stops at its Limit or 1 MB, counted as it counts them: None when it
    would reach the end, or when it counts in a way not followed here (legacy filters)."""
    from moto.dynamodb.models import table as table_module

    if set(kwargs) - _KNOWN_QUERY_KWARGS:
        return None
    comparison, values, limit = args[0], args[1], args[2]
    forward = args[4] is not False
    most = table_module.RESULT_SIZE_LIMIT
    accepted = 0
    total = 0
    for seen, item in enumerate(run if forward else reversed(run)):
        if limit is not None and accepted == limit:
            return seen + 1
        size = item.size()
        if total + size > most:
            return seen + 1
        if comparison:
            value = item.attrs.get(sort_key)
            if value is None or not value.compare(comparison, values):
                continue
        accepted += 1
        total += size
    return None


# Keyword arguments of moto's Table.query that do not change how its page loop counts.
_KNOWN_QUERY_KWARGS = frozenset(
    {
        "index_name",
        "consistent_read",
        "filter_expression",
        "hash_key_conditions",
        "range_key_conditions",
    }
)


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
        from moto.dynamodb import responses
        from moto.dynamodb.exceptions import ItemSizeTooLarge
        from moto.dynamodb.models import DynamoDBBackend, utilities
        from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
        from moto.dynamodb.models.table import Table
        from moto.dynamodb.models.utilities import bytesize
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
    serialized = DynamoHandler.serialized
    query = Table.query
    transact_write_items = DynamoDBBackend.transact_write_items
    item_deepcopy = Item.__deepcopy__

    def query_item_deepcopy(self: Any, memo: dict[int, Any]) -> Any:
        if getattr(_no_item_copies, "active", False):
            return self
        return item_deepcopy(self, memo)

    def fast_serialized(self: Any, action_result: Any) -> Any:
        result = action_result.result
        if type(result) is dict and self._get_action() in FAST_RESPONSES:
            headers = {"Content-Type": "application/x-amz-json-1.0", **self.response_headers}
            return 200, headers, dump_result(result)
        return serialized(self, action_result)

    def partition_query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        tracked = hasattr(self, "_evalsvc_writes") and len(args) > 4
        _item_sizes.known = _sizes_of(self) if tracked else None
        try:
            return sized_query(self, tracked, hash_key, *args, **kwargs)
        finally:
            _item_sizes.known = None

    def sized_query(self: Any, tracked: bool, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
        table = self
        cut_at: Any = None
        narrowed: tuple[list[Any], str] | None = None
        if index_name and index_name in {index.name for index in self.global_indexes or []}:
            if tracked and self.range_key_attr:
                narrowed = _global_run(self, index_name, args, kwargs)
        else:
            value = hash_key
            if index_name:
                local = {index.name for index in self.indexes or []}
                conditions = dict(kwargs.get("hash_key_conditions") or [])
                value = conditions.get(self.hash_key_attr) if index_name in local else None
            if value is not None and self.range_key_attr:
                table = copy.copy(self)
                partition = self.items.get(value)
                table.items = {value: partition} if partition else {}
                if tracked:
                    run = _narrowed(self, value, index_name, args, kwargs)
                    if run is not None:
                        narrowed = run, _ordered(self, value, index_name)[3]
        if narrowed is not None:
            run, sort_key = narrowed
            cut = _page_cut(run, sort_key, args, kwargs)
            if cut is not None:
                # Only the items this page can reach: the rest of the partition (or of the
                # index's partition) is neither copied nor sorted again for every page.
                run = run[:cut] if args[4] is not False else run[len(run) - cut :]
                cut_at = run[-1] if args[4] is not False else run[0]
            if table is self:
                table = copy.copy(self)
            grouped: dict[Any, dict[Any, Any]] = {}
            for item in run:
                grouped.setdefault(item.hash_key, {})[item.range_key] = item
            table.items = grouped
            args = (*args[:3], None, *args[4:])
        _no_item_copies.active = True
        try:
            results, scanned, last = query(table, hash_key, *args, **kwargs)
        finally:
            _no_item_copies.active = False
        if cut_at is not None and last is None:
            # The page ended at the cut, not at moto's limit (this cannot happen when the cut is
            # where moto's loop stops): the next page goes on after the cut.
            log.warning("a cut query page ended early; the next page goes on from the cut")
            last = self._get_last_evaluated_key(cut_at, index_name)
        return results, scanned, last

    cast_value = DynamoType.__dict__["cast_value"]

    def string_cast_value(self: Any) -> Any:
        # A string is its own value; every other type as moto casts it. Sorting a page's items
        # compares their keys through this.
        if self.type == "S":
            return self.value
        return cast_value.fget(self)

    to_dict = utilities.dynamo_to_dict

    def plain_dict(obj: Any) -> Any:
        # What dynamo_to_dict makes of a result's items, without its generic walk for the
        # values that are plain already (strings, numbers, booleans, null).
        if type(obj) is DynamoType:
            value = obj.value
            if (type(value) is str and obj.type != "B") or type(value) is bool:
                return {obj.type: value}
            return to_dict(obj)
        if type(obj) in (dict, LimitedSizeDict):
            return {k: plain_dict(v) for k, v in obj.items()}
        if type(obj) is list:
            return [plain_dict(v) for v in obj]
        return to_dict(obj)

    item_size = Item.size

    def known_size(self: Any) -> int:
        # An item's size is summed over every attribute value, nested ones too; a page of a
        # query asks for it twice, and the next page and query again, while nothing changed.
        known = getattr(_item_sizes, "known", None)
        if known is None:
            return item_size(self)
        found = known.get(id(self))
        if found is None or found[0] is not self:
            found = known[id(self)] = self, item_size(self)
        return found[1]  # type: ignore[no-any-return]

    project = Item.project

    def item_checked_once(self: Any, hash_key: Any, range_key: Any, attrs: dict[str, Any]) -> None:
        self.hash_key = hash_key
        self.range_key = range_key
        self.attrs = LimitedSizeDict()
        size = 0
        for name, value in attrs.items():
            typed = DynamoType(value)
            size += bytesize(name) + typed.size()
            dict.__setitem__(self.attrs, name, typed)
        if size > ITEM_SIZE_LIMIT:
            raise ItemSizeTooLarge

    parse_parameters = DynamoHandler.parse_parameters

    def json_parameters(self: Any, request: Any) -> None:
        if self._get_action() not in FAST_RESPONSES:
            parse_parameters(self, request)
            return
        body = request.data
        try:
            params = json.loads(body) if body else {}
        except ValueError:
            params = None
        if not isinstance(params, dict):
            parse_parameters(self, request)  # not a JSON object: moto says what is wrong
            return
        self.params = binary_values(params) if b'"B' in body else params

    def top_level_project(self: Any, projection_expressions: list[list[str]]) -> Any:
        names = [path[0] for path in projection_expressions if len(path) == 1]
        if len(names) != len(projection_expressions) or any("[" in name for name in names):
            return project(self, projection_expressions)
        projected = Item(self.hash_key, self.range_key, {})
        for name in names:
            if name in self.attrs:
                dict.__setitem__(projected.attrs, name, self.attrs[name])
        return projected

    def item_level_transaction(self: Any, transact_items: list[dict[str, Any]]) -> Any:
        try:
            saved = _touched_items(self, transact_items)
        except Exception:  # a malformed transaction: moto's own path says what is wrong
            return transact_write_items(self, transact_items)
        _no_table_copies.active = True
        try:
            return transact_write_items(self, transact_items)
        except BaseException:
            _put_back(saved)
            raise
        finally:
            _no_table_copies.active = False

    patches = [
        (Table, "__deepcopy__", _table_deepcopy),
        (Item, "__deepcopy__", query_item_deepcopy),
        (DynamoDBBackend, "transact_write_items", item_level_transaction),
        (DynamoHandler, "serialized", fast_serialized),
        (Table, "query", partition_query),
        (Item, "project", top_level_project),
        (DynamoHandler, "parse_parameters", json_parameters),
        (Item, "__init__", item_checked_once),
        (Item, "size", known_size),
        (DynamoType, "cast_value", property(string_cast_value)),
        (utilities, "dynamo_to_dict", plain_dict),
        (responses, "dynamo_to_dict", plain_dict),
    ]
    for owner, name, replacement in patches:
        _originals.append((owner, name, owner.__dict__.get(name)))
        setattr(owner, name, replacement)
    return True
