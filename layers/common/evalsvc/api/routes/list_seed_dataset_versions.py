"""GET /data/seed/{id}/versions: a seed dataset's versions, newest first: the one it holds now,
then those overwrites replaced, while they are kept (EVALSVC_VERSION_RETENTION_DAYS)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.params import DatasetIdParam, PageCursorParam, list_limit
from evalsvc.api.responses import json_response
from evalsvc.core.identifiers import format_ms
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.dataset_out import DatasetVersionsOut
from evalsvc.models.datasets import DatasetKind, VersionRecord

router = APIRouter(route_class=AuthenticatedRoute, tags=["seed datasets"])


def _version_out(record: VersionRecord) -> dict[str, object]:
    return {
        "version": record.version,
        "created_at": format_ms(record.created_ms),
        "kind": record.kind.value,
        "pairs": record.pairs,
        "replaced_at": None if record.replaced_ms is None else format_ms(record.replaced_ms),
        "expires_at": None if record.expires_ms is None else format_ms(record.expires_ms),
    }


@router.get(
    "/data/seed/{id}/versions",
    response_model=DatasetVersionsOut,
    responses=error_responses(400, 404, 413),
)
def list_seed_dataset_versions(
    request: Request,
    dataset_id: DatasetIdParam,
    limit: Annotated[
        int, list_limit(datasets.MAX_VERSIONS_PAGE, datasets.DEFAULT_VERSIONS_PAGE, "versions")
    ] = datasets.DEFAULT_VERSIONS_PAGE,
    cursor: PageCursorParam = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    page = datasets.list_versions(identity, DatasetKind.SEED, dataset_id, limit, cursor)
    content = {
        "versions": [_version_out(record) for record in page.versions],
        "next_cursor": page.next_cursor,
    }
    return json_response(
        request, content, too_large="this page is too large: ask for a smaller limit"
    )
