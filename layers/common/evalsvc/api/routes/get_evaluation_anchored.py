"""GET /evaluation/{id}/anchored: what people would say about every pair of a metric, from
their audit votes and the judge's scores (E12)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.responses import json_response
from evalsvc.logic import anchored
from evalsvc.models.anchored import AnchoredOut, anchored_out
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses

router = APIRouter(route_class=AuthenticatedRoute, tags=["agreement"])


@router.get(
    "/evaluation/{id}/anchored",
    response_model=AnchoredOut,
    responses=error_responses(400, 404, 409),
)
def get_evaluation_anchored(
    request: Request,
    results_id: Annotated[str, Path(alias="id", description="The evaluation result id")],
    metric_idx: Annotated[int, Query(description="The metric (0-based)")],
    alpha: Annotated[
        float,
        Query(description="The intervals are at 1 - alpha (0 < alpha < 0.5; 0.05 by default)"),
    ] = anchored.DEFAULT_ALPHA,
    identity: Identity = Depends(current_identity),
) -> Response:
    estimate = anchored.for_result(identity, results_id, metric_idx, alpha)
    content = anchored_out(
        estimate.results_id,
        estimate.metric_idx,
        estimate.metric,
        estimate.alpha,
        estimate.figures,
        estimate.judge_only,
    )
    return json_response(request, content, too_large="the metric's definition is too long")
