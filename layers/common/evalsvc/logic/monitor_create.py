"""Creating a monitor (E8), POST /monitors: every field checked (models.monitors), then what
needs a read: the metrics set (a question the judge answers requires max_cost_usd), the seed
dataset, a fixed baseline (a complete result of the tenant's), the webhook's addresses.

Apart from logic.monitors because of those reads: the metrics sets (with the checks' parsing)
and the evaluation results are what no other monitor route imports at its start."""

from __future__ import annotations

import json
from dataclasses import dataclass

from evalsvc.core.errors import Conflict, InvalidInput, NotFound
from evalsvc.core.identifiers import new_id, now_ms
from evalsvc.core.observability import logger
from evalsvc.core.settings import get_settings
from evalsvc.logic import datasets as datasets_logic
from evalsvc.logic import metric_sets, monitors
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind
from evalsvc.models.jobs import Status
from evalsvc.models.metric_sets import is_check
from evalsvc.models.monitors import PREVIOUS, MonitorIn, StoredMonitor
from evalsvc.monitoring import schedules, webhook_targets
from evalsvc.spending.prices import price_of
from evalsvc.storage import monitors as store


@dataclass(frozen=True, slots=True)
class Created:
    monitor_id: str
    next_run_ms: int


def create(identity: Identity, body: MonitorIn, *, at_ms: int | None = None) -> Created:
    """Store the monitor `body` asks for, scheduled from now (`at_ms`); its id and first run."""
    tenant = identity.tenant
    if len(store.list_monitors(tenant)) >= monitors.MAX_MONITORS:
        raise Conflict(
            f"this tenant has {monitors.MAX_MONITORS} monitors, as many as it may keep: delete one "
            "(DELETE /monitors/{id}) before creating another"
        )
    metrics_set = metric_sets.get_metrics_set(identity, body.metrics_id)
    # A dataset that is not there is a 404 now, as an unknown metrics set is, rather than a
    # monitor whose every run fails.
    dataset_id = datasets_logic.resolve_dataset_id(identity, DatasetKind.SEED, body.seed_data_id)
    datasets_logic.ensure_exists(identity, DatasetKind.SEED, dataset_id)
    if not all(is_check(d) for d in metrics_set.definitions):
        _check_judged(metrics_set.metrics_id, body)
    if body.baseline != PREVIOUS:
        # Imported on first use: only a monitor with a fixed baseline reads a result (the
        # default baseline, the previous run, reads none); the stored results and their models
        # would otherwise be part of every start.
        from evalsvc.storage import results as results_store

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
    stored = StoredMonitor(
        tenant,
        monitor_id,
        json.dumps(
            body.model_dump(mode="json", exclude_none=True),
            separators=(",", ":"),
            ensure_ascii=False,
        ),
        created,
        first,
    )
    if not store.put_monitor(stored):
        raise Conflict(f"monitor id {monitor_id!r} is taken; send the request again")
    logger.info("monitor created", extra={"monitor_id": monitor_id, "next_run_ms": first})
    return Created(monitor_id, first)


def _check_judged(metrics_id: str, body: MonitorIn) -> None:
    """A monitor of questions the judge answers runs only with a cap, and a judge whose price
    bounds each run by it: refused now rather than failing every run."""
    if body.max_cost_usd is None:
        raise InvalidInput(
            f"max_cost_usd is required: metrics set {metrics_id!r} has a question the judge "
            "answers, and every run spends on it (POST /evaluate/estimate gives a run's bound)"
        )
    model = get_settings().llm.strip()
    if not model:
        raise InvalidInput(
            f"metrics set {metrics_id!r} has a question the judge answers, and no judge is "
            "configured (EVALSVC_LLM): watch a metrics set of checks only, or ask the operator "
            "to configure one"
        )
    if price_of(model) is None:
        raise InvalidInput(
            f"the judge {model!r} has no price, so no run can be held to max_cost_usd: ask the "
            "operator to price the model (EVALSVC_PRICES), or watch a metrics set of checks only"
        )
