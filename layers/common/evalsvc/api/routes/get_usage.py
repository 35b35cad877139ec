"""GET /usage: the caller's tenant's LLM usage and spending in one month, with its limit."""

from typing import Annotated

from fastapi import APIRouter, Depends, Query

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.logic import spending
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.usage import MonthUsageOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["usage"])


@router.get("/usage", response_model=MonthUsageOut, responses=error_responses(400))
def get_usage(
    month: Annotated[
        str | None, Query(description="YYYY-MM (UTC); this month when not given")
    ] = None,
    identity: Identity = Depends(current_identity),
) -> MonthUsageOut:
    return spending.month_usage(identity.tenant, month)
