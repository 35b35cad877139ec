"""POST /improve_prompt: an improved system prompt from prompt comparison results."""

from fastapi import APIRouter, Depends, Request

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.request_deadline import request_deadline
from evalsvc.logic import improve_prompt as improvement
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.generation import ImprovePromptIn, ImprovePromptOut
from evalsvc.models.usage import usage_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["generation"])


@router.post(
    "/improve_prompt",
    response_model=ImprovePromptOut,
    responses=error_responses(400, 404, 413, 429),
)
def improve_prompt(
    request: Request, body: ImprovePromptIn, identity: Identity = Depends(current_identity)
) -> ImprovePromptOut:
    done = improvement.improve_prompt(identity, body, request_deadline(request))
    return ImprovePromptOut(
        improved_prompt=done.improved_prompt,
        original_prompt=done.original_prompt,
        metrics_id=done.metrics_id,
        usage=usage_out(done.usage),
    )
