"""How monitors (E8) and their runs are answered: the API's JSON for what logic.monitors returns
(never a webhook's secret)."""

from __future__ import annotations

from evalsvc.core.identifiers import format_ms
from evalsvc.models.monitors import (
    MonitorIn,
    MonitorOut,
    Run,
    RunMetricOut,
    RunOut,
    StoredMonitor,
    WebhookOut,
    run_id,
)


def monitor_out(asked: MonitorIn, stored: StoredMonitor) -> MonitorOut:
    return MonitorOut(
        monitor_id=stored.monitor_id,
        name=asked.name,
        seed_data_id=asked.seed_data_id,
        metrics_id=asked.metrics_id,
        schedule=asked.schedule,
        pair_query=asked.pair_query,
        baseline=asked.baseline,
        alpha=asked.alpha,
        regression_threshold=asked.regression_threshold,
        max_cost_usd=asked.max_cost_usd,
        webhook_url=asked.webhook_url,
        created_at=format_ms(stored.created_ms),
        next_run_at=format_ms(stored.next_run_ms),
    )


def run_out(run: Run, definitions: list[str]) -> RunOut:
    alert = run.alert
    return RunOut(
        run_id=run_id(run.monitor_id, run.scheduled_ms),
        scheduled_for=format_ms(run.scheduled_ms),
        status=run.status,
        manual=run.manual,
        result_id=run.result_id,
        baseline_id=run.baseline_id,
        metrics=[
            RunMetricOut(
                metric=definitions[m.index] if m.index < len(definitions) else f"metric {m.index}",
                mean=m.mean,
                ci_low=m.ci_low,
                ci_high=m.ci_high,
                verdict=m.verdict,
                pairs_regressed=m.pairs_regressed,
            )
            for m in run.metrics
        ],
        pairs_matched=run.pairs_matched,
        cost_usd=None if run.cost_usd is None else float(run.cost_usd),
        failure=run.failure,
        webhook=None
        if alert is None
        else WebhookOut(
            status=alert.status, attempts=alert.attempts, http_status=alert.http_status
        ),
    )
