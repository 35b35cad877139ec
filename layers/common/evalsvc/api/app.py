"""The FastAPI app factory: the same routers serve each Lambda (through Mangum) and the local
server (uvicorn)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from evalsvc.api.errors import install_error_handlers
from evalsvc.api.middleware import BodySizeLimit, JsonBodies, RequestLogContext

API_VERSION = "1.1.0"
VERSION_PREFIX = "/v1"
TITLE = "Evaluation service"


def create_app(routers: Sequence[APIRouter], *, docs: bool = False) -> FastAPI:
    """The API with `routers` at their contract paths (`/data/seed/{id}`…). With `docs`, it also
    serves /openapi.json and /docs, the API reference drawn from it by the server
    (evalsvc.api.reference: no script, nothing loaded from anywhere)."""
    app = FastAPI(
        title=TITLE,
        version=API_VERSION,
        description=(
            "Datasets of input/output pairs, metrics, scoring, statistics and human feedback "
            'for LLM applications. Every error is a JSON body `{"error": "..."}`.'
        ),
        # Not FastAPI's Swagger UI: its page runs a script from another origin, on the origin
        # where the review app keeps a reviewer's API key. /docs is the server-drawn reference.
        docs_url=None,
        redoc_url=None,
        openapi_url="/openapi.json" if docs else None,
        # A slash redirect is built from the request's Host header: `GET /data/seed/x/` with
        # `Host: evil.example` would send the caller to http://evil.example/. A path with a
        # trailing slash is an unknown route (JSON 404) instead.
        redirect_slashes=False,
    )
    install_error_handlers(app)
    app.add_middleware(JsonBodies)
    app.add_middleware(BodySizeLimit)
    for router in routers:
        app.include_router(router)
    # Every method each path answers, across routers: a 405 lists them all in `Allow`.
    app.state.route_methods = [
        (route.path_regex, frozenset(route.methods or ()))
        for router in routers
        for route in router.routes
        if isinstance(route, APIRoute)
    ]
    _document_errors_as_they_are(app)
    if docs:
        _serve_reference(app)
    return app


def create_versioned_app(routers: Sequence[APIRouter]) -> FastAPI:
    """The API under /v1, as the local server serves it (API Gateway's stage plays that part
    when deployed), each request with its own request id and log context (what Lambda gives an
    invocation). Anything outside /v1 is a JSON 404 too."""
    root = FastAPI(docs_url=None, redoc_url=None, openapi_url=None, redirect_slashes=False)
    install_error_handlers(root)
    root.add_middleware(RequestLogContext)
    root.mount(VERSION_PREFIX, create_app(routers, docs=True))
    return root


def _serve_reference(app: FastAPI) -> None:
    """GET /docs: the API reference, beside /openapi.json (linked relatively, so it holds
    wherever the app is mounted). Imported here: a Lambda's app has no docs, and its start
    imports neither Jinja2 nor the page's files."""
    from evalsvc.api import reference

    page = reference.page_once(app.openapi, "openapi.json")

    def docs(request: Request) -> Response:  # sync: drawn once, on a worker thread
        return Response(page(), media_type="text/html; charset=utf-8", headers=reference.HEADERS)

    app.add_route("/docs", docs, methods=["GET"], include_in_schema=False)


def _document_errors_as_they_are(app: FastAPI) -> None:
    """FastAPI documents a 422 for validation errors; this API answers 400 (or 413) with
    `{"error": ...}` instead, so the document says that."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = generate()
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                operation.get("responses", {}).pop("422", None)
        schemas = document.get("components", {}).get("schemas", {})
        schemas.pop("HTTPValidationError", None)
        schemas.pop("ValidationError", None)
        app.openapi_schema = document
        return document

    app.openapi = openapi  # type: ignore[method-assign]
