"""Turns one router into a Lambda handler: Mangum for the API Gateway event, wrapped with the
invocation's log context (correlation id = API Gateway request id), tracer and metrics."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from fastapi import APIRouter
from mangum import Mangum

from evalsvc.api.app import create_app
from evalsvc.core.observability import invocation_log_context, metrics, tracer
from evalsvc.spending.prices import check_prices

LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


def build_handler(router: APIRouter) -> LambdaHandler:
    """The handler of `router`'s function. Built at the function's start (its init), which a
    malformed EVALSVC_PRICES stops with PricesInvalid naming the problem: no request is
    served with a price table that cannot be read."""
    check_prices()
    asgi = Mangum(create_app([router]), lifespan="off")

    @invocation_log_context(correlation_id_path=correlation_paths.API_GATEWAY_REST)
    @tracer.capture_lambda_handler(capture_response=False)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        response: dict[str, Any] = asgi(event, context)
        return response

    # The Powertools decorators are untyped: say what they return.
    wrapped: LambdaHandler = handler
    return wrapped
