"""PUT /vote_eval_pair/{id}: record a human vote (and comment) on a scored pair."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.logic import votes
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.evaluation_lists import VoteOut
from evalsvc.models.evaluations import VoteIn

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


@router.put(
    "/vote_eval_pair/{id}", response_model=VoteOut, responses=error_responses(400, 404, 413)
)
def vote_eval_pair(
    results_id: Annotated[str, Path(alias="id", description="The evaluation result id")],
    body: VoteIn,
    identity: Identity = Depends(current_identity),
) -> VoteOut:
    critique = votes.vote(identity, results_id, body)
    return VoteOut(success=True, results_id=results_id, pair_id=critique.pair_id)
