"""The monitors table (E8): monitors, and the record of each of their runs.

    pk                        sk                        what
    T#<tenant>#M#<monitor>    monitor                   the monitor as asked for (its body as
                                                        JSON), `next_run_ms`, and `due_pk` while
                                                        it is scheduled (sparse index `due`)
    T#<tenant>#M#<monitor>    run#<scheduled_ms:013d>   one run: claimed, then what it became

Each (monitor, scheduled time) runs once: the dispatcher claims a run in one transaction that
puts the run's record (only if absent) and moves the monitor's `next_run_ms` on (only from the
time it claims). A second delivery of the same dispatch, or a second dispatcher, fails one of
the two conditions and claims nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from evalsvc.settings import get_settings
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s

MONITOR_SK = "monitor"
RUN_PREFIX = "run#"
DUE_INDEX = "due"
DUE_PK = "due"


def _table() -> str:
    return get_settings().monitors_table


def monitor_pk(tenant: str, monitor_id: str) -> str:
    return f"T#{tenant}#M#{monitor_id}"


def run_sk(scheduled_ms: int) -> str:
    return f"{RUN_PREFIX}{scheduled_ms:013d}"


@dataclass(frozen=True, slots=True)
class Due:
    """A monitor whose next run is due: its key and the time that run is scheduled for."""

    tenant: str
    monitor_id: str
    scheduled_ms: int


@dataclass(frozen=True, slots=True)
class StoredMonitor:
    """A monitor as stored: what was asked (`body`, JSON), when (`created_ms`: a rate's
    anchor), and its next run."""

    tenant: str
    monitor_id: str
    body: str
    created_ms: int
    next_run_ms: int


def put_monitor(monitor: StoredMonitor) -> bool:
    """Store a new monitor, scheduled; False when its id is taken."""
    item: Item = {
        "pk": s(monitor_pk(monitor.tenant, monitor.monitor_id)),
        "sk": s(MONITOR_SK),
        "monitor_id": s(monitor.monitor_id),
        "body": s(monitor.body),
        "created_ms": n(monitor.created_ms),
        "next_run_ms": n(monitor.next_run_ms),
        "due_pk": s(DUE_PK),
    }
    return dynamo.transact(
        [
            {
                "Put": {
                    "TableName": _table(),
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            }
        ]
    )


def get_monitor(tenant: str, monitor_id: str) -> StoredMonitor | None:
    item = dynamo.get_item(_table(), {"pk": s(monitor_pk(tenant, monitor_id)), "sk": s(MONITOR_SK)})
    if item is None:
        return None
    return StoredMonitor(
        tenant,
        monitor_id,
        get_s(item, "body") or "{}",
        get_n(item, "created_ms"),
        get_n(item, "next_run_ms"),
    )


def due(now_ms: int) -> Iterator[Due]:
    """Every scheduled monitor whose next run is at or before `now_ms`, earliest first."""
    for item in dynamo.query_items(
        TableName=_table(),
        IndexName=DUE_INDEX,
        KeyConditionExpression="due_pk = :due AND next_run_ms <= :now",
        ExpressionAttributeValues={":due": s(DUE_PK), ":now": n(now_ms)},
    ):
        tenant, _, monitor_id = (get_s(item, "pk") or "")[2:].partition("#M#")
        yield Due(tenant, monitor_id, get_n(item, "next_run_ms"))


def claim_run(tenant: str, monitor_id: str, scheduled_ms: int, next_run_ms: int) -> bool:
    """Claim the run of `monitor_id` scheduled for `scheduled_ms` and schedule the one after
    at `next_run_ms`, at once; False (nothing written) when it was claimed before, or the
    monitor moved on or is gone."""
    pk = s(monitor_pk(tenant, monitor_id))
    return dynamo.transact(
        [
            {
                "Put": {
                    "TableName": _table(),
                    "Item": {
                        "pk": pk,
                        "sk": s(run_sk(scheduled_ms)),
                        "scheduled_ms": n(scheduled_ms),
                        "status": s("claimed"),
                    },
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Update": {
                    "TableName": _table(),
                    "Key": {"pk": pk, "sk": s(MONITOR_SK)},
                    "UpdateExpression": "SET next_run_ms = :next",
                    "ConditionExpression": "next_run_ms = :scheduled",
                    "ExpressionAttributeValues": {
                        ":next": n(next_run_ms),
                        ":scheduled": n(scheduled_ms),
                    },
                }
            },
        ]
    )


def run_times(tenant: str, monitor_id: str) -> list[int]:
    """The scheduled times of the monitor's claimed runs, oldest first."""
    return [
        get_n(item, "scheduled_ms")
        for item in dynamo.query_items(
            TableName=_table(),
            KeyConditionExpression="pk = :pk AND begins_with(sk, :run)",
            ExpressionAttributeValues={
                ":pk": s(monitor_pk(tenant, monitor_id)),
                ":run": s(RUN_PREFIX),
            },
            ConsistentRead=True,
        )
    ]
