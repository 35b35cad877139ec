"""GET /evaluations: a page of the caller's evaluation results, newest first; with
`seed_data_id`, only those of that dataset."""

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.params import list_limit
from evalsvc.api.responses import json_response
from evalsvc.logic import results
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.evaluation_lists import EvaluationListOut, listed_evaluation_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


@router.get("/evaluations", response_model=EvaluationListOut, responses=error_responses(400))
def list_evaluations(
    request: Request,
    limit: Annotated[
        int, list_limit(results.MAX_LISTED, results.DEFAULT_LISTED, "evaluations")
    ] = results.DEFAULT_LISTED,
    cursor: Annotated[
        str | None,
        Query(description="The next_cursor of the previous page; leave it out for the newest"),
    ] = None,
    seed_data_id: Annotated[
        str | None,
        Query(
            description="Only the evaluations of this dataset (its id, seed or synthetic: the "
            "dataset_id a result shows)"
        ),
    ] = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    page = results.list_results(identity, limit, cursor, seed_data_id)
    content = {
        "evaluations": [listed_evaluation_out(listed) for listed in page.results],
        "next_cursor": page.next_cursor,
    }
    return json_response(
        request, content, too_large="this page is too large: ask for a smaller limit"
    )
