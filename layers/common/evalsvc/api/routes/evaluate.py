"""POST /evaluate: score a seed or synthetic dataset against a metrics set.

A large evaluation runs as a queued job. A plain request waits for it while it safely can (the
v1 body when it completes, else a 503 naming the result to poll); with `Prefer: respond-async`
it answers at once (202) with the result id and status (api.evaluation_answer).
"""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from evalsvc.api import evaluation_answer
from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.prefer import PreferHeader, queue_options
from evalsvc.logic import evaluations
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.evaluation_out import EvaluateOut
from evalsvc.models.evaluations import EvaluateIn

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


@router.post(
    "/evaluate",
    response_model=EvaluateOut,
    responses={
        **evaluation_answer.QUEUED_RESPONSE,
        **error_responses(400, 404, 409, 413, 429, 502),
    },
)
def evaluate(
    request: Request,
    body: EvaluateIn,
    prefer: PreferHeader = None,
    identity: Identity = Depends(current_identity),
) -> EvaluateOut | JSONResponse:
    options = queue_options(request, prefer, body)
    result = evaluations.evaluate(
        identity,
        body,
        options.deadline,
        respond_async=options.respond_async,
        wait_seconds=options.wait_seconds,
        request_key=options.request_key,
    )
    return evaluation_answer.answer(request, options, result)
