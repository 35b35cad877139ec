"""POST /data/seed: create a seed dataset under a server-made id."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.dataset_out import DatasetWritten
from evalsvc.models.datasets import SeedDatasetIn

router = APIRouter(route_class=AuthenticatedRoute, tags=["seed datasets"])


@router.post("/data/seed", response_model=DatasetWritten, responses=error_responses(400, 413))
def create_seed_dataset(
    body: SeedDatasetIn, identity: Identity = Depends(current_identity)
) -> DatasetWritten:
    header = datasets.write_seed_dataset(identity, None, body)
    return DatasetWritten(id=header.dataset_id)
