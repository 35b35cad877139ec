"""GET /pairwise/{id}/report: a pairwise run (E5) as one self-contained HTML page: what was run,
the Bradley-Terry leaderboard as a forest plot, the matchups, the judge's position consistency,
people's agreement with it, and the comparisons whose two orders disagreed; progress while it
runs, the failure when it failed."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.request_deadline import request_deadline
from evalsvc.api.responses import html_response
from evalsvc.logic import pairwise_report
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses, html_page
from evalsvc.reports.pages import HEADERS, load_templates
from evalsvc.reports.pairwise_page import render_pairwise

router = APIRouter(route_class=AuthenticatedRoute, tags=["reports"])
load_templates()


@router.get(
    "/pairwise/{id}/report",
    response_class=Response,
    responses={**html_page("The pairwise report"), **error_responses(400, 404)},
)
def get_pairwise_report(
    request: Request,
    pairwise_id: Annotated[str, Path(alias="id", description="The pairwise run id")],
    identity: Identity = Depends(current_identity),
) -> Response:
    report = pairwise_report.report(identity, pairwise_id, request_deadline(request))
    return html_response(request, lambda fits: render_pairwise(report, fits), HEADERS)
