"""GET /monitors/{id}/report: a monitor's trend (E8) as one self-contained HTML page: each
metric's mean with its interval over the runs, regressions marked, failures and alerts."""

from fastapi import APIRouter, Depends, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.responses import html_response
from evalsvc.api.routes.get_monitor import MonitorIdParam
from evalsvc.logic import reports
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses, html_page
from evalsvc.reports.monitor_page import render_monitor
from evalsvc.reports.pages import HEADERS, load_templates

router = APIRouter(route_class=AuthenticatedRoute, tags=["reports"])
load_templates()


@router.get(
    "/monitors/{id}/report",
    response_class=Response,
    responses={**html_page("The monitor's trend report"), **error_responses(400, 404)},
)
def get_monitor_report(
    request: Request, monitor_id: MonitorIdParam, identity: Identity = Depends(current_identity)
) -> Response:
    report = reports.monitor_report(identity, monitor_id)
    return html_response(request, lambda fits: render_monitor(report, fits), HEADERS)
