"""Every error leaves the service as `{"error": "..."}` with the status the contract fixes. This
is the one place domain exceptions, validation errors and unknown routes become HTTP."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from evalsvc.core.errors import DomainError
from evalsvc.core.observability import logger

# Validation errors that mean "over a size limit" answer 413; every other one 400.
_TOO_LARGE_TYPES = frozenset({"string_too_long", "too_long"})


def error_response(
    status: int,
    message: str,
    headers: dict[str, str] | None = None,
    fields: dict[str, str] | None = None,
) -> JSONResponse:
    """`{"error": message}`, with an error's `fields` beside it (a 409's run_id)."""
    return JSONResponse(
        status_code=status, content={"error": message, **(fields or {})}, headers=headers
    )


def _location(loc: Sequence[Any]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    text = ""
    for part in parts:
        if part.isdigit():
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def describe_validation_errors(errors: Sequence[dict[str, Any]]) -> tuple[int, str]:
    """The status and one readable message for a list of pydantic/FastAPI validation errors."""
    status = 413 if any(e.get("type") in _TOO_LARGE_TYPES for e in errors) else 400
    messages: list[str] = []
    for error in errors[:5]:
        kind = error.get("type", "")
        where = _location(error.get("loc", ()))
        if kind == "json_invalid":
            detail = error.get("ctx", {}).get("error", "")
            messages.append(
                f"request body is not valid JSON ({detail})"
                if detail
                else "request body is not valid JSON"
            )
            continue
        if kind == "missing" and where == "":
            messages.append("request body is required: send a JSON object")
            continue
        if where == "" and kind in ("model_attributes_type", "dict_type", "model_type"):
            messages.append("request body must be a JSON object")
            continue
        message = str(error.get("msg", "is not valid"))
        if kind == "dict_type":
            message = "must be a JSON object"
        message = message.removeprefix("Value error, ")
        messages.append(f"{where}: {message}" if where else f"request body: {message}")
    if len(errors) > 5:
        messages.append(f"and {len(errors) - 5} more")
    return status, "; ".join(messages)


def route_relative(request: Request, path: str) -> str:
    """`path`, relative to the API's base URL (`evaluation/<id>`, as logic names what to
    follow), as a `Location` relative to the URL of the route `request` matched, which is what
    a client resolves it against (RFC 9110): unchanged from a route at the base (/evaluate),
    `../../evaluation/<id>` from /evaluation/{id}/rerun."""
    route = request.scope.get("route")
    template = str(getattr(route, "path", "/"))
    return "../" * (template.count("/") - 1) + path


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(DomainError)
    async def _domain(request: Request, exc: DomainError) -> JSONResponse:
        headers = exc.headers
        if headers and "Location" in headers:
            headers = {**headers, "Location": route_relative(request, headers["Location"])}
        return error_response(exc.status_code, exc.message, headers, exc.fields)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        status, message = describe_validation_errors(exc.errors())
        return error_response(status, message)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404:
            message = f"no route {request.method} {request.url.path}"
        elif exc.status_code == 405:
            message = f"method {request.method} is not allowed on {request.url.path}"
            allowed = allowed_methods(request)
            if allowed:
                return error_response(405, message, headers={"Allow": ", ".join(allowed)})
        else:
            message = str(exc.detail)
        return error_response(exc.status_code, message, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        request_id = request_id_of(request)
        logger.exception("unexpected error", extra={"request_id": request_id})
        return error_response(500, f"internal error (request id {request_id})")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route answers on this request's path."""
    path = request.url.path
    root = str(request.scope.get("root_path") or "")
    if root and path.startswith(root):
        path = path[len(root) :]
    matching = [
        (regex, methods)
        for regex, methods in getattr(request.app.state, "route_methods", [])
        if regex.match(path)
    ]
    # A literal path (/data/seed/pair) is its own resource, even where a template
    # (/data/seed/{id}) would also match it.
    literal = [methods for regex, methods in matching if regex.groups == 0]
    chosen = literal or [methods for _, methods in matching]
    return sorted(set().union(*chosen)) if chosen else []


def request_id_of(request: Request) -> str:
    event = request.scope.get("aws.event") or {}
    context = event.get("requestContext") or {}
    state = request.scope.get("state") or {}
    return str(
        context.get("requestId")
        or state.get("request_id")
        or request.headers.get("x-request-id")
        or "local"
    )
