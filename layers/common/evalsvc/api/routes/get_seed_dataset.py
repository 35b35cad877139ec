"""GET /data/seed/{id}: a seed dataset with every pair, oldest first (`latest` allowed)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.json_body import json_response
from evalsvc.identifiers import format_ms
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.datasets import DatasetKind, SeedDatasetOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["seed datasets"])


@router.get("/data/seed/{id}", response_model=SeedDatasetOut, responses=error_responses(400, 404))
def get_seed_dataset(
    dataset_id: Annotated[str, Path(alias="id")],
    identity: Identity = Depends(current_identity),
) -> Response:
    dataset = datasets.read_dataset(identity, DatasetKind.SEED, dataset_id)
    data = []
    for pair in dataset.pairs:
        item: dict[str, object] = {
            "id": pair.id,
            "input": pair.input,
            "output": pair.output,
            "metadata": {"created_at": format_ms(pair.created_ms), "labels": pair.labels},
        }
        if pair.input_media is not None:
            item["input_media"] = pair.input_media
        if pair.system_prompt_template is not None:
            item["system_prompt_template"] = pair.system_prompt_template
        data.append(item)
    header = dataset.header
    return json_response(
        {
            "id": header.dataset_id,
            "data": data,
            "system_prompt": header.system_prompt,
            "created_at": format_ms(header.created_ms),
        }
    )
