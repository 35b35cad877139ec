"""Monitors (E8): evaluation that runs on its own.

    create     POST /monitors: every field checked (models.monitors), then what needs a read:
               the metrics set (a question the judge answers requires max_cost_usd), a fixed
               baseline (a complete result of the tenant's), the webhook's addresses
    dispatch   each minute (an EventBridge rule; the local server's clock): every due monitor's
               run claimed once (storage.monitors.claim_run) and started

Runs missed while nothing dispatched (an outage) are not made up: the claim moves the next
run to the first scheduled time after now, so a monitor never runs in a burst.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from evalsvc import schedules, webhook_targets
from evalsvc.errors import Conflict, InvalidInput, NotFound
from evalsvc.identifiers import check_client_id, new_id, now_ms
from evalsvc.logic import metrics as metrics_logic
from evalsvc.models.api_keys import Identity
from evalsvc.models.jobs import Status
from evalsvc.models.metrics import is_check
from evalsvc.models.monitors import MonitorIn
from evalsvc.observability import logger
from evalsvc.settings import get_settings
from evalsvc.storage import monitors as store
from evalsvc.storage import results as results_store

PREVIOUS = "previous"


@dataclass(frozen=True, slots=True)
class Created:
    monitor_id: str
    next_run_ms: int


def create(identity: Identity, body: MonitorIn, *, at_ms: int | None = None) -> Created:
    """Store the monitor `body` asks for, scheduled from now (`at_ms`); its id and first run."""
    tenant = identity.tenant
    metrics_set = metrics_logic.get_metrics_set(identity, body.metrics_id)
    if body.max_cost_usd is None and not all(is_check(d) for d in metrics_set.definitions):
        raise InvalidInput(
            f"max_cost_usd is required: metrics set {metrics_set.metrics_id!r} has a question "
            "the judge answers, and every run spends on it (POST /evaluate/estimate gives a "
            "run's bound)"
        )
    if body.baseline != PREVIOUS:
        baseline = results_store.get(tenant, body.baseline)
        if baseline is None:
            raise NotFound(f"no evaluation result with id {body.baseline!r} to be the baseline")
        if baseline.status is not Status.COMPLETE:
            raise Conflict(
                f"evaluation {body.baseline!r} is {baseline.status.value}: a baseline must be "
                "complete"
            )
    if body.webhook_url is not None:
        webhook_targets.check(body.webhook_url, allow_local=get_settings().allow_local_webhooks)
    schedule = schedules.parse(body.schedule)
    created = now_ms() if at_ms is None else at_ms
    first = schedules.next_after(schedule, created, created)
    assert first is not None  # parse refuses a schedule with no run
    monitor_id = new_id("mon_")
    stored = store.StoredMonitor(
        tenant,
        monitor_id,
        json.dumps(body.model_dump(mode="json", exclude_none=True), separators=(",", ":")),
        created,
        first,
    )
    if not store.put_monitor(stored):
        raise Conflict(f"monitor id {monitor_id!r} is taken; send the request again")
    logger.info("monitor created", extra={"monitor_id": monitor_id, "next_run_ms": first})
    return Created(monitor_id, first)


def get(identity: Identity, monitor_id: str) -> tuple[MonitorIn, store.StoredMonitor]:
    """The monitor as asked for, and as stored (its next run); 404 when the tenant has none."""
    check_client_id(monitor_id, "monitor id")
    stored = store.get_monitor(identity.tenant, monitor_id)
    if stored is None:
        raise NotFound(f"no monitor with id {monitor_id!r}")
    return MonitorIn.model_validate_json(stored.body, strict=False), stored


@dataclass(frozen=True, slots=True)
class Claimed:
    """A run claimed by this dispatch: the monitor's, scheduled for `scheduled_ms`."""

    tenant: str
    monitor_id: str
    scheduled_ms: int


def dispatch(at_ms: int, start: Callable[[Claimed], None]) -> list[Claimed]:
    """Claim the run of every monitor due at `at_ms` and `start` each claimed: the runs this
    dispatch claimed (none that another dispatch, or an earlier delivery of this one, did)."""
    claimed = []
    for due in store.due(at_ms):
        stored = store.get_monitor(due.tenant, due.monitor_id)
        if stored is None:
            continue  # deleted since the index was read
        schedule = schedules.parse(json.loads(stored.body)["schedule"])
        following = schedules.next_after(schedule, max(at_ms, due.scheduled_ms), stored.created_ms)
        assert following is not None
        if not store.claim_run(due.tenant, due.monitor_id, due.scheduled_ms, following):
            continue
        run = Claimed(due.tenant, due.monitor_id, due.scheduled_ms)
        claimed.append(run)
        start(run)
    return claimed
