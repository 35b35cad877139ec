"""POST /specify_questions: create a metrics set from definitions (questions or checks)."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.logic import metric_set_create
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.metric_set_shapes import MetricsCreated, SpecifyQuestionsIn

router = APIRouter(route_class=AuthenticatedRoute, tags=["metrics"])


@router.post(
    "/specify_questions", response_model=MetricsCreated, responses=error_responses(400, 413)
)
def specify_questions(
    body: SpecifyQuestionsIn, identity: Identity = Depends(current_identity)
) -> MetricsCreated:
    created = metric_set_create.create_metrics_set(
        identity, body.metrics, judges=body.judges, jury=body.jury
    )
    return MetricsCreated(
        metrics_id=created.metrics_id,
        definitions=created.definitions,
        judges=created.judges,
        jury=created.jury if created.judges else None,
    )
