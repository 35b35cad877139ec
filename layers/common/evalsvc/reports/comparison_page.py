"""The comparison page (GET /compare/report): what produced each result, side by side, and
whether they scored the same pairs; a forest plot of the paired differences with their
intervals, the verdict per metric (with cluster_by, the clustered interval beside the paired
one), what the comparison could see (its minimum detectable effect, and the pairs needed to see
the observed difference), wins, ties and losses, and the pairs that moved, side by side."""

from __future__ import annotations

from collections.abc import Callable

from evalsvc.models.comparisons import Comparison
from evalsvc.models.evaluation_inputs import inputs_out
from evalsvc.models.reports import ComparisonReport, PairText
from evalsvc.reports import charts
from evalsvc.reports.limits import Limits
from evalsvc.reports.pages import COMPARISON_PAGE, render
from evalsvc.statistics.error_bars import MDE_POWER, pairs_to_see

_TONES = {"improved": "better", "regressed": "worse"}
VERDICT_WORDS = {
    "improved": "improved",
    "regressed": "regressed",
    "no_significant_difference": "no significant difference",
    "insufficient_data": "insufficient data",
}

CLUSTER_WORDS = {
    "label": "the first label of the baseline's pair (an unlabelled pair its own cluster)",
    "input": "the input of the baseline's pair (pairs with the same input one cluster)",
    "conversation": "the conversation of the baseline's pair (pairs with the same "
    "conversation_id one cluster, a pair without one its own cluster)",
}


def _forest(comparison: Comparison) -> charts.Forest:
    figures = [m.stats for m in comparison.metrics]
    clustered_ends = [
        end
        for m in comparison.metrics
        if m.clustered is not None
        for end in (m.clustered.ci_low_clustered, m.clustered.ci_high_clustered)
    ]
    extent = charts.difference_extent(
        [v for f in figures for v in (f.mean_diff, f.ci_low, f.ci_high)] + clustered_ends
    )
    confidence = f"{100 * (1 - comparison.request.alpha):.10g}"
    clustered = comparison.request.cluster_by is not None
    description = (
        "For each metric, a dot at the mean of candidate minus baseline over the matched pairs "
        "and a line across its confidence interval"
    )
    if clustered:
        description += (
            f"; behind it a pale band across the clustered interval (pairs clustered by the "
            f"baseline pair's {comparison.request.cluster_by})"
        )
    return charts.forest(
        [
            charts.Estimate(
                f"{i + 1}. {m.metric.definition}",
                m.stats.mean_diff,
                m.stats.ci_low,
                m.stats.ci_high,
                tone=_TONES.get(m.verdict, "neutral"),
                note=VERDICT_WORDS[m.verdict],
                wide_low=m.clustered.ci_low_clustered if m.clustered else None,
                wide_high=m.clustered.ci_high_clustered if m.clustered else None,
                wide_name="clustered",
            )
            for i, m in enumerate(comparison.metrics)
        ],
        title=f"Mean paired difference (candidate minus baseline) per metric, {confidence} % "
        "interval" + (" and its clustered interval" if clustered else ""),
        description=description + "; right of the zero line the candidate scored higher.",
        low=-extent,
        high=extent,
        ticks=[-extent, -extent / 2, 0.0, extent / 2, extent],
        reference=0.0,
        signed=True,
    )


def render_comparison(
    report: ComparisonReport, fits: Callable[[bytes], bool] = lambda _: True
) -> bytes:
    """The comparison page, as UTF-8 HTML that `fits` accepts (and within MAX_PAGE_BYTES)."""
    comparison = report.comparison
    changes = comparison.regressions + comparison.improvements
    texts = 0
    for change in changes:
        moved = report.texts.get(change.pair_id)
        texts += moved.baseline.shown_texts + moved.candidate.shown_texts if moved else 4
    limits = Limits.for_counts(texts=texts, reasons=2 * len(changes), comments=0)
    wtl = charts.wins_ties_losses(
        [
            (f"{i + 1}. {m.metric.definition}", m.stats.wins, m.stats.ties, m.stats.losses)
            for i, m in enumerate(comparison.metrics)
        ],
        title="Wins, ties and losses of the candidate per metric",
    )
    alpha = comparison.request.alpha
    return render(
        COMPARISON_PAGE,
        fits,
        limits,
        report=report,
        comparison=comparison,
        body=comparison.request,
        baseline_inputs=inputs_out(report.baseline),
        candidate_inputs=inputs_out(report.candidate),
        forest=_forest(comparison),
        wtl=wtl,
        verdict_words=VERDICT_WORDS,
        tones=_TONES,
        moved_texts=report.texts,
        missing=PairText(missing=True),
        power_percent=f"{100 * MDE_POWER:.0f}",
        pairs_to_see=[pairs_to_see(m.stats, alpha) for m in comparison.metrics],
        cluster_words=CLUSTER_WORDS,
    )
