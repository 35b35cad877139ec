"""The tables the user's commands draw with rich: an evaluation result's, per metric (`evalsvc
evaluate`), and a comparison's, per metric with the pairs that regressed most (`evalsvc
compare`); and how a figure is written in them. rich is imported when a table is drawn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalsvc_tools.terminal import cut, terminal_safe

if TYPE_CHECKING:
    from rich.console import Console

# How much of a metric's definition a table shows, and how many regressions are listed.
METRIC_WIDTH = 40
LOWEST_SHOWN = 3
REGRESSIONS_SHOWN = 10
REASON_WIDTH = 60
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


def _lowest(pairs: Any) -> str:
    if not isinstance(pairs, list) or not pairs:
        return MISSING
    shown = [
        f"{terminal_safe(str(p.get('pair_id')))} {format_figure(p.get('score'), 1)}"
        for p in pairs[:LOWEST_SHOWN]
        if p
    ]
    more = len(pairs) - LOWEST_SHOWN
    return ", ".join(shown) + (f" (+{more})" if more > 0 else "")


def _at(values: Any, index: int) -> Any:
    return values[index] if isinstance(values, list) and index < len(values) else None


def render_evaluation(result: dict[str, Any], console: Console) -> None:
    """The per-metric table of a complete evaluation result (GET /evaluation/{id})."""
    from rich.markup import escape
    from rich.table import Table

    pairs = result.get("pair_count", result.get("pairs_total"))
    console.print(
        escape(
            f"evaluation {result.get('results_id')}: {pairs} pairs of dataset "
            f"{result.get('dataset_id')}\nmetrics {result.get('metrics_id')}, created "
            f"{result.get('created_at')}"
        )
    )
    usage = result.get("usage")
    if isinstance(usage, dict) and (usage.get("llm_calls") or usage.get("cache_hits")):
        cost = usage.get("cost_usd")
        money = f"${cost:.6f}" if isinstance(cost, int | float) else "cost unknown (no price)"
        console.print(
            escape(
                f"LLM: {usage.get('llm_calls')} calls, {usage.get('cache_hits')} cache hits, "
                f"{usage.get('input_tokens')} input and {usage.get('output_tokens')} output "
                f"tokens, {money} ({usage.get('model')})"
            )
        )
    intervals = result.get("score_confidence_intervals")
    first = _at(intervals, 0)
    confidence = first.get("ci_confidence") if isinstance(first, dict) else None
    level = f"{100 * confidence:g}%" if isinstance(confidence, int | float) else "95%"
    table = Table(show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("metric", max_width=METRIC_WIDTH, overflow="ellipsis", no_wrap=True)
    table.add_column("mean", justify="right")
    table.add_column(f"{level} interval", justify="right")
    table.add_column("median", justify="right")
    table.add_column("n", justify="right")
    table.add_column("lowest pairs (score)")
    definitions = result.get("metrics_definitions")
    for index, definition in enumerate(definitions if isinstance(definitions, list) else []):
        interval = _at(intervals, index)
        low = interval.get("ci_low") if isinstance(interval, dict) else None
        high = interval.get("ci_high") if isinstance(interval, dict) else None
        table.add_row(
            str(index),
            escape(cut(str(definition), METRIC_WIDTH)),
            format_figure(_at(result.get("score_means"), index)),
            f"[{format_figure(low)}, {format_figure(high)}]",
            format_figure(_at(result.get("score_medians"), index)),
            str(pairs),
            escape(_lowest(_at(result.get("min_scoring_pairs"), index))),
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
    from rich.markup import escape
    from rich.table import Table

    alpha = comparison.get("alpha")
    level = f"{100 * (1 - alpha):g}%" if isinstance(alpha, int | float) else "interval"
    console.print(
        escape(
            f"baseline {comparison.get('baseline_id')} → candidate "
            f"{comparison.get('candidate_id')}\n{comparison.get('pairs_matched')} pairs "
            f"matched ({comparison.get('only_in_baseline')} only in the baseline, "
            f"{comparison.get('only_in_candidate')} only in the candidate); alpha {alpha}, "
            f"correction {comparison.get('correction')}"
        )
    )
    table = Table()
    table.add_column("metric", max_width=METRIC_WIDTH, overflow="ellipsis", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("baseline", justify="right")
    table.add_column("candidate", justify="right")
    table.add_column(f"diff ({level} interval)", justify="right")
    table.add_column("p adj.", justify="right")
    table.add_column("W/T/L", justify="right")
    table.add_column("verdict", no_wrap=True)
    metrics = comparison.get("metrics")
    for metric in metrics if isinstance(metrics, list) else []:
        verdict = str(metric.get("verdict"))
        shown, style = VERDICTS.get(verdict, (escape(cut(verdict, 30)), ""))
        table.add_row(
            escape(cut(str(metric.get("metric")), METRIC_WIDTH)),
            str(metric.get("n")),
            format_figure(metric.get("baseline_mean")),
            format_figure(metric.get("candidate_mean")),
            f"{format_signed(metric.get('mean_diff'))} [{format_signed(metric.get('ci_low'))}, "
            f"{format_signed(metric.get('ci_high'))}]",
            format_p_value(metric.get("p_adjusted")),
            f"{metric.get('wins')}/{metric.get('ties')}/{metric.get('losses')}",
            f"[{style}]{shown}[/]" if style else shown,
        )
    console.print(table)
    regressions = comparison.get("regressions")
    if not isinstance(regressions, list) or not regressions:
        console.print("no pair regressed on any metric")
        return
    console.print(f"pairs that regressed most ({len(regressions)} listed by the service):")
    for change in regressions[:REGRESSIONS_SHOWN]:
        reason = cut(str(change.get("candidate_reason") or ""), REASON_WIDTH)
        line = (
            f"  {change.get('pair_id')}  {cut(str(change.get('metric')), 40)}  "
            f"{format_figure(change.get('baseline_score'))} → "
            f"{format_figure(change.get('candidate_score'))} "
            f"({format_signed(change.get('diff'))})"
        )
        console.print(escape(line + (f"  {reason}" if reason else "")))
    if len(regressions) > REGRESSIONS_SHOWN:
        console.print(f"  … and {len(regressions) - REGRESSIONS_SHOWN} more (--json shows all)")
