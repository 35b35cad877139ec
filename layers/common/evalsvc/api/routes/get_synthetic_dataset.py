"""GET /data/synthetic/{id}: a synthetic dataset (`latest` = the most recently created)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.json_body import json_response
from evalsvc.identifiers import format_ms
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.datasets import DatasetKind, SyntheticDatasetOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["synthetic datasets"])


@router.get(
    "/data/synthetic/{id}", response_model=SyntheticDatasetOut, responses=error_responses(400, 404)
)
def get_synthetic_dataset(
    dataset_id: Annotated[str, Path(alias="id")],
    identity: Identity = Depends(current_identity),
) -> Response:
    dataset = datasets.read_dataset(identity, DatasetKind.SYNTHETIC, dataset_id)
    header = dataset.header
    return json_response(
        {
            "id": header.dataset_id,
            "data": [{"id": p.id, "input": p.input, "output": p.output} for p in dataset.pairs],
            "system_prompt": header.system_prompt,
            "created_at": format_ms(header.created_ms),
        }
    )
