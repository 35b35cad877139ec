"""POST /plan: how many pairs a comparison needs to detect a given mean difference, per metric,
from the spread of a baseline (two independent runs) or of its differences with a candidate
(paired); or, with result_id and half_width (E12), how many audit labels an anchored estimate
needs for that width."""

from fastapi import APIRouter, Depends, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.request_deadline import request_deadline
from evalsvc.api.responses import json_response
from evalsvc.logic import anchored, plans
from evalsvc.models.anchored import LabelPlanIn, LabelPlanOut, label_plan_out
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.plans import AnyPlanIn, PlanIn, PlanOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


@router.post(
    "/plan",
    response_model=PlanOut | LabelPlanOut,
    responses=error_responses(400, 404, 409, 413),
)
def plan(
    request: Request, body: AnyPlanIn, identity: Identity = Depends(current_identity)
) -> Response:
    if isinstance(body, LabelPlanIn):
        labels = anchored.plan(
            identity, body.result_id, body.metric_idx, body.half_width, body.alpha
        )
        return json_response(
            request, label_plan_out(labels), too_large="the plan is too large for one response"
        )
    return _comparison(request, body, identity)


def _comparison(request: Request, body: PlanIn, identity: Identity) -> Response:
    planned = plans.plan(identity, body, request_deadline(request))
    content = {
        "baseline_id": body.baseline_id,
        "candidate_id": body.candidate_id,
        "effect": body.effect,
        "alpha": body.alpha,
        "power": body.power,
        "metrics": [
            {
                "metric": m.metric,
                "n": m.n,
                "sd": m.sd,
                "pairs_needed": m.pairs_needed,
                "paired": m.paired,
            }
            for m in planned
        ],
    }
    return json_response(
        request,
        content,
        too_large="this plan is too large for one response (its metric definitions are long): "
        "ask with Accept-Encoding: gzip",
    )
