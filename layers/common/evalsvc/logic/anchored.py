"""What people would say about every pair of a metric (E12): the judge's scores anchored to
people's audit votes (statistics/anchored.py), for GET /evaluation/{id}/anchored, the labels a
chosen width needs (POST /plan with half_width), and the reports, the review app and the CLI.

Only votes cast with "source": "audit" are labels: an audit sample is a uniform random draw of
the pairs (logic/audit.py), which is what makes the estimate unbiased. Review votes were cast on
pairs chosen for their low scores; counting them would tilt the estimate toward the worst
pairs, so they never enter it.

Nothing but the result's header and its votes is read, whatever the result's size: U's mean and
variance are the result's (its stored summary, over every scored pair of the metric) with the
labeled pairs' predictions taken out, and each labeled pair's prediction is the judge's score
its votes were cast on (the score of that pair in that result).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from evalsvc.core.errors import Conflict, InvalidInput
from evalsvc.core.observability import logger
from evalsvc.logic import judge_agreement
from evalsvc.logic.results import check_metric_idx, existing_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import MIN_ALPHA
from evalsvc.models.evaluations import EvaluationResult, VoteObservation
from evalsvc.statistics.anchored import (
    MIN_LABELS,
    Anchored,
    LabelPlan,
    Moments,
    anchored,
    plan_labels,
    without,
)
from evalsvc.statistics.scores import SCALE_MAX, SCALE_MIN
from evalsvc.storage import critiques as critiques_store

DEFAULT_ALPHA = 0.05
AUDIT = "audit"


@dataclass(frozen=True, slots=True)
class AnchoredMetric:
    """One metric's anchored estimate, and what the judge alone says (None: no pair scored)."""

    results_id: str
    metric_idx: int
    metric: str
    alpha: float
    figures: Anchored
    judge_only: float | None


def prediction(score: float) -> float:
    """The judge's score as a prediction of a person's +1: (score - 1)/4, in [0, 1]."""
    return (score - SCALE_MIN) / (SCALE_MAX - SCALE_MIN)


def check_alpha(alpha: float) -> float:
    if not MIN_ALPHA <= alpha < 0.5:  # NaN fails too
        raise InvalidInput(f"alpha must be in (0, 0.5), e.g. 0.05, not {alpha!r}")
    return alpha


def labels(votes: Iterable[VoteObservation], metric_idx: int) -> list[tuple[float, float]]:
    """(Y, f) of each pair with a ±1 audit vote on the metric: Y the share of +1 among them, f
    the judge's prediction; in pair id order (the figures do not depend on it)."""
    ups: dict[str, int] = defaultdict(int)
    counted: dict[str, int] = defaultdict(int)
    scores: dict[str, float] = {}
    for vote in votes:
        if vote.metric_idx != metric_idx or vote.source != AUDIT or vote.vote == 0:
            continue
        if vote.score is None:
            continue  # its pair is gone from the result: nothing to anchor it to
        counted[vote.pair_id] += 1
        ups[vote.pair_id] += vote.vote > 0
        scores[vote.pair_id] = vote.score
    return [(ups[pair] / counted[pair], prediction(scores[pair])) for pair in sorted(counted)]


def _scored_count(result: EvaluationResult, metric_idx: int) -> int:
    """The pairs scored on the metric: its histogram's total when kept, else the pairs less
    those it was not applicable to."""
    if result.histograms is not None and metric_idx < len(result.histograms):
        return sum(result.histograms[metric_idx])
    return result.pair_count - result.not_applicable_count(metric_idx)


def population(result: EvaluationResult, metric_idx: int) -> Moments | None:
    """The moments of f over every pair scored on the metric (None when none was), from the
    result's stored summary."""
    summary = result.summaries[metric_idx] if metric_idx < len(result.summaries) else None
    count = _scored_count(result, metric_idx)
    if summary is None or count <= 0:
        return None
    scale = SCALE_MAX - SCALE_MIN
    return Moments(count, prediction(summary.mean), (summary.std_dev / scale) ** 2)


def _split(
    result: EvaluationResult, votes: list[VoteObservation], metric_idx: int
) -> tuple[list[tuple[float, float]], Moments | None, Moments | None]:
    """The labeled pairs' (Y, f), U's moments and every scored pair's (both None when no pair
    was scored on the metric)."""
    labeled = labels(votes, metric_idx)
    everyone = population(result, metric_idx)
    if everyone is None:
        return labeled, None, None
    summary = result.summaries[metric_idx]
    constant = summary is not None and summary.min == summary.max
    return labeled, without(everyone, [f for _, f in labeled], constant), everyone


def of_metric(
    result: EvaluationResult, votes: list[VoteObservation], metric_idx: int, alpha: float
) -> AnchoredMetric:
    """The anchored estimate of one metric of a complete result from its votes (each with the
    judge's score it was cast on)."""
    labeled, unlabeled, everyone = _split(result, votes, metric_idx)
    if unlabeled is None or everyone is None:
        figures = Anchored(len(labeled), 0, None, None, None, None)
    else:
        figures = anchored(labeled, unlabeled, alpha)
    return AnchoredMetric(
        result.results_id,
        metric_idx,
        result.definitions[metric_idx],
        alpha,
        figures,
        everyone.mean if everyone is not None else None,
    )


def of_result(
    result: EvaluationResult, votes: list[VoteObservation], alpha: float = DEFAULT_ALPHA
) -> list[AnchoredMetric]:
    """Every metric's anchored estimate (the reports' and the review app's)."""
    return [of_metric(result, votes, idx, alpha) for idx in range(len(result.definitions))]


def plan_of(
    result: EvaluationResult,
    votes: list[VoteObservation],
    metric_idx: int,
    half_width: float,
    alpha: float,
) -> LabelPlan | None:
    """The labels an interval of `half_width` needs on one metric of a complete result, from
    its votes (each with the judge's score it was cast on), as POST /plan and the report give
    it; None below MIN_LABELS labelled pairs or when no pair was scored (nothing to plan from).
    ValueError for a half_width that is not finite and > 0 or an alpha outside (0, 0.5)."""
    labeled, unlabeled, _ = _split(result, votes, metric_idx)
    if len(labeled) < MIN_LABELS or unlabeled is None:
        return None
    return plan_labels(labeled, unlabeled, half_width, alpha)


def _votes(identity: Identity, result: EvaluationResult) -> list[VoteObservation]:
    votes = list(critiques_store.votes_of_result(identity.tenant, result.results_id))
    return judge_agreement.with_scores(identity.tenant, result, votes)


def for_result(
    identity: Identity, results_id: str, metric_idx: int, alpha: float
) -> AnchoredMetric:
    """GET /evaluation/{id}/anchored: a complete result's metric (else 404, 409, 400)."""
    check_alpha(alpha)
    result = existing_result(identity, results_id, require_complete=True)
    check_metric_idx(result, metric_idx)
    estimate = of_metric(result, _votes(identity, result), metric_idx, alpha)
    logger.info(
        "anchored a metric to people's votes",
        extra={
            "results_id": results_id,
            "metric_idx": metric_idx,
            "n_labeled": estimate.figures.n_labeled,
            "n_unlabeled": estimate.figures.n_unlabeled,
        },
    )
    return estimate


def plan(
    identity: Identity, results_id: str, metric_idx: int, half_width: float, alpha: float
) -> LabelPlan:
    """POST /plan with half_width: the labels the width needs, with PPI and without (409 with
    fewer than 2 labels: no variance to plan from)."""
    check_alpha(alpha)
    result = existing_result(identity, results_id, require_complete=True)
    check_metric_idx(result, metric_idx)
    votes = _votes(identity, result)
    planned = plan_of(result, votes, metric_idx, half_width, alpha)
    if planned is None:
        found = len(labels(votes, metric_idx))
        raise Conflict(
            f"metric {metric_idx} of result {results_id!r} has {found} pair"
            f"{'s' if found != 1 else ''} with audit votes: at least {MIN_LABELS} are "
            "needed to plan from their spread. Vote on its audit sample "
            f"(GET /evaluation/{results_id}/audit_sample?metric_idx={metric_idx}) first"
        )
    logger.info(
        "planned labels",
        extra={
            "results_id": results_id,
            "metric_idx": metric_idx,
            "labels_now": planned.labels_now,
        },
    )
    return planned
