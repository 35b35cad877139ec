"""GET /data/synthetic/{id}: a synthetic dataset (`latest` = the most recently created); with
`limit`/`cursor`, one page of it."""

from fastapi import APIRouter, Depends, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.params import DatasetIdParam, PageCursorParam, PageLimitParam
from evalsvc.api.responses import dataset_response, readable_bytes
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.dataset_out import SyntheticDatasetOut
from evalsvc.models.datasets import DatasetKind, Pair, optional_fields_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["synthetic datasets"])


def _pair_out(pair: Pair) -> dict[str, object]:
    out: dict[str, object] = {"id": pair.id, "input": pair.input, "output": pair.output}
    out.update(optional_fields_out(pair))
    return out


@router.get(
    "/data/synthetic/{id}",
    response_model=SyntheticDatasetOut,
    responses=error_responses(400, 404, 409, 413),
)
def get_synthetic_dataset(
    request: Request,
    dataset_id: DatasetIdParam,
    limit: PageLimitParam = None,
    cursor: PageCursorParam = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    dataset = datasets.read_dataset(
        identity,
        DatasetKind.SYNTHETIC,
        dataset_id,
        max_bytes=readable_bytes(request),
        limit=limit,
        cursor=cursor,
    )
    data = [_pair_out(pair) for pair in dataset.pairs]
    return dataset_response(request, dataset, data, paged=limit is not None or cursor is not None)
