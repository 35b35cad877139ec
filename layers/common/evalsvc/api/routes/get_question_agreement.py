"""GET /question/{id}/agreement: how well the judge's scores agree with people's votes, per
metric, pooled over every evaluation made with the metrics set."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.responses import json_response
from evalsvc.logic import question_agreement
from evalsvc.models.agreement import AgreementOut, agreement_out
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses

router = APIRouter(route_class=AuthenticatedRoute, tags=["agreement"])


@router.get(
    "/question/{id}/agreement",
    response_model=AgreementOut,
    responses=error_responses(400, 404),
)
def get_question_agreement(
    request: Request,
    metrics_id: Annotated[str, Path(alias="id", description="A metrics id, or latest")],
    source: Annotated[
        str | None, Query(description="all (default), or audit: votes cast on an audit sample")
    ] = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    report = question_agreement.for_metrics_set(identity, metrics_id, source)
    return json_response(
        request, agreement_out(report, "metrics_id"), too_large="the agreement is too large"
    )
