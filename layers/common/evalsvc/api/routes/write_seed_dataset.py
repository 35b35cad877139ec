"""POST /data/seed/{id}: insert the seed dataset, or overwrite it atomically."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.params import DatasetIdParam
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.dataset_out import DatasetWritten
from evalsvc.models.datasets import SeedDatasetIn

router = APIRouter(route_class=AuthenticatedRoute, tags=["seed datasets"])
RESPONSES = error_responses(400, 413)


def write_seed_dataset(
    dataset_id: DatasetIdParam,
    body: SeedDatasetIn,
    identity: Identity = Depends(current_identity),
) -> DatasetWritten:
    header = datasets.write_seed_dataset(identity, dataset_id, body)
    return DatasetWritten(id=header.dataset_id)


router.post("/data/seed/{id}", response_model=DatasetWritten, responses=RESPONSES)(
    write_seed_dataset
)
