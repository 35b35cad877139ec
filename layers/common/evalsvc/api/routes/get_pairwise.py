"""GET /pairwise/{id} (E5): a pairwise run: its progress, then the position statistics, the
matchups and the Bradley-Terry leaderboard, a page of its verdicts, and the judge's agreement
with people's votes."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.responses import json_response
from evalsvc.logic import pairwise_runs
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.pairwise import DEFAULT_VERDICTS_PAGE, MAX_VERDICTS_PAGE
from evalsvc.models.pairwise_out import PairwiseOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["pairwise"])


@router.get("/pairwise/{id}", response_model=PairwiseOut, responses=error_responses(400, 404, 413))
def get_pairwise(
    request: Request,
    pairwise_id: Annotated[str, Path(alias="id", description="The pairwise run id")],
    limit: Annotated[
        int,
        Query(
            ge=1,
            le=MAX_VERDICTS_PAGE,
            description=f"At most this many pairs' verdicts (1-{MAX_VERDICTS_PAGE})",
        ),
    ] = DEFAULT_VERDICTS_PAGE,
    cursor: Annotated[
        str | None, Query(max_length=1024, description="The next_cursor of the previous page")
    ] = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    run = pairwise_runs.existing_run(identity, pairwise_id)
    content = pairwise_runs.run_body(identity, run, limit, cursor)
    return json_response(
        request, content, too_large="this page is too large: ask for a smaller limit"
    )
