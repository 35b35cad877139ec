"""The evaluation page (GET /evaluation/{id}/report): what was run and what produced the result
(its `inputs`, E7), a forest plot of every metric's mean and interval, a histogram per metric,
the lowest pairs with their texts, votes and comments, agreement, what people would say of every
pair (E12), the jury that judged a metric and how its judges agree (E13); progress while it
runs, the failure when it failed."""

from __future__ import annotations

from collections.abc import Callable

from evalsvc.models.evaluation_inputs import inputs_out
from evalsvc.models.reports import EvaluationReport
from evalsvc.reports import charts
from evalsvc.reports.jury import jury_sections
from evalsvc.reports.limits import Limits
from evalsvc.reports.pages import EVALUATION_PAGE, render
from evalsvc.statistics.scores import SCALE_MAX, SCALE_MIN

# How many votes and comments are listed under one pair, and in the page's own list.
CRITIQUES_PER_PAIR = 3
LISTED_CRITIQUES = 50
# How the page says what the pairs were clustered by (cluster_by), in full and as what a
# cluster's pairs share.
CLUSTER_WORDS = {
    "label": "first label (an unlabelled pair is its own cluster)",
    "input": "input (pairs with the same input are one cluster)",
    "conversation": "conversation (pairs with the same conversation_id are one cluster; a pair "
    "without one is its own)",
}
CLUSTER_SHARED = {"label": "first label", "input": "input", "conversation": "conversation_id"}


def _limits(report: EvaluationReport) -> Limits:
    shown = sum(len(m.lowest) for m in report.metrics)
    comments = sum(
        min(len(p.critiques), CRITIQUES_PER_PAIR) for m in report.metrics for p in m.lowest
    )
    texts = sum(p.text.shown_texts for m in report.metrics for p in m.lowest)
    return Limits.for_counts(texts=texts, reasons=shown, comments=comments + LISTED_CRITIQUES)


def _forest(report: EvaluationReport) -> charts.Forest | None:
    rows = [
        charts.Estimate(
            f"{m.idx + 1}. {m.definition}",
            m.summary.mean,
            m.summary.ci_low,
            m.summary.ci_high,
            wide_low=m.clustered.ci_low_clustered if m.clustered else None,
            wide_high=m.clustered.ci_high_clustered if m.clustered else None,
            wide_name="clustered",
        )
        for m in report.metrics
        if m.summary is not None
    ]
    if not rows:
        return None
    clustered = report.result.cluster_by is not None
    description = (
        "For each metric, a dot at the mean score (1 to 5) and a line across its 95 % "
        "confidence interval"
    )
    if clustered:
        description += (
            f", which assumes every pair independent; behind it a pale band across the 95 % "
            f"clustered interval (pairs clustered by {report.result.cluster_by}), which does not"
        )
    return charts.forest(
        rows,
        title="Mean score per metric with its 95 % confidence interval"
        + (" and its clustered interval" if clustered else ""),
        description=description + ".",
        low=SCALE_MIN,
        high=SCALE_MAX,
        ticks=[1, 2, 3, 4, 5],
    )


def render_evaluation(
    report: EvaluationReport, fits: Callable[[bytes], bool] = lambda _: True
) -> bytes:
    """The evaluation page, as UTF-8 HTML that `fits` accepts (and within MAX_PAGE_BYTES)."""
    histograms = [
        charts.histogram(m.histogram, title=f"Scores of metric {m.idx + 1}")
        if m.histogram is not None
        else None
        for m in report.metrics
    ]
    return render(
        EVALUATION_PAGE,
        fits,
        _limits(report),
        report=report,
        result=report.result,
        inputs=inputs_out(report.result),
        forest=_forest(report),
        histograms=histograms,
        juries=jury_sections(report.result),
        critiques_per_pair=CRITIQUES_PER_PAIR,
        listed=report.critiques[:LISTED_CRITIQUES],
        cluster_words=CLUSTER_WORDS,
        cluster_shared=CLUSTER_SHARED,
    )
