"""GET /compare/report: a comparison of two evaluation results (as POST /compare) as one
self-contained HTML page: a forest plot of the paired differences with their intervals, the
verdict per metric (with cluster_by, the clustered interval too), what the comparison could
see, wins, ties and losses, and the pairs that moved, side by side."""

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import ValidationError

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.errors import describe_validation_errors
from evalsvc.api.request_deadline import request_deadline
from evalsvc.api.responses import html_response
from evalsvc.core.errors import InvalidInput, PayloadTooLarge
from evalsvc.logic import reports
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses, html_page
from evalsvc.models.comparisons import CompareIn
from evalsvc.models.evaluations import ClusterBy
from evalsvc.reports.comparison_page import render_comparison
from evalsvc.reports.pages import HEADERS, load_templates

router = APIRouter(route_class=AuthenticatedRoute, tags=["reports"])
load_templates()


@router.get(
    "/compare/report",
    response_class=Response,
    responses={**html_page("The comparison report"), **error_responses(400, 404, 409, 413)},
)
def get_comparison_report(
    request: Request,
    baseline_id: Annotated[str, Query(description="The evaluation result compared against")],
    candidate_id: Annotated[str, Query(description="The evaluation result of the change")],
    alpha: Annotated[
        float | None, Query(description="Significance level (as POST /compare; 0.05)")
    ] = None,
    correction: Annotated[
        Literal["holm", "none"] | None, Query(description="holm (default) or none")
    ] = None,
    regression_threshold: Annotated[
        float | None, Query(description="A pair moved when its score changed by this (1.0)")
    ] = None,
    limit: Annotated[
        int | None, Query(description="At most this many regressions and improvements (20)")
    ] = None,
    cluster_by: Annotated[
        ClusterBy | None,
        Query(
            description="label, input or conversation: the clustered interval of each metric "
            "too, clustered by the baseline's pairs (as POST /compare); none by default"
        ),
    ] = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    given = {
        "alpha": alpha,
        "correction": correction,
        "regression_threshold": regression_threshold,
        "limit": limit,
        "cluster_by": cluster_by,
    }
    try:
        body = CompareIn.model_validate(
            {
                "baseline_id": baseline_id,
                "candidate_id": candidate_id,
                **{k: v for k, v in given.items() if v is not None},
            }
        )
    except ValidationError as exc:
        status, message = describe_validation_errors([dict(e) for e in exc.errors()])
        raise (PayloadTooLarge if status == 413 else InvalidInput)(message) from None
    report = reports.comparison_report(identity, body, request_deadline(request))
    return html_response(request, lambda fits: render_comparison(report, fits), HEADERS)
