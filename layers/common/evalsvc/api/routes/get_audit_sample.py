"""GET /evaluation/{id}/audit_sample: scored pairs the caller has not voted on for a metric:
drawn uniformly at random (order=random, to vote on with "source": "audit"), or the lowest
scores first (order=lowest, the review queue, "source": "review"); with overlap, a share of
the random draw from pairs other people audited (E12)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.responses import json_response, readable_bytes
from evalsvc.logic import audit
from evalsvc.models.agreement import AuditSampleOut
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.datasets import optional_fields_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["agreement"])


def _pair_out(pair: audit.AuditPair) -> dict[str, object]:
    out: dict[str, object] = {
        "pair_id": pair.pair_id,
        "input": pair.input,
        "output": pair.output,
        "score": pair.score,
        "reason": pair.reason,
    }
    out.update(optional_fields_out(pair.pair))
    if pair.judge_scores is not None:
        out["judge_scores"] = pair.judge_scores
    return out


@router.get(
    "/evaluation/{id}/audit_sample",
    response_model=AuditSampleOut,
    responses=error_responses(400, 404, 409, 413),
)
def get_audit_sample(
    request: Request,
    results_id: Annotated[str, Path(alias="id", description="The evaluation result id")],
    metric_idx: Annotated[int, Query(ge=0, description="The metric to audit")],
    n: Annotated[
        int, Query(ge=1, le=audit.MAX_SAMPLE, description="How many pairs (1-100)")
    ] = audit.DEFAULT_SAMPLE,
    order: Annotated[
        audit.Order,
        Query(
            description="random (the default): a uniform draw, the same until the caller votes; "
            'vote on it with "source": "audit" (it is what audit agreement counts). lowest: the '
            "lowest scores on the metric first, ties by pair_id, the review queue; vote on it "
            'with "source": "review" (chosen by score, it would bias audit agreement)'
        ),
    ] = "random",
    overlap: Annotated[
        float,
        Query(
            description="A share, 0 to 1 (0.2 = 20 %; default 0), with order=random only: "
            "overlap * n (rounded half up) of the pairs are drawn from those other people "
            'voted on with "source": "audit" and the caller has not (the first of them in the '
            "caller's own random order), the rest as usual; fewer such pairs, the usual draw "
            "fills in. Pairs in common are what people's agreement with each other is measured on. "
            "Outside 0-1, or above 0 with order=lowest: 400"
        ),
    ] = 0.0,
    identity: Identity = Depends(current_identity),
) -> Response:
    sample = audit.audit_sample(
        identity, results_id, metric_idx, n, readable_bytes(request), order, overlap
    )
    content = {
        "eval_results_id": sample.results_id,
        "metric_idx": sample.metric_idx,
        "metric": sample.metric,
        "unvoted": sample.unvoted,
        "pairs": [_pair_out(p) for p in sample.pairs],
    }
    return json_response(
        request,
        content,
        too_large="these pairs are too large for one response: ask for fewer with a smaller n, "
        "or with Accept-Encoding: gzip",
    )
