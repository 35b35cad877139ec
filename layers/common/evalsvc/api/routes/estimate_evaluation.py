"""POST /evaluate/estimate: what POST /evaluate with the same body would cost, at most and as
expected, before it runs. No LLM call, nothing stored."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.logic import estimates
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.evaluations import EvaluateIn
from evalsvc.models.usage import EstimateOut, estimate_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


@router.post(
    "/evaluate/estimate", response_model=EstimateOut, responses=error_responses(400, 404, 413)
)
def estimate_evaluation(
    body: EvaluateIn, identity: Identity = Depends(current_identity)
) -> EstimateOut:
    pairs, bound = estimates.estimate(identity, body)
    return estimate_out(pairs, bound)
