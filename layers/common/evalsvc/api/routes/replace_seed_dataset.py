"""PUT /data/seed/{id}: overwrite the seed dataset (the same as POST /data/seed/{id})."""

from fastapi import APIRouter

from evalsvc.api.auth import AuthenticatedRoute
from evalsvc.api.routes.write_seed_dataset import RESPONSES, write_seed_dataset
from evalsvc.models.dataset_out import DatasetWritten

router = APIRouter(route_class=AuthenticatedRoute, tags=["seed datasets"])
router.put(
    "/data/seed/{id}",
    response_model=DatasetWritten,
    responses=RESPONSES,
    name="replace_seed_dataset",
    summary="Replace Seed Dataset",
)(write_seed_dataset)
