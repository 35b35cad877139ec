"""GET /list_questions: every metrics set of the tenant; with `limit` or `cursor`, one page of
them."""

from fastapi import APIRouter, Depends, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.params import PageCursorParam, PageLimitParam
from evalsvc.api.responses import json_response, readable_bytes
from evalsvc.logic import metric_sets
from evalsvc.logic.datasets import DEFAULT_PAGE_SIZE
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.metric_set_shapes import MetricsListOut, metrics_set_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["metrics"])


@router.get("/list_questions", response_model=MetricsListOut, responses=error_responses(400, 413))
def list_questions(
    request: Request,
    limit: PageLimitParam = None,
    cursor: PageCursorParam = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    content: dict[str, object]
    if limit is None and cursor is None:
        sets = metric_sets.list_metrics_sets(identity, readable_bytes(request))
        content = {"metrics": {}, "total_count": len(sets)}
    else:
        sets, next_cursor = metric_sets.list_metrics_page(
            identity, limit or DEFAULT_PAGE_SIZE, cursor
        )
        content = {"metrics": {}, "total_count": len(sets), "next_cursor": next_cursor}
    content["metrics"] = {m.metrics_id: metrics_set_out(m).model_dump() for m in sets}
    return json_response(
        request, content, too_large="this list is too large: ask for a smaller limit"
    )
