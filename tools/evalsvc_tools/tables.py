"""The tables the user's commands draw with rich: an evaluation result's, per metric (`evalsvc
evaluate`), and a comparison's, per metric with the pairs that regressed most (`evalsvc
compare`); and how a figure is written in them. rich is imported when a table is drawn.

Every value the service gave reaches the console as a rich `Text` of terminal-safe text
(terminal.cut): never as markup, which rich would read (`[link=…]` makes a terminal link), and
never with a control character, which rich passes on (ESC starts every escape sequence)."""

from __future__ import annotations

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
    usage = result.get("usage")
    if isinstance(usage, dict) and (usage.get("llm_calls") or usage.get("cache_hits")):
        cost = usage.get("cost_usd")
        money = f"${cost:.6f}" if isinstance(cost, int | float) else "cost unknown (no price)"
        console.print(
            Text(
                f"LLM: {_field(usage.get('llm_calls'))} calls, {_field(usage.get('cache_hits'))} "
                f"cache hits, {_field(usage.get('input_tokens'))} input and "
                f"{_field(usage.get('output_tokens'))} output tokens, {money} "
                f"({_field(usage.get('model'))})"
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
        # Text, not markup: the service's text is shown as it is, never read as rich markup
        # (which could make a link) or emoji codes.
        table.add_row(
            str(index),
            Text(cut(str(definition), METRIC_WIDTH)),
            format_figure(_at(result.get("score_means"), index)),
            f"[{format_figure(low)}, {format_figure(high)}]",
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
    console.print(
        Text(
            f"baseline {_field(comparison.get('baseline_id'))} → candidate "
            f"{_field(comparison.get('candidate_id'))}\n"
            f"{_field(comparison.get('pairs_matched'))} pairs matched "
            f"({_field(comparison.get('only_in_baseline'))} only in the baseline, "
            f"{_field(comparison.get('only_in_candidate'))} only in the candidate); "
            f"alpha {_field(alpha)}, correction {_field(comparison.get('correction'))}"
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
        if not isinstance(metric, dict):
            continue
        verdict = str(metric.get("verdict"))
        shown, style = VERDICTS.get(verdict, (cut(verdict, 30), ""))
        counts = (
            f"{_field(metric.get('wins'))}/{_field(metric.get('ties'))}/"
            f"{_field(metric.get('losses'))}"
        )
        table.add_row(
            Text(cut(str(metric.get("metric")), METRIC_WIDTH)),
            Text(_field(metric.get("n"))),
            format_figure(metric.get("baseline_mean")),
            format_figure(metric.get("candidate_mean")),
            f"{format_signed(metric.get('mean_diff'))} [{format_signed(metric.get('ci_low'))}, "
            f"{format_signed(metric.get('ci_high'))}]",
            format_p_value(metric.get("p_adjusted")),
            Text(counts),
            Text(shown, style=style),
        )
    console.print(table)
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
