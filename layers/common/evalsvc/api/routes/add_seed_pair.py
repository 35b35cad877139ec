"""POST /data/seed/{id}/pair: add one pair to an existing seed dataset."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.params import DatasetIdParam
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.dataset_out import PairAdded
from evalsvc.models.datasets import PairIn

router = APIRouter(route_class=AuthenticatedRoute, tags=["seed datasets"])


@router.post(
    "/data/seed/{id}/pair", response_model=PairAdded, responses=error_responses(400, 404, 409, 413)
)
def add_seed_pair(
    dataset_id: DatasetIdParam,
    body: PairIn,
    identity: Identity = Depends(current_identity),
) -> PairAdded:
    pair = datasets.add_seed_pair(identity, dataset_id, body)
    return PairAdded(dataset_id=dataset_id, pair_id=pair.id)
