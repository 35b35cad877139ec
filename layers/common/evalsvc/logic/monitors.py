"""Monitors (E8): evaluation that runs on its own.

    create     POST /monitors (logic.monitor_create)
    dispatch   each minute (an EventBridge schedule; the local server's clock): every due
               monitor's run claimed once and started as a job (logic.kinds.monitor_run), and
               the alerts a dead worker left pending delivered (logic.monitor_alerts)
    run_now    POST /monitors/{id}/run: a run now, outside the schedule
    history    GET /monitors/{id}/history: the runs, newest first (logic.monitor_history)

Runs missed while nothing dispatched (an outage) are not made up: the claim moves the next
run to the first scheduled time after now, so a monitor never runs in a burst.

A monitor runs one run at a time. Each claim names the monitor's last run, on condition that
it still names the one its claimer found ended (storage.monitors): so a run asked for while
another runs is a 409 naming that run, and of several asked for at once one starts and the
others are 409s naming it. A scheduled run that comes due while another runs is skipped (the
schedule moves on to its next time, as for an outage): runs never pile up behind a slow one,
and each is compared with one that has ended. A run not ended HOLD_MS after its time (its end
was lost) holds its monitor no longer.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from evalsvc.core.errors import (
    AlreadyRunning,
    Conflict,
    InvalidInput,
    NotFound,
    StorageUnavailable,
    TooManyJobs,
)
from evalsvc.core.identifiers import check_client_id, format_ms, is_client_id, now_ms
from evalsvc.core.observability import logger, metrics
from evalsvc.models.api_keys import Identity
from evalsvc.models.monitors import (
    HOLD_MS,
    PREVIOUS,
    Due,
    MonitorIn,
    Run,
    StoredMonitor,
    run_id,
)
from evalsvc.monitoring import schedules
from evalsvc.storage import monitors as store

PREVIOUS = PREVIOUS
# The most monitors a tenant keeps (each runs at most every 5 minutes).
MAX_MONITORS = 100


def get(identity: Identity, monitor_id: str) -> tuple[MonitorIn, StoredMonitor]:
    """The monitor as asked for, and as stored (its next run); 404 when the tenant has none."""
    check_client_id(monitor_id, "monitor id")
    stored = store.get_monitor(identity.tenant, monitor_id)
    if stored is None:
        raise NotFound(f"no monitor with id {monitor_id!r}")
    return MonitorIn.from_stored(stored.body), stored


@dataclass(frozen=True, slots=True)
class Claimed:
    """A run claimed by this dispatch: the monitor's, scheduled for `scheduled_ms`."""

    tenant: str
    monitor_id: str
    scheduled_ms: int


@dataclass(slots=True)
class Dispatched:
    """What one dispatch did."""

    claimed: list[Claimed] = field(default_factory=list)
    # Runs due while another run of their monitor was running: skipped.
    skipped: list[Claimed] = field(default_factory=list)
    # Alerts this dispatch delivered (or found failed for good), and what it left for later.
    alerts: int = 0
    left: int = 0


# Starting a run: (tenant, monitor, its time, the next run's time or None, the monitor's last
# run as read), as monitor_run.start.
Start = Callable[[str, str, int, int | None, int | None], bool]


def dispatch(
    at_ms: int,
    start: Start | None = None,
    has_time: Callable[[], bool] = lambda: True,
) -> Dispatched:
    """Claim the run of every monitor due at `at_ms` and start it (`start`: the run's job, in
    the claim's transaction), and deliver the alerts due whose worker died before it could:
    what it did. A run claimed by another dispatch (or an earlier delivery of this one) is not
    claimed again; a tenant running as many jobs as it may has its run claimed at a later
    dispatch. Stops taking work when `has_time()` says no (the rest is due at the next)."""
    # Imported here, not with this module: alerts (webhooks, the results they report) are the
    # dispatcher's work, whose function imports them with the job engine anyway; the monitor
    # routes' cold start would pay for them.
    from evalsvc.logic import monitor_alerts

    if start is None:
        start = _start_run()
    report = Dispatched()
    # Tenants found running as many jobs as they may: their other monitors wait for the next
    # dispatch without being tried (each try is reads, and a refusal).
    full: set[str] = set()
    for due in list(store.due(at_ms)):
        if not has_time() or (due.run_ms is None and due.tenant in full):
            report.left += 1
            continue
        try:
            if due.run_ms is not None:
                if monitor_alerts.deliver(due.tenant, due.monitor_id, due.run_ms, due.at_ms):
                    report.alerts += 1
                continue
            claimed = _claim(due, at_ms, start, report)
        except (TooManyJobs, StorageUnavailable) as exc:
            if isinstance(exc, TooManyJobs):
                full.add(due.tenant)
            report.left += 1
            logger.warning(
                "a due monitor was left for the next dispatch",
                extra={"monitor_id": due.monitor_id, "why": exc.message},
            )
            continue
        except Exception:
            logger.exception("a due monitor could not be dispatched", extra={"due": str(due)})
            continue
        if claimed is not None:
            report.claimed.append(claimed)
    if report.claimed or report.skipped or report.alerts or report.left:
        logger.info(
            "monitors dispatched",
            extra={
                "runs": len(report.claimed),
                "skipped": len(report.skipped),
                "alerts": report.alerts,
                "left": report.left,
            },
        )
    return report


def _claim(due: Due, at_ms: int, start: Start, report: Dispatched) -> Claimed | None:
    stored = store.get_monitor(due.tenant, due.monitor_id)
    if stored is None or stored.next_run_ms != due.at_ms:
        return None  # deleted, or moved on, since the index was read
    schedule = schedules.parse(json.loads(stored.body)["schedule"])
    # Runs missed while nothing dispatched are not made up: the next is after now.
    following = schedules.next_after(schedule, max(at_ms, due.at_ms), stored.created_ms)
    assert following is not None
    # Skipped while another run of the monitor runs; and a run asked for at this very
    # millisecond is this time's run.
    running = _running(stored, at_ms)
    if running is not None or stored.last_run_ms == due.at_ms:
        if store.skip_run(due.tenant, due.monitor_id, due.at_ms, following):
            report.skipped.append(Claimed(due.tenant, due.monitor_id, due.at_ms))
            metrics.add_metric(name="MonitorRunsSkipped", unit="Count", value=1)
            logger.info(
                "a due monitor run was skipped: another run of the monitor is running, or "
                "one asked for took its time",
                extra={
                    "monitor_id": due.monitor_id,
                    "scheduled_ms": due.at_ms,
                    "running": None if running is None else running.scheduled_ms,
                },
            )
        return None
    if not start(due.tenant, due.monitor_id, due.at_ms, following, stored.last_run_ms):
        return None
    return Claimed(due.tenant, due.monitor_id, due.at_ms)


def _start_run() -> Start:
    # Imported here, not with this module: a run's evaluation (scoring, the judge, the job
    # engine) is what only the dispatcher and POST /monitors/{id}/run start; the other monitor
    # routes' cold start would pay for it.
    from evalsvc.logic.kinds import monitor_run

    return monitor_run.start


def _running(stored: StoredMonitor, at_ms: int) -> Run | None:
    """The run of the monitor that is running at `at_ms`, if one is: the last it claimed (for
    a monitor that has named none, its newest run), while its record says claimed or running
    and it is not past HOLD_MS (its end lost: taken for dead)."""
    tenant, monitor_id = stored.tenant, stored.monitor_id
    if stored.last_run_ms is not None:
        last = store.get_run(tenant, monitor_id, stored.last_run_ms)
    else:  # claimed before monitors named their last run
        last = next(store.runs(tenant, monitor_id, limit=1), None)
    if last is None or last.status in store.ENDED:
        return None
    return None if at_ms - last.scheduled_ms > HOLD_MS else last


# ---- the API's other uses ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MonitorsPage:
    """Monitors, oldest first, each as asked for and as stored; next_cursor when more follow."""

    monitors: list[tuple[MonitorIn, StoredMonitor]]
    next_cursor: str | None


def list_page(identity: Identity, limit: int, cursor: str | None) -> MonitorsPage:
    """The tenant's monitors, oldest first, `limit` at most, after `cursor` (a page's
    next_cursor: when its last monitor was created, and its id). A tenant keeps at most
    MAX_MONITORS, read in one Query, so a page is cut from all of them."""
    found = store.list_monitors(identity.tenant)
    if cursor is not None:
        after = _listed_after(cursor)
        found = [m for m in found if (m.created_ms, m.monitor_id) > after]
    page, more = found[:limit], len(found) > limit
    last = page[-1] if more and page else None
    return MonitorsPage(
        [(MonitorIn.from_stored(stored.body), stored) for stored in page],
        None if last is None else f"{last.created_ms}.{last.monitor_id}",
    )


def _listed_after(cursor: str) -> tuple[int, str]:
    created, dot, monitor_id = cursor.partition(".")
    if not (dot and created.isdigit() and len(created) <= 13 and is_client_id(monitor_id)):
        raise InvalidInput(
            "cursor is not one this list of monitors gave: pass next_cursor as it was returned"
        )
    return int(created), monitor_id


def delete(identity: Identity, monitor_id: str, has_time: Callable[[], bool]) -> int:
    """Stop the monitor and remove it with its runs' records (those the request has no time
    for expire); the records removed. 404 when the tenant has none. A run in progress ends
    failed, saying the monitor was deleted, and alerts nobody."""
    check_client_id(monitor_id, "monitor id")
    if not store.delete_monitor(identity.tenant, monitor_id):
        raise NotFound(f"no monitor with id {monitor_id!r}")
    removed = store.delete_runs(identity.tenant, monitor_id, has_time)
    logger.info("monitor deleted", extra={"monitor_id": monitor_id, "runs_removed": removed})
    return removed


def run_now(identity: Identity, monitor_id: str) -> str:
    """POST /monitors/{id}/run: a run now, besides its schedule (which it does not move); its
    run id. AlreadyRunning (409, naming it) while a run of the monitor is running, or one
    asked for at the same time started instead; TooManyJobs (429) when the tenant runs as many
    jobs as it may."""
    _, stored = get(identity, monitor_id)
    at = now_ms()
    if at == stored.last_run_ms:  # two runs of a monitor never share a time (their key)
        at += 1
    _refuse_while_running(stored, at)
    try:
        started = _start_run()(identity.tenant, monitor_id, at, None, stored.last_run_ms)
    except (StorageUnavailable, TooManyJobs):
        # The monitor changed since it was read: another run was claimed (the 409 names it:
        # it is refused whatever room the tenant has), or it was deleted (a 404).
        _refuse_while_running(get(identity, monitor_id)[1], at)
        raise
    if not started:  # a job of this run's id was there: another request's, at this time
        _refuse_while_running(get(identity, monitor_id)[1], at)
        raise Conflict("a run of this monitor was started in this same millisecond; retry")
    return run_id(monitor_id, at)


def _refuse_while_running(stored: StoredMonitor, at_ms: int) -> None:
    running = _running(stored, at_ms)
    if running is None:
        return
    monitor_id = stored.monitor_id
    rid = run_id(monitor_id, running.scheduled_ms)
    how = "asked for" if running.manual else "scheduled"
    raise AlreadyRunning(
        f"monitor {monitor_id!r} is running its run {rid!r} ({how}, for "
        f"{format_ms(running.scheduled_ms)}), and runs one run at a time: follow that run with "
        f"GET /monitors/{monitor_id}/history, and ask again once it has ended",
        "run_id",
        rid,
    )
