"""Planning a comparison (POST /plan): per metric, how many pairs a comparison needs to detect
a mean difference of `effect` with probability `power` at level alpha (E6),

    pairs_needed = ⌈((z_{1-alpha/2} + z_{power})·sd / effect)²⌉, at least 2,

with sd the spread the results at hand showed (error_bars.plan). With a candidate, sd is the
std_diff of the paired differences over the matched pairs: the pairs are read and matched as
POST /compare reads them (comparisons.matched_results and read_pairs, into a Tally that keeps
no moved pairs), so a plan costs what a comparison costs, with the same 404, 409, 400, 413 and
503 (out of time, nothing changed). Without one, sd = √2 x the baseline's std_dev (two
independent runs, each of pairs_needed pairs), from its stored statistics: nothing but its
header is read.

A metric whose sd cannot be estimated (fewer than 2 pairs: the matched ones, or the
baseline's) has sd and pairs_needed null rather than a guess; its n says why."""

from __future__ import annotations

import math

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import check_client_id
from evalsvc.core.observability import logger
from evalsvc.logic import comparisons
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.models.plans import MetricPlan, PlanIn
from evalsvc.statistics.error_bars import plan as plan_of
from evalsvc.statistics.scores import paired_counts

MIN_PAIRS_FOR_SD = 2


def plan(identity: Identity, body: PlanIn, deadline: Deadline) -> list[MetricPlan]:
    """The plan of every metric, in the baseline's order."""
    if body.candidate_id is None:
        check_client_id(body.baseline_id, "baseline_id")
        baseline = comparisons.complete_result(identity, body.baseline_id, "baseline_id")
        planned = _unpaired(baseline, body)
    else:
        planned = _paired(identity, body, body.candidate_id, deadline)
    logger.info(
        "planned a comparison",
        extra={
            "baseline_id": body.baseline_id,
            "candidate_id": body.candidate_id,
            "metrics": len(planned),
        },
    )
    return planned


def _unpaired(baseline: EvaluationResult, body: PlanIn) -> list[MetricPlan]:
    """sd = √2 x the baseline's std_dev of each metric (from its stored statistics)."""
    n = baseline.pair_count
    planned = []
    for idx, definition in enumerate(baseline.definitions):
        summary = baseline.summaries[idx] if idx < len(baseline.summaries) else None
        std_dev = summary.std_dev if summary is not None and n >= MIN_PAIRS_FOR_SD else None
        planned.append(_metric(definition, n, body, std_dev=std_dev))
    return planned


def _paired(
    identity: Identity, body: PlanIn, candidate_id: str, deadline: Deadline
) -> list[MetricPlan]:
    """sd = std_diff of each matched metric over the matched pairs."""
    baseline, candidate, matched = comparisons.matched_results(
        identity, body.baseline_id, candidate_id
    )
    tally = comparisons.Tally(matched, None, 1)
    comparisons.read_pairs(identity, baseline, candidate, tally, deadline, "planning from")
    planned = []
    for metric, diffs in zip(matched, tally.diffs, strict=True):
        figures = paired_counts(diffs, body.alpha)
        planned.append(_metric(metric.definition, figures.n, body, std_diff=figures.std_diff))
    return planned


def _metric(
    definition: str,
    n: int,
    body: PlanIn,
    *,
    std_dev: float | None = None,
    std_diff: float | None = None,
) -> MetricPlan:
    paired = body.candidate_id is not None
    if std_dev is None and std_diff is None:
        return MetricPlan(definition, n, None, None, paired)
    try:
        planned = plan_of(body.effect, body.alpha, body.power, std_dev=std_dev, std_diff=std_diff)
    except ValueError:
        sd = std_diff if std_diff is not None else math.sqrt(2.0) * (std_dev or 0.0)
        raise InvalidInput(
            f"effect: {body.effect!r} is too small for metric {definition[:60]!r} (sd {sd:.6g}): "
            "no number of pairs can be counted for it. Ask for a larger effect"
        ) from None
    return MetricPlan(definition, n, planned.sd, planned.pairs_needed, planned.paired)
