"""POST /questions: a metrics set of yes/no questions derived from a system prompt."""

from fastapi import APIRouter, Depends, Request

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.request_deadline import request_deadline
from evalsvc.logic import questions
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.generation import QuestionsIn
from evalsvc.models.metric_set_shapes import QuestionsOut
from evalsvc.models.usage import usage_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["metrics"])


@router.post(
    "/questions", response_model=QuestionsOut, responses=error_responses(400, 413, 429, 502)
)
def generate_questions(
    request: Request, body: QuestionsIn, identity: Identity = Depends(current_identity)
) -> QuestionsOut:
    created, usage = questions.questions_from_prompt(
        identity, body.system_prompt, request_deadline(request)
    )
    return QuestionsOut(
        metrics_id=created.metrics_id, definitions=created.definitions, usage=usage_out(usage)
    )
