"""POST /monitors/{id}/run: run a monitor (E8) now, besides its schedule; the run goes on in the
background (follow it in GET /monitors/{id}/history). A monitor runs one run at a time: while
one runs, a 409 names it (`run_id`)."""

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.routes.get_monitor import MonitorIdParam
from evalsvc.core.identifiers import format_ms
from evalsvc.logic import monitors
from evalsvc.logic.kinds.monitor_run import parse_run_id
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.monitors import RunRunningOut, RunStarted

router = APIRouter(route_class=AuthenticatedRoute, tags=["monitors"])


@router.post(
    "/monitors/{id}/run",
    status_code=202,
    response_model=RunStarted,
    responses={
        **error_responses(400, 404, 429, 503),
        409: {
            "model": RunRunningOut,
            "description": "A run of this monitor is running (asked for, or scheduled): "
            "run_id names it; ask again once it has ended",
        },
    },
)
def run_monitor(
    monitor_id: MonitorIdParam, identity: Identity = Depends(current_identity)
) -> JSONResponse:
    run_id = monitors.run_now(identity, monitor_id)
    parsed = parse_run_id(run_id)
    assert parsed is not None
    answer = RunStarted(monitor_id=monitor_id, run_id=run_id, scheduled_for=format_ms(parsed[1]))
    # Relative to this route (/monitors/{id}/run): its history.
    return JSONResponse(answer.model_dump(), status_code=202, headers={"Location": "history"})
