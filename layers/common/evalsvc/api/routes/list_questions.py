"""GET /list_questions: every metrics set of the tenant."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.logic import metrics
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.metrics import MetricsListOut, metrics_set_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["metrics"])


@router.get("/list_questions", response_model=MetricsListOut, responses=error_responses())
def list_questions(identity: Identity = Depends(current_identity)) -> MetricsListOut:
    sets = metrics.list_metrics_sets(identity)
    return MetricsListOut(
        metrics={m.metrics_id: metrics_set_out(m) for m in sets}, total_count=len(sets)
    )
