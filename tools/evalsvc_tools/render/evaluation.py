"""An evaluation result's table, per metric, with what produced it (`evalsvc evaluate`,
`evalsvc rerun`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalsvc_tools.render.figures import (
    METRIC_WIDTH,
    MISSING,
    PAIR_ID_WIDTH,
    at,
    field,
    format_figure,
    print_usage,
)
from evalsvc_tools.render.jury import jury_lines
from evalsvc_tools.terminal import cut

if TYPE_CHECKING:
    from rich.console import Console

# How many of a metric's lowest pairs are listed.
LOWEST_SHOWN = 3


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
        f"judge {field(inputs.get('judge_model'))}, prompt "
        f"{field(inputs.get('judge_prompt_version'))}, {field(samples)} "
        f"sample{'' if samples == 1 else 's'}"
        if inputs.get("judge_model")
        else "no judge"
    )
    # A line each digest (64 characters), so that an 80-column terminal breaks none.
    console.print(
        Text(
            f"what produced it: dataset {field(inputs.get('dataset_id'))}, version "
            f"{field(inputs.get('dataset_version'))}; metrics set "
            f"{field(inputs.get('metrics_id'))}\n"
            f"  pairs_digest {field(inputs.get('pairs_digest') or 'not counted yet')}\n"
            f"  definitions {field(inputs.get('definitions_sha256'))}\n"
            f"  {judged}\n"
            f"  service {field(inputs.get('service_version'))}, prices of "
            f"{field(inputs.get('prices_date'))}"
        )
    )


def render_evaluation(result: dict[str, Any], console: Console) -> None:
    """The per-metric table of a complete evaluation result (GET /evaluation/{id}), and below
    it the line of each metric judged by a jury, with each model's part of the usage (E13)."""
    from rich.table import Table
    from rich.text import Text

    pairs = field(result.get("pair_count", result.get("pairs_total")))
    console.print(
        Text(
            f"evaluation {field(result.get('results_id'))}: {pairs} pairs of dataset "
            f"{field(result.get('dataset_id'))}\nmetrics {field(result.get('metrics_id'))}, "
            f"created {field(result.get('created_at'))}"
        )
    )
    print_usage(result.get("usage"), console)
    _print_inputs(result, console)
    intervals = result.get("score_confidence_intervals")
    first = at(intervals, 0)
    confidence = first.get("ci_confidence") if isinstance(first, dict) else None
    level = f"{100 * confidence:g}%" if isinstance(confidence, int | float) else "95%"
    table = Table(show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("metric", max_width=METRIC_WIDTH, overflow="ellipsis", no_wrap=True)
    table.add_column("mean", justify="right")
    table.add_column(f"{level} interval", justify="right")
    clustered = result.get("score_clustered")
    if isinstance(clustered, list):
        by = field(result.get("cluster_by"))
        table.add_column(Text(f"clustered by {by}"), justify="right")
        table.add_column("clusters", justify="right")
    noise = result.get("score_judge_noise_sds")
    samples = result.get("judge_samples")
    sampled = isinstance(samples, int) and samples > 1 and isinstance(noise, list)
    if sampled:
        table.add_column(f"judge sd (k={samples})", justify="right")
    table.add_column("median", justify="right")
    table.add_column("n", justify="right")
    # E10: pairs a metric could not score (they lack its reference or contexts), beside n.
    not_applicable = result.get("score_not_applicable")
    if isinstance(not_applicable, list):
        table.add_column("not applicable", justify="right")
    table.add_column("lowest pairs (score)")
    definitions = result.get("metrics_definitions")
    for index, definition in enumerate(definitions if isinstance(definitions, list) else []):
        interval = at(intervals, index)
        low = interval.get("ci_low") if isinstance(interval, dict) else None
        high = interval.get("ci_high") if isinstance(interval, dict) else None
        extra: list[str | Text] = []
        if isinstance(clustered, list):
            figures = at(clustered, index)
            figures = figures if isinstance(figures, dict) else {}
            wide_low, wide_high = figures.get("ci_low_clustered"), figures.get("ci_high_clustered")
            extra.append(
                f"[{format_figure(wide_low)}, {format_figure(wide_high)}]"
                if wide_low is not None and wide_high is not None
                else "—"
            )
            extra.append(Text(field(figures.get("clusters"))))
        if sampled:
            extra.append(format_figure(at(noise, index)))
        scored: list[str | Text] = [Text(pairs)]
        if isinstance(not_applicable, list):
            skipped = at(not_applicable, index)
            total = result.get("pair_count", result.get("pairs_total"))
            if isinstance(skipped, int) and isinstance(total, int):
                scored = [Text(str(total - skipped)), Text(str(skipped))]
            else:
                scored.append(Text(field(skipped)))
        # Text, not markup: the service's text is shown as it is, never read as rich markup
        # (which could make a link) or emoji codes.
        table.add_row(
            str(index),
            Text(cut(str(definition), METRIC_WIDTH)),
            format_figure(at(result.get("score_means"), index)),
            f"[{format_figure(low)}, {format_figure(high)}]",
            *extra,
            format_figure(at(result.get("score_medians"), index)),
            *scored,
            Text(_lowest(at(result.get("min_scoring_pairs"), index))),
        )
    console.print(table)
    below = jury_lines(result)
    if below:
        console.print(Text("\n".join(below)))
