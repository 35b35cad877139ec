"""The monitors table (E8): monitors, and the record of each of their runs.

    pk           sk                               what
    T#<tenant>   M#<monitor>                      the monitor as asked for (its body as JSON),
                                                  `next_run_ms`, `due_pk` while it is
                                                  scheduled (sparse index `due`), and
                                                  `last_run_ms`: the run claimed last
    T#<tenant>   R#<monitor>#<scheduled_ms:013d>  one run: claimed, running (its evaluation
                                                  named), then complete or failed with what
                                                  it found; `due_pk` while its alert waits
                                                  to be delivered

A tenant's monitors are one Query; a monitor's runs another, newest first.

Each (monitor, scheduled time) runs once: the dispatcher claims a run in the transaction that
starts its job (logic.kinds.monitor_run): the run's record (only if absent) and the monitor's
`next_run_ms` moved on (only from the time it claims). A second delivery of the same dispatch,
or a second dispatcher, fails one of the conditions and claims nothing.

One run of a monitor at a time: every claim (a scheduled run's, or one asked for now) names
itself as the monitor's `last_run_ms`, only if the monitor still names the run it named when
the claimer read it, which the claimer found ended (logic.monitors). Of two claims made after
the same read, one passes and the other, finding the monitor names another run, claims
nothing. Nothing clears the mark: whether the monitor runs is whether the run it names has
ended, which the write that records the run's outcome says (the run's own end, or the job
engine failing it).

An alert is an outbox: the run's outcome and its alert (pending) are one write, so an alert is
never lost by a worker dying before delivering it; the index `due` lists it, at the time it
may be tried, for the dispatcher. Whoever delivers it first leases it (moves that time on, from
the time it read), so two never deliver at once, and one that dies is followed by the next
dispatch after the lease.

Run records expire (`expires_at`, the table's TTL) EVALSVC_MONITOR_HISTORY_DAYS after their
run; a deleted monitor's records that its DELETE did not reach expire the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from evalsvc.core.settings import get_settings
from evalsvc.models.monitors import (
    Alert,
    AlertStatus,
    Due,
    Run,
    RunMetric,
    StoredMonitor,
)
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s
from evalsvc.storage.writes import Writes, commit

MONITOR_PREFIX = "M#"
RUN_PREFIX = "R#"
DUE_INDEX = "due"
DUE_PK = "due"
# A run's failure as kept: the first this many characters.
MAX_FAILURE_CHARS = 2_000
DAY_MS = 86_400_000

ENDED = ("complete", "failed")


def _table() -> str:
    return get_settings().monitors_table


def tenant_pk(tenant: str) -> str:
    return f"T#{tenant}"


def monitor_sk(monitor_id: str) -> str:
    return f"{MONITOR_PREFIX}{monitor_id}"


def runs_prefix(monitor_id: str) -> str:
    return f"{RUN_PREFIX}{monitor_id}#"


def run_sk(monitor_id: str, scheduled_ms: int) -> str:
    return f"{runs_prefix(monitor_id)}{scheduled_ms:013d}"


def _monitor_key(tenant: str, monitor_id: str) -> Item:
    return {"pk": s(tenant_pk(tenant)), "sk": s(monitor_sk(monitor_id))}


def _run_key(tenant: str, monitor_id: str, scheduled_ms: int) -> Item:
    return {"pk": s(tenant_pk(tenant)), "sk": s(run_sk(monitor_id, scheduled_ms))}


def _expires_at(scheduled_ms: int) -> int:
    """When a run's record expires: EVALSVC_MONITOR_HISTORY_DAYS after its run (seconds)."""
    return (scheduled_ms + get_settings().monitor_history_days * DAY_MS) // 1000


# ---- monitors ----------------------------------------------------------------------------------


def put_monitor(monitor: StoredMonitor) -> bool:
    """Store a new monitor, scheduled; False when its id is taken."""
    item: Item = {
        **_monitor_key(monitor.tenant, monitor.monitor_id),
        "monitor_id": s(monitor.monitor_id),
        "body": s(monitor.body),
        "created_ms": n(monitor.created_ms),
        "next_run_ms": n(monitor.next_run_ms),
        "due_pk": s(DUE_PK),
    }
    return commit(
        Writes(
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
    )


def _monitor(tenant: str, item: Item) -> StoredMonitor:
    return StoredMonitor(
        tenant,
        get_s(item, "monitor_id") or "",
        get_s(item, "body") or "{}",
        get_n(item, "created_ms"),
        get_n(item, "next_run_ms"),
        int(item["last_run_ms"]["N"]) if "last_run_ms" in item else None,
    )


def get_monitor(tenant: str, monitor_id: str) -> StoredMonitor | None:
    item = dynamo.get_item(_table(), _monitor_key(tenant, monitor_id))
    return None if item is None else _monitor(tenant, item)


def list_monitors(tenant: str) -> list[StoredMonitor]:
    """The tenant's monitors, oldest first."""
    found = [
        _monitor(tenant, item)
        for item in dynamo.query_items(
            TableName=_table(),
            KeyConditionExpression="pk = :pk AND begins_with(sk, :m)",
            ExpressionAttributeValues={":pk": s(tenant_pk(tenant)), ":m": s(MONITOR_PREFIX)},
            ConsistentRead=True,
        )
    ]
    return sorted(found, key=lambda m: (m.created_ms, m.monitor_id))


def delete_monitor(tenant: str, monitor_id: str) -> bool:
    """Remove the monitor (no run of it is claimed after); False when there was none."""
    key = _monitor_key(tenant, monitor_id)
    return (
        dynamo.conditional(
            "delete_item", TableName=_table(), Key=key, ConditionExpression="attribute_exists(pk)"
        )
        is not None
    )


def delete_runs(tenant: str, monitor_id: str, has_time: Callable[[], bool]) -> int:
    """Delete the monitor's run records, newest first, while `has_time()` (the deadline);
    how many were deleted (the rest expire)."""
    deleted = 0
    for page in dynamo.query_pages(
        TableName=_table(),
        KeyConditionExpression="pk = :pk AND begins_with(sk, :run)",
        ExpressionAttributeValues={
            ":pk": s(tenant_pk(tenant)),
            ":run": s(runs_prefix(monitor_id)),
        },
        ProjectionExpression="pk, sk",
        ScanIndexForward=False,
    ):
        if not page or not has_time():
            break
        dynamo.batch_write(_table(), [{"DeleteRequest": {"Key": key}} for key in page])
        deleted += len(page)
    return deleted


# ---- what is due -------------------------------------------------------------------------------


def due(now_ms: int) -> Iterator[Due]:
    """Every scheduled monitor whose next run is at or before `now_ms`, and every run whose
    alert may be tried by then; earliest first."""
    for item in dynamo.query_items(
        TableName=_table(),
        IndexName=DUE_INDEX,
        KeyConditionExpression="due_pk = :due AND next_run_ms <= :now",
        ExpressionAttributeValues={":due": s(DUE_PK), ":now": n(now_ms)},
    ):
        tenant = (get_s(item, "pk") or "")[2:]
        sk = get_s(item, "sk") or ""
        at_ms = get_n(item, "next_run_ms")
        if sk.startswith(RUN_PREFIX):
            monitor_id, _, ms = sk[len(RUN_PREFIX) :].rpartition("#")
            yield Due(tenant, monitor_id, at_ms, int(ms))
        else:
            yield Due(tenant, sk[len(MONITOR_PREFIX) :], at_ms)


def _after(last_run_ms: int | None) -> tuple[str, Item]:
    """The condition that the monitor still names `last_run_ms` as its last run (None: none),
    and its values."""
    if last_run_ms is None:
        return "attribute_not_exists(last_run_ms)", {}
    return "last_run_ms = :last", {":last": n(last_run_ms)}


def claiming(
    tenant: str,
    monitor_id: str,
    scheduled_ms: int,
    next_run_ms: int | None,
    last_run_ms: int | None,
) -> Writes:
    """The writes that claim the run of `monitor_id` scheduled for `scheduled_ms`, name it the
    monitor's last run, and schedule the one after at `next_run_ms` (None: a run asked for now,
    which moves no schedule); their conditions fail when it was claimed before, the monitor
    moved on or is gone, or it names another last run than `last_run_ms` (what the claimer
    read, and found ended)."""
    record: Item = {
        **_run_key(tenant, monitor_id, scheduled_ms),
        "scheduled_ms": n(scheduled_ms),
        "status": s("claimed"),
        "expires_at": n(_expires_at(scheduled_ms)),
    }
    after, values = _after(last_run_ms)
    values[":scheduled"] = n(scheduled_ms)
    if next_run_ms is None:
        record["manual"] = {"BOOL": True}
        sets, condition = "SET last_run_ms = :scheduled", f"attribute_exists(pk) AND {after}"
    else:
        values[":next"] = n(next_run_ms)
        sets = "SET next_run_ms = :next, last_run_ms = :scheduled"
        condition = f"next_run_ms = :scheduled AND {after}"
    monitor: Item = {
        "Update": {
            "TableName": _table(),
            "Key": _monitor_key(tenant, monitor_id),
            "UpdateExpression": sets,
            "ConditionExpression": condition,
            "ExpressionAttributeValues": values,
        }
    }
    put = {
        "Put": {
            "TableName": _table(),
            "Item": record,
            "ConditionExpression": "attribute_not_exists(pk)",
        }
    }
    return Writes([put, monitor])


def claim_run(
    tenant: str,
    monitor_id: str,
    scheduled_ms: int,
    next_run_ms: int,
    last_run_ms: int | None = None,
) -> bool:
    """Claim a run on its own (claiming, committed); False (nothing written) when it was
    claimed before, the monitor moved on or is gone, or names another last run."""
    return commit(claiming(tenant, monitor_id, scheduled_ms, next_run_ms, last_run_ms))


def skip_run(tenant: str, monitor_id: str, scheduled_ms: int, next_run_ms: int) -> bool:
    """Move the monitor's next run from `scheduled_ms` to `next_run_ms` without a run (another
    of its runs is running); False when it moved on, or is gone."""
    return (
        dynamo.conditional(
            "update_item",
            TableName=_table(),
            Key=_monitor_key(tenant, monitor_id),
            UpdateExpression="SET next_run_ms = :next",
            ConditionExpression="next_run_ms = :scheduled",
            ExpressionAttributeValues={":next": n(next_run_ms), ":scheduled": n(scheduled_ms)},
        )
        is not None
    )


# ---- runs --------------------------------------------------------------------------------------


def _run(tenant: str, monitor_id: str, item: Item) -> Run:
    alert = None
    if "webhook_status" in item:
        http = item.get("webhook_http_status")
        alert = Alert(
            get_s(item, "webhook_status") or "pending",  # type: ignore[arg-type]
            get_n(item, "webhook_attempts"),
            int(http["N"]) if http is not None and "N" in http else None,
            get_n(item, "alert_leases"),
            int(item["next_run_ms"]["N"]) if "next_run_ms" in item else None,
        )
    metrics_text = get_s(item, "metrics")
    return Run(
        tenant=tenant,
        monitor_id=monitor_id,
        scheduled_ms=get_n(item, "scheduled_ms"),
        status=get_s(item, "status") or "claimed",  # type: ignore[arg-type]
        manual=bool(item.get("manual", {}).get("BOOL", False)),
        result_id=get_s(item, "result_id"),
        baseline_id=get_s(item, "baseline_id"),
        metrics=[RunMetric.from_json(v) for v in _json_list(metrics_text)],
        definitions_sha256=get_s(item, "definitions_sha256"),
        pairs_matched=int(item["pairs_matched"]["N"]) if "pairs_matched" in item else None,
        cost_usd=get_s(item, "cost_usd"),
        failure=get_s(item, "failure"),
        finished_ms=int(item["finished_ms"]["N"]) if "finished_ms" in item else None,
        alert=alert,
    )


def _json_list(text: str | None) -> list[Any]:
    if not text:
        return []
    value = json.loads(text)
    return value if isinstance(value, list) else []


def get_run(tenant: str, monitor_id: str, scheduled_ms: int) -> Run | None:
    item = dynamo.get_item(_table(), _run_key(tenant, monitor_id, scheduled_ms))
    return None if item is None else _run(tenant, monitor_id, item)


def runs(
    tenant: str, monitor_id: str, *, before_ms: int | None = None, limit: int | None = None
) -> Iterator[Run]:
    """The monitor's runs, newest first (those scheduled before `before_ms`, when given)."""
    prefix = runs_prefix(monitor_id)
    upper = run_sk(monitor_id, before_ms - 1) if before_ms is not None else prefix + "~"
    for page in dynamo.query_pages(
        limit=limit,
        TableName=_table(),
        KeyConditionExpression="pk = :pk AND sk BETWEEN :lo AND :hi",
        ExpressionAttributeValues={
            ":pk": s(tenant_pk(tenant)),
            ":lo": s(prefix),
            ":hi": s(upper),
        },
        ScanIndexForward=False,
        ConsistentRead=True,
    ):
        for item in page:
            yield _run(tenant, monitor_id, item)


def run_times(tenant: str, monitor_id: str) -> list[int]:
    """The scheduled times of the monitor's claimed runs, oldest first."""
    return sorted(run.scheduled_ms for run in runs(tenant, monitor_id))


def previous_complete(tenant: str, monitor_id: str, scheduled_ms: int) -> Run | None:
    """The latest complete run scheduled before `scheduled_ms` (the "previous" baseline)."""
    for run in runs(tenant, monitor_id, before_ms=scheduled_ms):
        if run.status == "complete" and run.result_id:
            return run
    return None


def set_evaluation(tenant: str, monitor_id: str, scheduled_ms: int, result_id: str) -> None:
    """The run is running: its evaluation is `result_id` (set once; the same id again is a
    no-op, as a chunk delivered twice starts the same evaluation)."""
    dynamo.conditional(
        "update_item",
        TableName=_table(),
        Key=_run_key(tenant, monitor_id, scheduled_ms),
        UpdateExpression="SET #status = :running, result_id = :rid",
        ConditionExpression="#status = :claimed OR result_id = :rid",
        ExpressionAttributeNames={"#status": "status"},
        ExpressionAttributeValues={
            ":running": s("running"),
            ":claimed": s("claimed"),
            ":rid": s(result_id),
        },
    )


def ending(run: Run, now_ms: int, *, alert: bool) -> Writes:
    """The writes that end the run as `run` says (complete or failed, with what it found), and,
    with `alert`, make its alert pending and due now; their condition fails when it ended."""
    values: Item = {
        ":status": s(run.status),
        ":finished": n(now_ms),
        ":metrics": s(_dumps([m.as_json() for m in run.metrics])),
        ":claimed": s("claimed"),
        ":running": s("running"),
    }
    sets = ["#status = :status", "finished_ms = :finished", "#metrics = :metrics"]
    optional: dict[str, dict[str, str]] = {}
    if run.result_id is not None:
        optional["result_id"] = s(run.result_id)
    if run.baseline_id is not None:
        optional["baseline_id"] = s(run.baseline_id)
    if run.definitions_sha256 is not None:
        optional["definitions_sha256"] = s(run.definitions_sha256)
    if run.pairs_matched is not None:
        optional["pairs_matched"] = n(run.pairs_matched)
    if run.cost_usd is not None:
        optional["cost_usd"] = s(run.cost_usd)
    if run.failure:
        optional["failure"] = s(run.failure[:MAX_FAILURE_CHARS])
    if alert:
        optional.update(
            webhook_status=s("pending"),
            webhook_attempts=n(0),
            alert_leases=n(0),
            due_pk=s(DUE_PK),
            next_run_ms=n(now_ms),
        )
    names = {"#status": "status", "#metrics": "metrics"}
    for name, value in optional.items():
        sets.append(f"#{name} = :{name}")
        names[f"#{name}"] = name
        values[f":{name}"] = value
    return Writes(
        [
            {
                "Update": {
                    "TableName": _table(),
                    "Key": _run_key(run.tenant, run.monitor_id, run.scheduled_ms),
                    "UpdateExpression": "SET " + ", ".join(sets),
                    "ConditionExpression": "#status IN (:claimed, :running)",
                    "ExpressionAttributeNames": names,
                    "ExpressionAttributeValues": values,
                }
            }
        ]
    )


def lease_alert(
    tenant: str, monitor_id: str, scheduled_ms: int, due_ms: int, until_ms: int
) -> Run | None:
    """Take the run's pending alert for delivery until `until_ms`, from the time `due_ms` it
    was seen due at; the run, or None when another took it first or it was delivered."""
    response = dynamo.conditional(
        "update_item",
        TableName=_table(),
        Key=_run_key(tenant, monitor_id, scheduled_ms),
        UpdateExpression="SET next_run_ms = :until ADD alert_leases :one",
        ConditionExpression="webhook_status = :pending AND next_run_ms = :due",
        ExpressionAttributeValues={
            ":until": n(until_ms),
            ":one": n(1),
            ":pending": s("pending"),
            ":due": n(due_ms),
        },
        ReturnValues="ALL_NEW",
    )
    if response is None:
        return None
    return _run(tenant, monitor_id, response["Attributes"])


def alert_outcome(
    tenant: str,
    monitor_id: str,
    scheduled_ms: int,
    status: AlertStatus,
    attempts: int,
    http_status: int | None,
) -> None:
    """The alert's delivery: `attempts` more made, its outcome; no longer due when it ended
    (delivered, or failed for good)."""
    sets = ["webhook_status = :status", "webhook_http_status = :http"]
    values: Item = {
        ":status": s(status),
        ":attempts": n(attempts),
        ":http": {"NULL": True} if http_status is None else n(http_status),
        ":pending": s("pending"),
    }
    remove = " REMOVE due_pk, next_run_ms" if status != "pending" else ""
    dynamo.conditional(
        "update_item",
        TableName=_table(),
        Key=_run_key(tenant, monitor_id, scheduled_ms),
        UpdateExpression="SET " + ", ".join(sets) + " ADD webhook_attempts :attempts" + remove,
        ConditionExpression="webhook_status = :pending",
        ExpressionAttributeValues=values,
    )


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)
