"""PUT /pairwise/{id}/vote (E5): a person's verdict on one comparison of a pairwise run, which
agreement with the judge is measured on (one per person and comparison: replaceable)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.logic import pairwise_runs
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.pairwise import PairwiseVoteIn, PairwiseVoteOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["pairwise"])


@router.put(
    "/pairwise/{id}/vote",
    response_model=PairwiseVoteOut,
    responses=error_responses(400, 404, 409, 413),
)
def vote_pairwise(
    pairwise_id: Annotated[str, Path(alias="id", description="The pairwise run id")],
    body: PairwiseVoteIn,
    identity: Identity = Depends(current_identity),
) -> PairwiseVoteOut:
    pairwise_runs.vote(identity, pairwise_id, body)
    return PairwiseVoteOut(success=True, pairwise_id=pairwise_id, pair_id=body.pair_id)
