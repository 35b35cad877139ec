"""GET /question/{id}: one metrics set (`latest` = the tenant's newest)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.logic import metric_sets
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.metric_set_shapes import MetricsSetOut, metrics_set_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["metrics"])


@router.get("/question/{id}", response_model=MetricsSetOut, responses=error_responses(400, 404))
def get_question(
    metrics_id: Annotated[str, Path(alias="id", description="A metrics id, or latest")],
    identity: Identity = Depends(current_identity),
) -> MetricsSetOut:
    return metrics_set_out(metric_sets.get_metrics_set(identity, metrics_id))
