"""DELETE /monitors/{id}: stop a monitor (E8) and remove it with its runs' records."""

from fastapi import APIRouter, Depends, Request

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.request_deadline import request_deadline
from evalsvc.api.routes.get_monitor import MonitorIdParam
from evalsvc.logic import monitors
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.monitors import MonitorDeleted

router = APIRouter(route_class=AuthenticatedRoute, tags=["monitors"])

# Time kept back from the request's deadline for the answer.
ANSWER_SECONDS = 3.0


@router.delete("/monitors/{id}", response_model=MonitorDeleted, responses=error_responses(400, 404))
def delete_monitor(
    request: Request, monitor_id: MonitorIdParam, identity: Identity = Depends(current_identity)
) -> MonitorDeleted:
    deadline = request_deadline(request)
    removed = monitors.delete(identity, monitor_id, lambda: deadline.left() > ANSWER_SECONDS)
    return MonitorDeleted(monitor_id=monitor_id, runs_removed=removed)
