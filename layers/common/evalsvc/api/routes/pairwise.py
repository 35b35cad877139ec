"""POST /pairwise (E5): which of 2-8 runs' outputs is better, judged pair by pair in both orders
and ranked. Work that fits the request is answered with the finished run (200); otherwise the
run is queued and answered at once, 202 with its id and Location, to follow with GET
/pairwise/{id} (api.queued_work)."""

from fastapi import APIRouter, Depends, Request, Response

from evalsvc.api import queued_work
from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.prefer import PreferHeader, queue_options
from evalsvc.api.responses import json_response
from evalsvc.logic import pairwise, pairwise_runs
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.jobs import Status
from evalsvc.models.pairwise import DEFAULT_VERDICTS_PAGE, PairwiseIn
from evalsvc.models.pairwise_out import PairwiseOut, PairwiseQueuedOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["pairwise"])


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
    run = pairwise.pairwise(
        identity,
        body,
        options.deadline,
        respond_async=options.respond_async,
        wait_seconds=0.0,
        request_key=options.request_key,
    )
    return queued_work.answer(
        request,
        options,
        running=run.status is Status.RUNNING,
        location=pairwise.SUBJECT.where(run.pairwise_id),
        queued=lambda: PairwiseQueuedOut(pairwise_id=run.pairwise_id, status="running"),
        done=lambda: json_response(
            request,
            pairwise_runs.run_body(identity, run, DEFAULT_VERDICTS_PAGE, None),
            too_large="this answer is too large: read it with GET /pairwise/{id}",
        ),
        # A run found complete by a retry is answered in full, respond-async or not.
        queued_when_done=False,
    )
