"""The spans of traces whose local root has not arrived yet (logic.otlp.waiting), in the datasets
table: one item per tenant and trace, `T#<tenant>#waiting#<trace id hex>` / `w`, holding the
pieces as they came (`parts`: serialized exports of what the mapping reads), their size (`b`),
and `expires_at` (the table's TTL) a day after the last piece: a trace whose root never comes
is forgotten then. An item is held under MAX_BYTES, so that a trace too large to wait is told,
not failed."""

from __future__ import annotations

import time

from evalsvc.storage import dynamo
from evalsvc.storage.datasets.keys import table
from evalsvc.storage.dynamo import Item, n, s

SK = "w"
WAIT_SECONDS = 24 * 3600
# The most bytes of pieces one trace may hold while it waits (an item is at most 400 KB).
MAX_BYTES = 350_000


def _key(tenant: str, trace_id: bytes) -> Item:
    return {"pk": s(f"T#{tenant}#waiting#{trace_id.hex()}"), "sk": s(SK)}


def read(tenant: str, trace_ids: list[bytes]) -> dict[bytes, list[bytes]]:
    """The pieces waiting for each of `trace_ids` that has some (one BatchGetItem per 100)."""
    by_key = {_key(tenant, trace_id)["pk"]["S"]: trace_id for trace_id in trace_ids}
    keys = [_key(tenant, trace_id) for trace_id in trace_ids]
    found: dict[bytes, list[bytes]] = {}
    for item in dynamo.batch_get(table(), keys):
        parts = [part["B"] for part in item.get("parts", {}).get("L", [])]
        found[by_key[item["pk"]["S"]]] = parts
    return found


def add(tenant: str, trace_id: bytes, piece: bytes) -> bool:
    """Add a piece to the trace's waiting ones; False (nothing added) when the trace would then
    hold more than MAX_BYTES."""
    if len(piece) > MAX_BYTES:
        return False
    added = dynamo.conditional(
        "update_item",
        TableName=table(),
        Key=_key(tenant, trace_id),
        UpdateExpression=(
            "SET parts = list_append(if_not_exists(parts, :none), :piece), expires_at = :expires "
            "ADD b :size"
        ),
        ConditionExpression="attribute_not_exists(b) OR b <= :room",
        ExpressionAttributeValues={
            ":none": {"L": []},
            ":piece": {"L": [{"B": piece}]},
            ":expires": n(int(time.time()) + WAIT_SECONDS),
            ":size": n(len(piece)),
            ":room": n(MAX_BYTES - len(piece)),
        },
    )
    return added is not None


def add_all(tenant: str, pieces: dict[bytes, bytes]) -> set[bytes]:
    """add() of each trace's piece, 16 at a time; the traces whose piece was not added."""
    traces = list(pieces)
    added = dynamo.in_parallel(lambda trace_id: add(tenant, trace_id, pieces[trace_id]), traces)
    return {trace_id for trace_id, ok in zip(traces, added, strict=True) if not ok}


def remove(tenant: str, trace_ids: list[bytes]) -> None:
    """Forget the waiting pieces of traces now mapped."""
    deletes = [{"DeleteRequest": {"Key": _key(tenant, trace_id)}} for trace_id in trace_ids]
    if deletes:
        dynamo.batch_write(table(), deletes)
