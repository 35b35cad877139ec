"""The tables the user's commands draw with rich: an evaluation result's, per metric, with what
produced it (`evalsvc evaluate`, `evalsvc rerun`), a comparison's, per metric with the pairs
that regressed most (`evalsvc compare`), and pairwise judging's leaderboard and matchups
(`evalsvc pairwise`), and monitors' lists, runs and histories (`evalsvc monitors`); and how a
figure is written in them. rich is imported when a table is drawn.

Every value the service gave reaches the console as a rich `Text` of terminal-safe text
(terminal.cut): never as markup, which rich would read (`[link=…]` makes a terminal link), and
never with a control character, which rich passes on (ESC starts every escape sequence)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from evalsvc_tools.terminal import cut

if TYPE_CHECKING:
    from rich.console import Console

# How much of a metric's definition a table shows, and how many regressions are listed.
METRIC_WIDTH = 40
LOWEST_SHOWN = 3
REGRESSIONS_SHOWN = 10
REASON_WIDTH = 60
# How much of a pair id, or of any other value the service gave, a line shows (an id is at
# most 128 characters).
PAIR_ID_WIDTH = 128
FIELD_WIDTH = 200
# A figure the service gave as null (too few pairs for it).
MISSING = "-"


def format_figure(value: Any, digits: int = 2) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return f"{value:.{digits}f}"


def format_signed(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return f"{value:+.2f}"


def format_p_value(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def _field(value: Any) -> str:
    """A value the service gave, to put in a line: on one line and terminal-safe."""
    return cut(str(value), FIELD_WIDTH)


def _lowest(pairs: Any) -> str:
    if not isinstance(pairs, list) or not pairs:
        return MISSING
    shown = [
        f"{cut(str(p.get('pair_id')), PAIR_ID_WIDTH)} {format_figure(p.get('score'), 1)}"
        for p in pairs[:LOWEST_SHOWN]
        if isinstance(p, dict)
    ]
    more = len(pairs) - LOWEST_SHOWN
    return ", ".join(shown) + (f" (+{more})" if more > 0 else "")


def _at(values: Any, index: int) -> Any:
    return values[index] if isinstance(values, list) and index < len(values) else None


def _money(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "cost unknown (no price)"
    return f"${value:.6f}"


def _print_usage(usage: Any, console: Console) -> None:
    """The line of E3's usage, when any LLM call was made or found in the cache."""
    from rich.text import Text

    if isinstance(usage, dict) and (usage.get("llm_calls") or usage.get("cache_hits")):
        console.print(
            Text(
                f"LLM: {_field(usage.get('llm_calls'))} calls, {_field(usage.get('cache_hits'))} "
                f"cache hits, {_field(usage.get('input_tokens'))} input and "
                f"{_field(usage.get('output_tokens'))} output tokens, "
                f"{_money(usage.get('cost_usd'))} ({_field(usage.get('model'))})"
            )
        )


def _print_inputs(result: dict[str, Any], console: Console) -> None:
    """The lines of what produced the result (E7's `inputs`), when the service gives them;
    "not recorded" when it says it did not keep them (null)."""
    from rich.text import Text

    if "inputs" not in result:
        return
    inputs = result.get("inputs")
    if not isinstance(inputs, dict):
        console.print(Text("what produced it: not recorded (stored before results kept it)"))
        return
    samples = inputs.get("judge_samples")
    judged = (
        f"judge {_field(inputs.get('judge_model'))}, prompt "
        f"{_field(inputs.get('judge_prompt_version'))}, {_field(samples)} "
        f"sample{'' if samples == 1 else 's'}"
        if inputs.get("judge_model")
        else "no judge"
    )
    # A line each digest (64 characters), so that an 80-column terminal breaks none.
    console.print(
        Text(
            f"what produced it: dataset {_field(inputs.get('dataset_id'))}, version "
            f"{_field(inputs.get('dataset_version'))}; metrics set "
            f"{_field(inputs.get('metrics_id'))}\n"
            f"  pairs_digest {_field(inputs.get('pairs_digest') or 'not counted yet')}\n"
            f"  definitions {_field(inputs.get('definitions_sha256'))}\n"
            f"  {judged}\n"
            f"  service {_field(inputs.get('service_version'))}, prices of "
            f"{_field(inputs.get('prices_date'))}"
        )
    )


def render_evaluation(result: dict[str, Any], console: Console) -> None:
    """The per-metric table of a complete evaluation result (GET /evaluation/{id})."""
    from rich.table import Table
    from rich.text import Text

    pairs = _field(result.get("pair_count", result.get("pairs_total")))
    console.print(
        Text(
            f"evaluation {_field(result.get('results_id'))}: {pairs} pairs of dataset "
            f"{_field(result.get('dataset_id'))}\nmetrics {_field(result.get('metrics_id'))}, "
            f"created {_field(result.get('created_at'))}"
        )
    )
    _print_usage(result.get("usage"), console)
    _print_inputs(result, console)
    intervals = result.get("score_confidence_intervals")
    first = _at(intervals, 0)
    confidence = first.get("ci_confidence") if isinstance(first, dict) else None
    level = f"{100 * confidence:g}%" if isinstance(confidence, int | float) else "95%"
    table = Table(show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("metric", max_width=METRIC_WIDTH, overflow="ellipsis", no_wrap=True)
    table.add_column("mean", justify="right")
    table.add_column(f"{level} interval", justify="right")
    clustered = result.get("score_clustered")
    if isinstance(clustered, list):
        by = _field(result.get("cluster_by"))
        table.add_column(Text(f"clustered by {by}"), justify="right")
        table.add_column("clusters", justify="right")
    noise = result.get("score_judge_noise_sds")
    samples = result.get("judge_samples")
    sampled = isinstance(samples, int) and samples > 1 and isinstance(noise, list)
    if sampled:
        table.add_column(f"judge sd (k={samples})", justify="right")
    table.add_column("median", justify="right")
    table.add_column("n", justify="right")
    table.add_column("lowest pairs (score)")
    definitions = result.get("metrics_definitions")
    for index, definition in enumerate(definitions if isinstance(definitions, list) else []):
        interval = _at(intervals, index)
        low = interval.get("ci_low") if isinstance(interval, dict) else None
        high = interval.get("ci_high") if isinstance(interval, dict) else None
        extra: list[str | Text] = []
        if isinstance(clustered, list):
            figures = _at(clustered, index)
            figures = figures if isinstance(figures, dict) else {}
            wide_low, wide_high = figures.get("ci_low_clustered"), figures.get("ci_high_clustered")
            extra.append(
                f"[{format_figure(wide_low)}, {format_figure(wide_high)}]"
                if wide_low is not None and wide_high is not None
                else "—"
            )
            extra.append(Text(_field(figures.get("clusters"))))
        if sampled:
            extra.append(format_figure(_at(noise, index)))
        # Text, not markup: the service's text is shown as it is, never read as rich markup
        # (which could make a link) or emoji codes.
        table.add_row(
            str(index),
            Text(cut(str(definition), METRIC_WIDTH)),
            format_figure(_at(result.get("score_means"), index)),
            f"[{format_figure(low)}, {format_figure(high)}]",
            *extra,
            format_figure(_at(result.get("score_medians"), index)),
            Text(pairs),
            Text(_lowest(_at(result.get("min_scoring_pairs"), index))),
        )
    console.print(table)


# How each verdict is shown, and its style.
VERDICTS = {
    "improved": ("improved", "green"),
    "regressed": ("regressed", "bold red"),
    "no_significant_difference": ("not significant", ""),
    "insufficient_data": ("too few pairs", "yellow"),
}


def render_comparison(comparison: dict[str, Any], console: Console) -> None:
    """The per-metric table of a POST /compare answer, and the pairs that regressed most."""
    from rich.table import Table
    from rich.text import Text

    alpha = comparison.get("alpha")
    level = f"{100 * (1 - alpha):g}%" if isinstance(alpha, int | float) else "interval"
    cluster_by = comparison.get("cluster_by")
    console.print(
        Text(
            f"baseline {_field(comparison.get('baseline_id'))} → candidate "
            f"{_field(comparison.get('candidate_id'))}\n"
            f"{_field(comparison.get('pairs_matched'))} pairs matched "
            f"({_field(comparison.get('only_in_baseline'))} only in the baseline, "
            f"{_field(comparison.get('only_in_candidate'))} only in the candidate); "
            f"alpha {_field(alpha)}, correction {_field(comparison.get('correction'))}"
            + (f", clustered by {_field(cluster_by)}" if cluster_by else "")
        )
    )
    table = Table()
    table.add_column("metric", max_width=METRIC_WIDTH, overflow="ellipsis", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("baseline", justify="right")
    table.add_column("candidate", justify="right")
    table.add_column(f"diff ({level} interval)", justify="right")
    if cluster_by:
        table.add_column("clustered interval (clusters)", justify="right")
    table.add_column("p adj.", justify="right")
    table.add_column("W/T/L", justify="right")
    table.add_column("verdict", no_wrap=True)
    table.add_column("mde", justify="right")
    metrics = comparison.get("metrics")
    for metric in metrics if isinstance(metrics, list) else []:
        if not isinstance(metric, dict):
            continue
        verdict = str(metric.get("verdict"))
        shown, style = VERDICTS.get(verdict, (cut(verdict, 30), ""))
        counts = (
            f"{_field(metric.get('wins'))}/{_field(metric.get('ties'))}/"
            f"{_field(metric.get('losses'))}"
        )
        clustered = (
            [
                f"[{format_signed(metric.get('ci_low_clustered'))}, "
                f"{format_signed(metric.get('ci_high_clustered'))}] "
                f"({_field(metric.get('clusters'))})"
            ]
            if cluster_by
            else []
        )
        table.add_row(
            Text(cut(str(metric.get("metric")), METRIC_WIDTH)),
            Text(_field(metric.get("n"))),
            format_figure(metric.get("baseline_mean")),
            format_figure(metric.get("candidate_mean")),
            f"{format_signed(metric.get('mean_diff'))} [{format_signed(metric.get('ci_low'))}, "
            f"{format_signed(metric.get('ci_high'))}]",
            *clustered,
            format_p_value(metric.get("p_adjusted")),
            Text(counts),
            Text(shown, style=style),
            format_figure(metric.get("mde")),
        )
    console.print(table)
    console.print(
        "mde: the smallest mean difference this comparison had an 80% chance to detect "
        "(evalsvc plan says how many pairs a smaller one needs)"
    )
    regressions = comparison.get("regressions")
    if not isinstance(regressions, list) or not regressions:
        console.print("no pair regressed on any metric")
        return
    console.print(f"pairs that regressed most ({len(regressions)} listed by the service):")
    for change in regressions[:REGRESSIONS_SHOWN]:
        if not isinstance(change, dict):
            continue
        reason = cut(str(change.get("candidate_reason") or ""), REASON_WIDTH)
        line = (
            f"  {cut(str(change.get('pair_id')), PAIR_ID_WIDTH)}  "
            f"{cut(str(change.get('metric')), 40)}  "
            f"{format_figure(change.get('baseline_score'))} → "
            f"{format_figure(change.get('candidate_score'))} "
            f"({format_signed(change.get('diff'))})"
        )
        console.print(Text(line + (f"  {reason}" if reason else "")))
    if len(regressions) > REGRESSIONS_SHOWN:
        console.print(f"  … and {len(regressions) - REGRESSIONS_SHOWN} more (--json shows all)")


def render_plan(plan: dict[str, Any], console: Console) -> None:
    """The per-metric table of a POST /plan answer: the sd it planned with and the pairs
    needed."""
    from rich.table import Table
    from rich.text import Text

    candidate = plan.get("candidate_id")
    design = (
        f"paired: baseline {_field(plan.get('baseline_id'))} with candidate {_field(candidate)}"
        if candidate
        else f"two independent runs, from baseline {_field(plan.get('baseline_id'))} "
        "(pairs needed in each run)"
    )
    console.print(
        Text(
            f"to detect a mean difference of {_field(plan.get('effect'))} with power "
            f"{_field(plan.get('power'))} at alpha {_field(plan.get('alpha'))}; {design}"
        )
    )
    table = Table()
    table.add_column("metric", max_width=METRIC_WIDTH, overflow="ellipsis", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("sd", justify="right")
    table.add_column("pairs needed", justify="right")
    metrics = plan.get("metrics")
    for metric in metrics if isinstance(metrics, list) else []:
        if not isinstance(metric, dict):
            continue
        needed = metric.get("pairs_needed")
        table.add_row(
            Text(cut(str(metric.get("metric")), METRIC_WIDTH)),
            Text(_field(metric.get("n"))),
            format_figure(metric.get("sd"), 3),
            Text(
                f"{needed:,}"
                if isinstance(needed, int) and not isinstance(needed, bool)
                else "- (too few pairs to estimate the sd)"
            ),
        )
    console.print(table)


# ---- pairwise judging (E5) ---------------------------------------------------------------------

# How each matchup's verdict is shown, and its style.
MATCHUP_VERDICTS = {
    "a_better": ("a better", "green"),
    "b_better": ("b better", "green"),
    "no_significant_difference": ("not significant", ""),
}


def format_percent(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return f"{100 * value:.1f}%"


def describe_estimate(estimate: dict[str, Any]) -> str:
    """E3's estimate (POST /pairwise/estimate, or any other), as lines to print: terminal-safe."""
    expected = estimate.get("cost_usd_expected")
    most = estimate.get("cost_usd_max")
    model = _field(estimate.get("model"))
    if isinstance(most, int | float) and not isinstance(most, bool):
        cost = f"cost {_money(expected)} expected, at most {_money(most)} ({model})"
    else:
        cost = f"cost unknown: the model {model} has no price"
    return (
        f"estimate: {_field(estimate.get('pairs'))} pairs, "
        f"{_field(estimate.get('llm_calls'))} LLM calls "
        f"({_field(estimate.get('cached_calls'))} of them cached), at most "
        f"{_field(estimate.get('input_tokens_max'))} input and "
        f"{_field(estimate.get('output_tokens_max'))} output tokens\n{cost}"
    )


def _rows(body: dict[str, Any], name: str) -> list[dict[str, Any]]:
    rows = body.get(name)
    return [row for row in rows if isinstance(row, dict)] if isinstance(rows, list) else []


def _run(value: Any) -> Any:
    from rich.text import Text

    return Text(cut(str(value), PAIR_ID_WIDTH))


def render_pairwise(body: dict[str, Any], console: Console) -> None:
    """A complete pairwise judging (GET /pairwise/{id}): what was judged, the leaderboard, the
    matchups, and how often the judge chose the output shown first."""
    from rich.table import Table
    from rich.text import Text

    runs = body.get("result_ids")
    both = body.get("both_orders")
    orders = "both orders" if both is True else "one order" if both is False else "orders -"
    console.print(
        Text(
            f"pairwise judging {_field(body.get('pairwise_id'))}: "
            f"{len(runs) if isinstance(runs, list) else MISSING} runs over "
            f"{_field(body.get('pairs_used'))} pairs, {orders}; alpha {_field(body.get('alpha'))}"
            f"\nquestion: {cut(str(body.get('question')), FIELD_WIDTH)}"
        )
    )
    _print_usage(body.get("usage"), console)

    leaderboard = Table(title="leaderboard (Bradley-Terry strength, natural log scale)")
    leaderboard.add_column("rank", justify="right")
    leaderboard.add_column("run", overflow="fold")  # an id is copied: folded, never cut
    leaderboard.add_column("strength", justify="right")
    leaderboard.add_column("95% interval", justify="right")
    leaderboard.add_column("wins", justify="right")
    leaderboard.add_column("losses", justify="right")
    leaderboard.add_column("ties", justify="right")
    for row in _rows(body, "leaderboard"):
        leaderboard.add_row(
            Text(_field(row.get("rank"))),
            _run(row.get("result_id")),
            format_signed(row.get("strength")),
            f"[{format_signed(row.get('ci_low'))}, {format_signed(row.get('ci_high'))}]",
            Text(_field(row.get("wins"))),
            Text(_field(row.get("losses"))),
            Text(_field(row.get("ties"))),
        )
    console.print(leaderboard)

    matchups = Table(title="matchups (win rate of a over b, ties aside; Holm-adjusted p)")
    matchups.add_column("a", overflow="fold")
    matchups.add_column("b", overflow="fold")
    matchups.add_column("a wins", justify="right")
    matchups.add_column("b wins", justify="right")
    matchups.add_column("ties", justify="right")
    matchups.add_column("a win rate (95% interval)", justify="right")
    matchups.add_column("p adj.", justify="right")
    matchups.add_column("verdict", no_wrap=True)
    for row in _rows(body, "matchups"):
        verdict = str(row.get("verdict"))
        shown, style = MATCHUP_VERDICTS.get(verdict, (cut(verdict, 30), ""))
        matchups.add_row(
            _run(row.get("a")),
            _run(row.get("b")),
            Text(_field(row.get("a_wins"))),
            Text(_field(row.get("b_wins"))),
            Text(_field(row.get("ties"))),
            f"{format_figure(row.get('win_rate'))} [{format_figure(row.get('ci_low'))}, "
            f"{format_figure(row.get('ci_high'))}]",
            format_p_value(row.get("p_adjusted")),
            Text(shown, style=style),
        )
    console.print(matchups)

    position = body.get("position")
    if isinstance(position, dict):
        consistency = format_percent(position.get("consistency"))
        meaning = "one order judged" if consistency == MISSING else "both orders agreed"
        console.print(
            Text(
                f"position: {_field(position.get('judgements'))} judgements, first chosen "
                f"{_field(position.get('first_chosen'))}, second chosen "
                f"{_field(position.get('second_chosen'))}, ties {_field(position.get('ties'))}; "
                f"consistency {consistency} ({meaning})"
            )
        )


# ---- monitors (E8) -------------------------------------------------------------------------------

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
    return f"{match.group(1)} {match.group(2)}{zone}" if match else _field(value)


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
    got = f"HTTP {_field(answered)}" if answered is not None else "no answer"
    if status == "pending":
        return f"pending ({tries} so far)"
    return f"{cut(status, 30)} ({got}, {tries})"


def short_alert(webhook: Any) -> str:
    """What became of a run's alert, in a history's row: `delivered 204`, `failed 500`,
    `pending`, `none`."""
    if not isinstance(webhook, dict):
        return "none"
    answered = webhook.get("http_status")
    return cut(str(webhook.get("status")), 30) + (f" {_field(answered)}" if answered else "")


def _run_metrics(run: dict[str, Any]) -> list[dict[str, Any]]:
    return _rows(run, "metrics")


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
        *([f"newest {_field(newest)}"] if newest is not None else []),
        *([f"labels {cut(', '.join(map(str, labels)), 40)}"] if isinstance(labels, list) else []),
        *([f"last {_field(seconds)} s"] if seconds is not None else []),
    ]
    return "; ".join(said) or "all pairs"


def render_monitors(body: dict[str, Any], console: Console) -> None:
    """The tenant's monitors (GET /monitors), a row of two lines each: the id (whole, to be
    copied) and name; the dataset, with which pairs, and the metrics set; the schedule and
    next run; the baseline and the webhook."""
    from rich.table import Table
    from rich.text import Text

    monitors = _rows(body, "monitors")
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
            Text(f"{_field(monitor.get('monitor_id'))}\n{cut(str(monitor.get('name')), 36)}"),
            Text(
                f"{_field(monitor.get('seed_data_id'))} "
                f"({_pairs_asked(monitor.get('pair_query'))})\n{_field(monitor.get('metrics_id'))}"
            ),
            Text(
                f"{_field(monitor.get('schedule'))}\n{format_when(monitor.get('next_run_at'), '')}"
            ),
            Text(f"{_field(monitor.get('baseline'))}\n{_field(webhook) if webhook else 'none'}"),
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
        f"against baseline {_field(baseline)} ({_field(run.get('pairs_matched'))} pairs matched)"
        if baseline
        else "no baseline (nothing to compare with yet)"
    )
    console.print(
        Text(
            f"monitor run {_field(run.get('run_id'))}: {shown}"
            f"{' (run by hand)' if run.get('manual') is True else ''}, scheduled for "
            f"{format_when(run.get('scheduled_for'))}\n"
            f"evaluation {_field(run.get('result_id'))} {against}"
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
            f"cost {_money(cost) if cost is not None else 'unknown'}; alert "
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

    runs = _rows(body, "runs")
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
            Text(_money(run.get("cost_usd")) if run.get("cost_usd") is not None else MISSING),
            Text(short_alert(run.get("webhook"))),
        )
    console.print(table)
