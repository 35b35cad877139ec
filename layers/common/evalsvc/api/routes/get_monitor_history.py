"""GET /monitors/{id}/history: a monitor's runs (E8), newest first, each with its metrics'
means and intervals, verdicts against its baseline, cost, and what became of its alert."""

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.monitor_views import run_out
from evalsvc.api.params import PageCursorParam, list_limit
from evalsvc.api.responses import json_response
from evalsvc.api.routes.get_monitor import MonitorIdParam
from evalsvc.logic import monitor_history
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.monitors import RunsOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["monitors"])


@router.get(
    "/monitors/{id}/history", response_model=RunsOut, responses=error_responses(400, 404, 413)
)
def get_monitor_history(
    request: Request,
    monitor_id: MonitorIdParam,
    limit: Annotated[
        int, list_limit(monitor_history.MAX_HISTORY, monitor_history.DEFAULT_HISTORY, "runs")
    ] = monitor_history.DEFAULT_HISTORY,
    cursor: PageCursorParam = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    page = monitor_history.history(identity, monitor_id, limit, cursor)
    content = {
        "runs": [run_out(run, names).model_dump() for run, names in page.runs],
        "next_cursor": page.next_cursor,
    }
    return json_response(
        request, content, too_large="this page is too large: ask for a smaller limit"
    )
