"""GET /data/seed/{id}: a seed dataset with every pair, oldest first (`latest` allowed);
with `limit`/`cursor`, one page of it."""

from fastapi import APIRouter, Depends, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.params import DatasetIdParam, PageCursorParam, PageLimitParam
from evalsvc.api.responses import dataset_response, readable_bytes
from evalsvc.core.identifiers import format_ms
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.dataset_out import SeedDatasetOut
from evalsvc.models.datasets import DatasetKind, optional_fields_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["seed datasets"])


@router.get(
    "/data/seed/{id}", response_model=SeedDatasetOut, responses=error_responses(400, 404, 409, 413)
)
def get_seed_dataset(
    request: Request,
    dataset_id: DatasetIdParam,
    limit: PageLimitParam = None,
    cursor: PageCursorParam = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    dataset = datasets.read_dataset(
        identity,
        DatasetKind.SEED,
        dataset_id,
        max_bytes=readable_bytes(request),
        limit=limit,
        cursor=cursor,
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
        item.update(optional_fields_out(pair))
        data.append(item)
    return dataset_response(request, dataset, data, paged=limit is not None or cursor is not None)
