"""POST /data/seed/pair: add a pair to the dataset whose system prompt is the pair's
`system_prompt_template`, creating that dataset when there is none."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.dataset_out import PairAdded
from evalsvc.models.datasets import PairWithPromptIn

router = APIRouter(route_class=AuthenticatedRoute, tags=["seed datasets"])


@router.post("/data/seed/pair", response_model=PairAdded, responses=error_responses(400, 409, 413))
def add_seed_pair_for_prompt(
    body: PairWithPromptIn, identity: Identity = Depends(current_identity)
) -> PairAdded:
    dataset_id, pair = datasets.add_seed_pair_for_prompt(identity, body)
    return PairAdded(dataset_id=dataset_id, pair_id=pair.id)
