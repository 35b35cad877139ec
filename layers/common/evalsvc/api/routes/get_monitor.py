"""GET /monitors/{id}: one monitor (E8) as asked for (never its webhook secret), and when it
runs next."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.monitor_views import monitor_out
from evalsvc.logic import monitors
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.monitors import MonitorOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["monitors"])

MonitorIdParam = Annotated[str, Path(alias="id", description="The monitor id")]


@router.get("/monitors/{id}", response_model=MonitorOut, responses=error_responses(400, 404))
def get_monitor(
    monitor_id: MonitorIdParam, identity: Identity = Depends(current_identity)
) -> MonitorOut:
    return monitor_out(*monitors.get(identity, monitor_id))
