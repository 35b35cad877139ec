"""POST /monitors: a monitor (E8), evaluation that runs on its own on a schedule, compares each
run with its baseline and alerts a webhook when quality drops."""

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.core.identifiers import format_ms
from evalsvc.logic import monitor_create
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.monitors import MonitorCreated, MonitorIn

router = APIRouter(route_class=AuthenticatedRoute, tags=["monitors"])


@router.post(
    "/monitors",
    status_code=201,
    response_model=MonitorCreated,
    responses=error_responses(400, 404, 409, 413),
)
def create_monitor(body: MonitorIn, identity: Identity = Depends(current_identity)) -> JSONResponse:
    created = monitor_create.create(identity, body)
    answer = MonitorCreated(
        monitor_id=created.monitor_id, next_run_at=format_ms(created.next_run_ms)
    )
    return JSONResponse(
        answer.model_dump(), status_code=201, headers={"Location": f"monitors/{created.monitor_id}"}
    )
