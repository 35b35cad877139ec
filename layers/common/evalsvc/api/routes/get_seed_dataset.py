"""GET /data/seed/{id}: a seed dataset with every pair, oldest first (`latest` allowed);
with `limit`/`cursor`, one page of it."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.responses import dataset_response
from evalsvc.identifiers import format_ms
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import PAGE_CURSOR_DOC, PAGE_LIMIT_DOC, error_responses
from evalsvc.models.datasets import DatasetKind, SeedDatasetOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["seed datasets"])


@router.get(
    "/data/seed/{id}", response_model=SeedDatasetOut, responses=error_responses(400, 404, 409, 413)
)
def get_seed_dataset(
    request: Request,
    dataset_id: Annotated[str, Path(alias="id")],
    limit: Annotated[
        int | None, Query(ge=1, le=datasets.MAX_PAGE_SIZE, description=PAGE_LIMIT_DOC)
    ] = None,
    cursor: Annotated[str | None, Query(max_length=1024, description=PAGE_CURSOR_DOC)] = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    dataset = datasets.read_dataset(
        identity, DatasetKind.SEED, dataset_id, limit=limit, cursor=cursor
    )
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
    return dataset_response(request, dataset, data, paged=limit is not None or cursor is not None)
