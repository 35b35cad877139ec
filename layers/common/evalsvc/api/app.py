"""The FastAPI app factory: the same routers serve each Lambda (through Mangum) and the local
server (uvicorn)."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import APIRouter, FastAPI
from fastapi.middleware.gzip import GZipMiddleware

from evalsvc.api.errors import install_error_handlers
from evalsvc.api.middleware import BodySizeLimit, JsonBodies

API_VERSION = "1.1.0"
TITLE = "Evaluation service"


def create_app(routers: Sequence[APIRouter], *, prefix: str = "", docs: bool = False) -> FastAPI:
    app = FastAPI(
        title=TITLE,
        version=API_VERSION,
        description=(
            "Datasets of input/output pairs, metrics, scoring, statistics and human feedback "
            "for LLM applications. Every error is a JSON body `{\"error\": \"...\"}`."
        ),
        docs_url=f"{prefix}/docs" if docs else None,
        redoc_url=None,
        openapi_url=f"{prefix}/openapi.json" if docs else None,
    )
    install_error_handlers(app)
    app.add_middleware(JsonBodies)
    # Whole datasets are large and repetitive: compressed, they stay far below the 6 MB
    # Lambda response limit.
    app.add_middleware(GZipMiddleware, minimum_size=64 * 1024)
    app.add_middleware(BodySizeLimit)
    for router in routers:
        app.include_router(router, prefix=prefix)
    return app
