"""GET /evaluation/{id}/report: the evaluation result as one self-contained HTML page: what was
run, a forest plot of every metric's mean and interval, a 1-5 histogram per metric, the lowest
pairs with their texts, reasons, votes and comments, and agreement; progress while it runs, the
failure when it failed."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.request_deadline import request_deadline
from evalsvc.api.responses import html_response
from evalsvc.logic import reports
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses, html_page
from evalsvc.reports.evaluation_page import render_evaluation
from evalsvc.reports.pages import HEADERS, load_templates

router = APIRouter(route_class=AuthenticatedRoute, tags=["reports"])
load_templates()


@router.get(
    "/evaluation/{id}/report",
    response_class=Response,
    responses={**html_page("The evaluation report"), **error_responses(400, 404)},
)
def get_evaluation_report(
    request: Request,
    results_id: Annotated[str, Path(alias="id", description="The evaluation result id")],
    identity: Identity = Depends(current_identity),
) -> Response:
    report = reports.evaluation_report(identity, results_id, request_deadline(request))
    return html_response(request, lambda fits: render_evaluation(report, fits), HEADERS)
