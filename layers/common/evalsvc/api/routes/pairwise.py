"""POST /pairwise (E5): which of 2-8 runs' outputs is better, judged pair by pair in both orders
and ranked. Work that fits the request is answered with the finished run (200); otherwise the
run is queued and answered at once, 202 with its id and Location, to follow with GET
/pairwise/{id}."""

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.prefer import PreferHeader, async_answer, queue_options
from evalsvc.api.responses import json_response
from evalsvc.core.errors import StillRunning
from evalsvc.logic import pairwise
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.jobs import Status
from evalsvc.models.pairwise import (
    DEFAULT_VERDICTS_PAGE,
    PairwiseIn,
    PairwiseOut,
    PairwiseQueuedOut,
)

router = APIRouter(route_class=AuthenticatedRoute, tags=["pairwise"])


def _queued(pairwise_id: str) -> JSONResponse:
    body = PairwiseQueuedOut(pairwise_id=pairwise_id, status="running")
    return async_answer(body, running=True, location=f"pairwise/{pairwise_id}")


@router.post(
    "/pairwise",
    response_model=PairwiseOut,
    responses={
        202: {"model": PairwiseQueuedOut, "description": "Queued: follow it at Location"},
        **error_responses(400, 404, 409, 410, 413, 429, 502),
    },
)
def post_pairwise(
    request: Request,
    body: PairwiseIn,
    prefer: PreferHeader = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    options = queue_options(request, prefer, body)
    try:
        run = pairwise.pairwise(
            identity,
            body,
            options.deadline,
            respond_async=options.respond_async,
            wait_seconds=0.0,
            request_key=options.request_key,
        )
    except StillRunning as running:
        # Queued (or handed over mid-request): E5 answers 202 rather than waiting.
        location = (running.headers or {}).get("Location", "")
        return _queued(location.removeprefix("pairwise/"))
    if run.status is Status.RUNNING:
        return _queued(run.pairwise_id)
    content = pairwise.run_body(identity, run, DEFAULT_VERDICTS_PAGE, None)
    return json_response(
        request, content, too_large="this answer is too large: read it with GET /pairwise/{id}"
    )
