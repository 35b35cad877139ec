"""POST /evaluation/{id}/rerun: a new evaluation of exactly the pairs a result scored, read from
the dataset version it pinned, with its metric definitions, cluster_by and judge_samples. It
runs and answers as POST /evaluate does (api.evaluation_answer, api.queued_work): inline or
queued, 202 with `Prefer: respond-async`, replayed for a retry with its Idempotency-Key. The body
is optional: only `max_cost_usd` may be given."""

from typing import Annotated

from fastapi import APIRouter, Body, Depends, Path, Request
from fastapi.responses import JSONResponse

from evalsvc.api import evaluation_answer
from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.prefer import PreferHeader, queue_options
from evalsvc.logic import evaluations
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.evaluation_out import EvaluateOut
from evalsvc.models.evaluations import RerunIn

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


@router.post(
    "/evaluation/{id}/rerun",
    response_model=EvaluateOut,
    responses={
        **evaluation_answer.QUEUED_RESPONSE,
        **error_responses(400, 404, 409, 410, 413, 429, 502),
    },
)
def rerun_evaluation(
    request: Request,
    results_id: Annotated[str, Path(alias="id", description="The evaluation result to run again")],
    body: Annotated[RerunIn | None, Body()] = None,
    prefer: PreferHeader = None,
    identity: Identity = Depends(current_identity),
) -> EvaluateOut | JSONResponse:
    rerun = body or RerunIn()
    options = queue_options(request, prefer, rerun)
    result = evaluations.rerun(
        identity,
        results_id,
        rerun,
        options.deadline,
        respond_async=options.respond_async,
        wait_seconds=options.wait_seconds,
        request_key=options.request_key,
    )
    return evaluation_answer.answer(request, options, result)
