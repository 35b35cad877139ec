"""Authentication for every route: the key is checked before the body is even parsed, so an
unauthenticated caller learns nothing about validation."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response, Security
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from fastapi.security import APIKeyHeader

from evalsvc.api.request_deadline import mark_arrival
from evalsvc.core.observability import add_log_keys
from evalsvc.logic.api_keys import authenticate
from evalsvc.models.api_keys import Identity

IDEMPOTENT_METHODS = frozenset({"POST", "PUT"})
IDEMPOTENCY_HEADER = "idempotency-key"

# Documents the header in the OpenAPI document; the check itself happens in AuthenticatedRoute.
api_key_header = APIKeyHeader(
    name="Authorization",
    auto_error=False,
    description="The API key, alone or as `Bearer <key>`.",
)


class AuthenticatedRoute(APIRoute):
    """A route that authenticates the caller first, then runs FastAPI's usual handling."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def authenticated(request: Request) -> Response:
            mark_arrival(request)
            header = request.headers.get("authorization")
            identity = await run_in_threadpool(authenticate, header)
            request.state.identity = identity
            # Every later log line of this request names the caller: its tenant and its key's
            # id (never the key, nor its hash). The request's own context holds them, so
            # requests served at once in one process never mix them.
            add_log_keys(tenant=identity.tenant, key_id=identity.key_id)
            if request.method in IDEMPOTENT_METHODS and IDEMPOTENCY_HEADER in request.headers:
                # Imported on first use: Powertools idempotency costs ~55 ms of cold start that
                # requests without the header (and every GET function) need not pay.
                from evalsvc.api import idempotency

                return await idempotency.handle_idempotently(request, identity, handle)
            return await handle(request)

        return authenticated


def current_identity(request: Request, _key: str | None = Security(api_key_header)) -> Identity:
    identity: Identity = request.state.identity
    return identity
