"""POST /compare: did the candidate evaluation do better than the baseline, beyond noise?
Pairs matched by id, metrics by definition text; paired statistics per metric and the pairs
that moved most."""

from fastapi import APIRouter, Depends, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.request_deadline import request_deadline
from evalsvc.api.responses import json_response
from evalsvc.logic import comparisons
from evalsvc.models.api_keys import Identity
from evalsvc.models.clustered import clustered_out
from evalsvc.models.common import error_responses
from evalsvc.models.comparisons import CompareIn, CompareOut, Comparison, PairChange

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


def _change(comparison: Comparison, change: PairChange) -> dict[str, object]:
    return {
        "pair_id": change.pair_id,
        "metric": comparison.metrics[change.metric].metric.definition,
        "baseline_score": change.baseline_score,
        "candidate_score": change.candidate_score,
        "diff": change.diff,
        "baseline_reason": change.baseline_reason,
        "candidate_reason": change.candidate_reason,
    }


def content_of(comparison: Comparison) -> dict[str, object]:
    """The response body of a comparison."""
    body = comparison.request
    return {
        "baseline_id": body.baseline_id,
        "candidate_id": body.candidate_id,
        "alpha": body.alpha,
        "correction": body.correction,
        "cluster_by": body.cluster_by,
        "pairs_matched": comparison.pairs_matched,
        "only_in_baseline": comparison.only_in_baseline,
        "only_in_candidate": comparison.only_in_candidate,
        "metrics": [
            {
                "metric": m.metric.definition,
                "n": m.stats.n,
                "not_applicable": m.not_applicable,
                "baseline_mean": m.baseline_mean,
                "candidate_mean": m.candidate_mean,
                "mean_diff": m.stats.mean_diff,
                "median_diff": m.stats.median_diff,
                "std_diff": m.stats.std_diff,
                "ci_low": m.stats.ci_low,
                "ci_high": m.stats.ci_high,
                "t_statistic": m.stats.t_statistic,
                "p_value": m.stats.p_value,
                "p_adjusted": m.p_adjusted,
                "wilcoxon_p": m.stats.wilcoxon_p,
                "sign_test_p": m.stats.sign_test_p,
                "wins": m.stats.wins,
                "ties": m.stats.ties,
                "losses": m.stats.losses,
                "effect_size_dz": m.stats.effect_size_dz,
                "verdict": m.verdict,
                "mde": m.mde,
                **clustered_out(m.clustered).model_dump(),
            }
            for m in comparison.metrics
        ],
        "regressions": [_change(comparison, c) for c in comparison.regressions],
        "improvements": [_change(comparison, c) for c in comparison.improvements],
    }


@router.post("/compare", response_model=CompareOut, responses=error_responses(400, 404, 409, 413))
def compare(
    request: Request, body: CompareIn, identity: Identity = Depends(current_identity)
) -> Response:
    comparison = comparisons.compare(identity, body, request_deadline(request))
    return json_response(
        request,
        content_of(comparison),
        too_large="this comparison is too large for one response: ask with Accept-Encoding: "
        "gzip, or list fewer pairs with a smaller limit",
    )
