"""POST /pairwise/estimate: what POST /pairwise with the same body would cost, at most and as
expected, before it runs (E3's estimate shape). No LLM call, nothing stored."""

from fastapi import APIRouter, Depends, Request

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.request_deadline import request_deadline
from evalsvc.logic import pairwise
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.pairwise import PairwiseIn
from evalsvc.models.usage import EstimateOut, estimate_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["pairwise"])


@router.post(
    "/pairwise/estimate",
    response_model=EstimateOut,
    responses=error_responses(400, 404, 409, 410, 413),
)
def estimate_pairwise(
    request: Request, body: PairwiseIn, identity: Identity = Depends(current_identity)
) -> EstimateOut:
    pairs, bound = pairwise.estimate(identity, body, request_deadline(request))
    return estimate_out(pairs, bound)
