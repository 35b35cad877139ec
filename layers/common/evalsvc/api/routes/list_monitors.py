"""GET /monitors: the tenant's monitors (E8), oldest first, in pages (all of them by default: a
tenant keeps at most 100)."""

from typing import Annotated

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.monitor_views import monitor_out
from evalsvc.api.params import PageCursorParam, list_limit
from evalsvc.logic import monitors
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.monitors import MonitorsOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["monitors"])


@router.get("/monitors", response_model=MonitorsOut, responses=error_responses(400, 413))
def list_monitors(
    limit: Annotated[
        int, list_limit(monitors.MAX_MONITORS, monitors.MAX_MONITORS, "monitors")
    ] = monitors.MAX_MONITORS,
    cursor: PageCursorParam = None,
    identity: Identity = Depends(current_identity),
) -> MonitorsOut:
    page = monitors.list_page(identity, limit, cursor)
    return MonitorsOut(
        monitors=[monitor_out(asked, stored) for asked, stored in page.monitors],
        next_cursor=page.next_cursor,
    )
