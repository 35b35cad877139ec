"""A comparison's table, per metric with the pairs that regressed most (`evalsvc compare`), and
a plan's, the pairs a comparison needs (`evalsvc plan`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalsvc_tools.render.figures import (
    METRIC_WIDTH,
    PAIR_ID_WIDTH,
    field,
    format_figure,
    format_p_value,
    format_signed,
)
from evalsvc_tools.terminal import cut

if TYPE_CHECKING:
    from rich.console import Console

# How many regressions are listed, and how much of a judge's reason each shows.
REGRESSIONS_SHOWN = 10
REASON_WIDTH = 60

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
            f"baseline {field(comparison.get('baseline_id'))} → candidate "
            f"{field(comparison.get('candidate_id'))}\n"
            f"{field(comparison.get('pairs_matched'))} pairs matched "
            f"({field(comparison.get('only_in_baseline'))} only in the baseline, "
            f"{field(comparison.get('only_in_candidate'))} only in the candidate); "
            f"alpha {field(alpha)}, correction {field(comparison.get('correction'))}"
            + (f", clustered by {field(cluster_by)}" if cluster_by else "")
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
            f"{field(metric.get('wins'))}/{field(metric.get('ties'))}/{field(metric.get('losses'))}"
        )
        clustered = (
            [
                f"[{format_signed(metric.get('ci_low_clustered'))}, "
                f"{format_signed(metric.get('ci_high_clustered'))}] "
                f"({field(metric.get('clusters'))})"
            ]
            if cluster_by
            else []
        )
        table.add_row(
            Text(cut(str(metric.get("metric")), METRIC_WIDTH)),
            Text(field(metric.get("n"))),
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
        f"paired: baseline {field(plan.get('baseline_id'))} with candidate {field(candidate)}"
        if candidate
        else f"two independent runs, from baseline {field(plan.get('baseline_id'))} "
        "(pairs needed in each run)"
    )
    console.print(
        Text(
            f"to detect a mean difference of {field(plan.get('effect'))} with power "
            f"{field(plan.get('power'))} at alpha {field(plan.get('alpha'))}; {design}"
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
            Text(field(metric.get("n"))),
            format_figure(metric.get("sd"), 3),
            Text(
                f"{needed:,}"
                if isinstance(needed, int) and not isinstance(needed, bool)
                else "- (too few pairs to estimate the sd)"
            ),
        )
    console.print(table)
