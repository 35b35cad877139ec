"""A request's deadline: API Gateway answers 504 to the caller 29 s after it received the
request, whatever the function is still doing; the function itself stops at its timeout.
Every route that may run long plans against `request_deadline`."""

from __future__ import annotations

import time
from typing import Any

from fastapi import Request

from evalsvc.core.deadlines import Deadline, lambda_remaining
from evalsvc.core.settings import get_settings

ARRIVED = "evalsvc.arrived"


def mark_arrival(request: Request) -> None:
    """Remember when the request reached this process (the first thing a route does)."""
    request.scope.setdefault(ARRIVED, time.monotonic())


def _gateway_elapsed(event: Any, limit: float) -> float | None:
    """Seconds since API Gateway received the request (its requestTimeEpoch), if known and
    believable: an epoch from before the gateway's limit (a sample event replayed by `sam local
    invoke`, a skewed clock) is not."""
    try:
        received_ms = float(event["requestContext"]["requestTimeEpoch"])
    except (KeyError, TypeError, ValueError):
        return None
    elapsed = time.time() - received_ms / 1000
    return max(0.0, elapsed) if elapsed < limit else None


def request_deadline(request: Request) -> Deadline:
    """When this request must have answered: EVALSVC_REQUEST_SECONDS (29, API Gateway's limit)
    after the gateway received it (or after it arrived here), or the Lambda's timeout if that
    comes first."""
    limit = get_settings().request_seconds
    elapsed = _gateway_elapsed(request.scope.get("aws.event"), limit)
    if elapsed is None:
        arrived = request.scope.get(ARRIVED, time.monotonic())
        elapsed = time.monotonic() - arrived
    deadline = Deadline.after(limit - elapsed)
    remaining = lambda_remaining(request.scope.get("aws.context"))
    if remaining is not None:
        deadline = deadline.sooner_of(Deadline.after(remaining))
    return deadline
