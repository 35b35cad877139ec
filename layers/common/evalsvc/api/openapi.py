"""The OpenAPI document of the whole API, as committed in docs/openapi.json
(`make openapi` regenerates it; a test fails when it drifts)."""

from __future__ import annotations

import json
from typing import Any

from evalsvc.api.app import create_app
from evalsvc.api.routes import all_routers


def openapi_document() -> dict[str, Any]:
    document = create_app(all_routers(), docs=True).openapi()
    document["servers"] = [
        {"url": "http://127.0.0.1:3000/v1", "description": "make run"},
        {
            "url": "https://{api_id}.execute-api.{region}.amazonaws.com/v1",
            "description": "deployed",
            "variables": {"api_id": {"default": "api_id"}, "region": {"default": "us-east-1"}},
        },
    ]
    return document


def render() -> str:
    return json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    print(render(), end="")
