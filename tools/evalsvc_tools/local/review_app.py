"""The review app (E9) in the local server: /app/ beside the API's /v1, answered by the same
evalsvc.handlers.review_app as the ReviewAppFunction deployed, with the API at /v1."""

from __future__ import annotations

from pathlib import Path

from evalsvc.api.app import VERSION_PREFIX
from evalsvc.handlers.review_app import WebApp
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response

from evalsvc_tools.local.tables import find_template

# Where the app's files are, in the repository (the function's code, as deployed).
STATIC = Path("functions") / "review_app" / "static"


def static_directory() -> Path:
    return find_template().parent / STATIC


def mount_review_app(app: FastAPI, directory: Path | None = None) -> WebApp:
    web = WebApp(directory or static_directory())

    async def serve(request: Request) -> Response:
        headers = {name.lower(): value for name, value in request.headers.items()}
        answer = web.respond(
            request.path_params.get("path", ""),
            api_base=VERSION_PREFIX,
            app_base="/app",
            headers=headers,
            method=request.method,
        )
        return Response(answer.body, status_code=answer.status, headers=answer.headers)

    app.add_route("/app", serve, methods=["GET", "HEAD"])
    app.add_route("/app/{path:path}", serve, methods=["GET", "HEAD"])
    return web
