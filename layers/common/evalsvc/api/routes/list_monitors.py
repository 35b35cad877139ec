"""GET /monitors: the tenant's monitors (E8), oldest first."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.monitor_views import monitor_out
from evalsvc.logic import monitors
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.monitors import MonitorsOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["monitors"])


@router.get("/monitors", response_model=MonitorsOut, responses=error_responses(400))
def list_monitors(identity: Identity = Depends(current_identity)) -> MonitorsOut:
    return MonitorsOut(
        monitors=[monitor_out(asked, stored) for asked, stored in monitors.list_all(identity)]
    )
