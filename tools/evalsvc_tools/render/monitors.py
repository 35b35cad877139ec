"""Monitors' tables (E8, `evalsvc monitors`): the tenant's monitors, one run, a history of runs;
and how a run's times, means, verdicts and alert are written."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from evalsvc_tools.render.comparison import VERDICTS
from evalsvc_tools.render.figures import (
    FIELD_WIDTH,
    METRIC_WIDTH,
    MISSING,
    field,
    format_figure,
    money,
    rows,
)
from evalsvc_tools.terminal import cut

if TYPE_CHECKING:
    from rich.console import Console

# How a run's status is shown, and its style.
RUN_STATUSES = {
    "claimed": ("starting", "yellow"),
    "running": ("running", "yellow"),
    "complete": ("complete", ""),
    "failed": ("failed", "bold red"),
}
# How much of a failure a history's row shows (the whole of it is in --json).
FAILURE_WIDTH = 80
MONITOR_METRIC_WIDTH = 28
_ISO_UTC = re.compile(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z")


def format_when(value: Any, zone: str = " UTC") -> str:
    """A time the service gave (ISO 8601 UTC, as it writes them) as `2026-11-28 04:50:55 UTC`
    (`zone` after it); anything else as it came, on one line and terminal-safe."""
    match = _ISO_UTC.fullmatch(value) if isinstance(value, str) else None
    return f"{match.group(1)} {match.group(2)}{zone}" if match else field(value)


def format_mean(metric: dict[str, Any]) -> str:
    """A run's metric as `4.20 [3.50, 4.90]`: its mean and interval."""
    return (
        f"{format_figure(metric.get('mean'))} [{format_figure(metric.get('ci_low'))}, "
        f"{format_figure(metric.get('ci_high'))}]"
    )


def run_verdict(value: Any) -> tuple[str, str]:
    """A run's metric's verdict against its baseline, as shown, and its style."""
    if value is None:
        return "no baseline", "dim"
    return VERDICTS.get(str(value), (cut(str(value), 30), ""))


def describe_alert(webhook: Any) -> str:
    """What became of a run's alert (its `webhook`), in a few words: terminal-safe."""
    if not isinstance(webhook, dict):
        return "none"
    status = str(webhook.get("status"))
    attempts = webhook.get("attempts")
    answered = webhook.get("http_status")
    tries = (
        f"{attempts} attempt{'' if attempts == 1 else 's'}"
        if isinstance(attempts, int) and not isinstance(attempts, bool)
        else "attempts -"
    )
    got = f"HTTP {field(answered)}" if answered is not None else "no answer"
    if status == "pending":
        return f"pending ({tries} so far)"
    return f"{cut(status, 30)} ({got}, {tries})"


def short_alert(webhook: Any) -> str:
    """What became of a run's alert, in a history's row: `delivered 204`, `failed 500`,
    `pending`, `none`."""
    if not isinstance(webhook, dict):
        return "none"
    answered = webhook.get("http_status")
    return cut(str(webhook.get("status")), 30) + (f" {field(answered)}" if answered else "")


def _run_metrics(run: dict[str, Any]) -> list[dict[str, Any]]:
    return rows(run, "metrics")


def regressed_run_metrics(run: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics of a monitor run whose verdict against its baseline is regressed."""
    return [m for m in _run_metrics(run) if m.get("verdict") == "regressed"]


def _pairs_asked(query: Any) -> str:
    """Which pairs a monitor's runs evaluate (its pair_query), in a few words."""
    query = query if isinstance(query, dict) else {}
    labels = query.get("pair_labels")
    newest = query.get("latest_n_pairs")
    seconds = query.get("last_n_seconds")
    said = [
        *([f"newest {field(newest)}"] if newest is not None else []),
        *([f"labels {cut(', '.join(map(str, labels)), 40)}"] if isinstance(labels, list) else []),
        *([f"last {field(seconds)} s"] if seconds is not None else []),
    ]
    return "; ".join(said) or "all pairs"


def render_monitors(body: dict[str, Any], console: Console) -> None:
    """The tenant's monitors (GET /monitors), a row of two lines each: the id (whole, to be
    copied) and name; the dataset, with which pairs, and the metrics set; the schedule and
    next run; the baseline and the webhook."""
    from rich.table import Table
    from rich.text import Text

    monitors = rows(body, "monitors")
    if not monitors:
        console.print("no monitors (evalsvc monitors create makes one)")
        return
    # The ids are copied: kept on one line while they fit; the other columns wrap first.
    table = Table(show_lines=True)
    table.add_column("monitor\nname", no_wrap=True)
    table.add_column("dataset (pairs)\nmetrics set", no_wrap=True)
    table.add_column("schedule\nnext run (UTC)", overflow="fold")
    table.add_column("baseline\nwebhook", overflow="fold")
    for monitor in monitors:
        webhook = monitor.get("webhook_url")
        table.add_row(
            Text(f"{field(monitor.get('monitor_id'))}\n{cut(str(monitor.get('name')), 36)}"),
            Text(
                f"{field(monitor.get('seed_data_id'))} "
                f"({_pairs_asked(monitor.get('pair_query'))})\n{field(monitor.get('metrics_id'))}"
            ),
            Text(
                f"{field(monitor.get('schedule'))}\n{format_when(monitor.get('next_run_at'), '')}"
            ),
            Text(f"{field(monitor.get('baseline'))}\n{field(webhook) if webhook else 'none'}"),
        )
    console.print(table)


def render_monitor_run(run: dict[str, Any], console: Console) -> None:
    """One run of a monitor (an entry of GET /monitors/{id}/history): what it evaluated and
    against what, each metric's mean, interval and verdict, its cost and its alert."""
    from rich.table import Table
    from rich.text import Text

    status = str(run.get("status"))
    shown, _ = RUN_STATUSES.get(status, (cut(status, 30), ""))
    baseline = run.get("baseline_id")
    against = (
        f"against baseline {field(baseline)} ({field(run.get('pairs_matched'))} pairs matched)"
        if baseline
        else "no baseline (nothing to compare with yet)"
    )
    console.print(
        Text(
            f"monitor run {field(run.get('run_id'))}: {shown}"
            f"{' (run by hand)' if run.get('manual') is True else ''}, scheduled for "
            f"{format_when(run.get('scheduled_for'))}\n"
            f"evaluation {field(run.get('result_id'))} {against}"
        )
    )
    metrics = _run_metrics(run)
    if metrics:
        table = Table()
        table.add_column("metric", max_width=METRIC_WIDTH, overflow="ellipsis", no_wrap=True)
        table.add_column(Text("mean [interval]"), justify="right")  # Text: no markup
        table.add_column("verdict", no_wrap=True)
        for metric in metrics:
            verdict, style = run_verdict(metric.get("verdict"))
            table.add_row(
                Text(cut(str(metric.get("metric")), METRIC_WIDTH)),
                format_mean(metric),
                Text(verdict, style=style),
            )
        console.print(table)
    failure = run.get("failure")
    if failure:
        console.print(Text(f"failure: {cut(str(failure), FIELD_WIDTH)}"))
    cost = run.get("cost_usd")
    alert = run.get("webhook")
    console.print(
        Text(
            f"cost {money(cost) if cost is not None else 'unknown'}; alert "
            + (describe_alert(alert) if alert is not None else "none (no webhook, or no cause)")
        )
    )


def _metric_name(metric: dict[str, Any]) -> str:
    return cut(str(metric.get("metric")), MONITOR_METRIC_WIDTH)


def _history_metrics(run: dict[str, Any], width: int) -> Any:
    """A history row's metrics cell: a line each (definition, in `width` characters, mean
    [interval], verdict), and the failure of a run that failed."""
    from rich.text import Text

    cell = Text()
    for number, metric in enumerate(_run_metrics(run)):
        verdict, style = run_verdict(metric.get("verdict"))
        if number:
            cell.append("\n")
        cell.append(f"{_metric_name(metric).ljust(width)}  {format_mean(metric)}  ")
        cell.append(verdict, style=style)
    failure = run.get("failure")
    if failure:
        if cell:
            cell.append("\n")
        cell.append(cut(str(failure), FAILURE_WIDTH), style="red")
    return cell if cell else Text(MISSING)


def render_history(body: dict[str, Any], console: Console) -> None:
    """A monitor's runs (GET /monitors/{id}/history), newest first: a row each."""
    from rich.table import Table
    from rich.text import Text

    runs = rows(body, "runs")
    if not runs:
        console.print("no runs yet")
        return
    table = Table()
    table.add_column("scheduled for (UTC)", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column(Text("metric  mean [interval]  verdict"))
    table.add_column("cost", justify="right", no_wrap=True)
    table.add_column("alert")
    width = max((len(_metric_name(m)) for r in runs for m in _run_metrics(r)), default=0)
    for run in runs:
        status = str(run.get("status"))
        shown, style = RUN_STATUSES.get(status, (cut(status, 30), ""))
        table.add_row(
            Text(format_when(run.get("scheduled_for"), "")),
            Text(shown + (" (by hand)" if run.get("manual") is True else ""), style=style),
            _history_metrics(run, width),
            Text(money(run.get("cost_usd")) if run.get("cost_usd") is not None else MISSING),
            Text(short_alert(run.get("webhook"))),
        )
    console.print(table)
