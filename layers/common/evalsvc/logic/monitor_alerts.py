"""A monitor run's alert (E8): a run that regressed or failed posts, once, to its monitor's
webhook. The run's outcome made the alert pending (storage.monitors: an outbox); whoever
delivers it leases it first, so it is posted by one at a time: the worker that ended the run,
at once, or the dispatcher, when that worker died before it could (after the lease).

    {"monitor_id", "run_id", "result_id", "baseline_id", "regressed": [metric...], "failure"}

signed with the monitor's webhook_secret (X-Evalsvc-Signature), to the addresses its URL
resolves to now, checked again (a name that came to resolve to a private address is not posted
to). One delivery makes up to 3 attempts (webhooks.deliver); what became of it is kept on the
run. A lease whose holder died is taken again, at most MAX_LEASES times in all.
"""

from __future__ import annotations

import json
from typing import Any

from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import now_ms
from evalsvc.core.observability import logger, metrics
from evalsvc.core.settings import get_settings
from evalsvc.models.monitors import MonitorIn, Run, run_id
from evalsvc.monitoring import webhook_targets, webhooks
from evalsvc.storage import monitors as store
from evalsvc.storage import results as results_store

# How long a delivery holds its alert: 3 attempts of 5 s with backoff take under a minute.
LEASE_MS = 5 * 60_000
MAX_LEASES = 3


def body_of(run: Run) -> dict[str, Any]:
    """The JSON an alert posts."""
    regressed: list[str] = []
    if run.regressed and run.result_id:
        result = results_store.get(run.tenant, run.result_id)
        definitions = result.definitions if result else []
        regressed = [
            definitions[k] if k < len(definitions) else f"metric {k}" for k in run.regressed
        ]
    return {
        "monitor_id": run.monitor_id,
        "run_id": run_id(run.monitor_id, run.scheduled_ms),
        "result_id": run.result_id,
        "baseline_id": run.baseline_id,
        "regressed": regressed,
        "failure": run.failure,
    }


def deliver_if_due(tenant: str, monitor_id: str, scheduled_ms: int) -> None:
    """Deliver the run's alert now if it is pending and nobody holds it."""
    run = store.get_run(tenant, monitor_id, scheduled_ms)
    if run is None or run.alert is None or run.alert.status != "pending":
        return
    if run.alert.due_ms is not None:
        deliver(tenant, monitor_id, scheduled_ms, run.alert.due_ms)


def deliver(tenant: str, monitor_id: str, scheduled_ms: int, due_ms: int) -> str | None:
    """Take the run's alert (seen due at `due_ms`) and post it; what became of it, or None
    when it was not this caller's to deliver (not yet due, or taken by another)."""
    now = now_ms()
    if due_ms > now:
        return None
    run = store.lease_alert(tenant, monitor_id, scheduled_ms, due_ms, now + LEASE_MS)
    if run is None or run.alert is None:
        return None
    if run.alert.leases > MAX_LEASES:
        store.alert_outcome(tenant, monitor_id, scheduled_ms, "failed", 0, None)
        logger.warning("alert given up", extra={"monitor_id": monitor_id, "run": scheduled_ms})
        return "failed"
    stored = store.get_monitor(tenant, monitor_id)
    monitor = None if stored is None else MonitorIn.from_stored(stored.body)
    if monitor is None or monitor.webhook_url is None or monitor.webhook_secret is None:
        store.alert_outcome(tenant, monitor_id, scheduled_ms, "failed", 0, None)
        return "failed"
    try:
        target = webhook_targets.check(
            monitor.webhook_url, allow_local=get_settings().allow_local_webhooks
        )
    except InvalidInput as exc:
        logger.warning("alert not posted", extra={"monitor_id": monitor_id, "why": exc.message})
        store.alert_outcome(tenant, monitor_id, scheduled_ms, "failed", 0, None)
        return "failed"
    payload = json.dumps(body_of(run), separators=(",", ":"), ensure_ascii=False).encode()
    delivery = webhooks.deliver(target, payload, monitor.webhook_secret)
    store.alert_outcome(
        tenant, monitor_id, scheduled_ms, delivery.status, delivery.attempts, delivery.http_status
    )
    metrics.add_metric(
        name="AlertsDelivered" if delivery.status == "delivered" else "AlertsFailed",
        unit="Count",
        value=1,
    )
    logger.info(
        "alert posted",
        extra={
            "monitor_id": monitor_id,
            "run": scheduled_ms,
            "status": delivery.status,
            "attempts": delivery.attempts,
            "http_status": delivery.http_status,
            "error": delivery.error,
        },
    )
    return delivery.status
