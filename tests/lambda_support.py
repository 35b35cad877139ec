"""Calling a function's `handler` the way Lambda does, with an events/ file."""

from __future__ import annotations

import base64
import copy
import gzip
import importlib.util
import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from tests.conftest import ROOT


@dataclass
class LambdaContext:
    function_name: str = "evalsvc-test"
    function_version: str = "1"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:evalsvc-test:live"
    aws_request_id: str = "7f5e5b2e-1111-2222-3333-444455556666"
    log_group_name: str = "/aws/lambda/evalsvc-test"
    log_stream_name: str = "2026/11/26/[1]abcdef"

    def get_remaining_time_in_millis(self) -> int:
        return 29_000


@cache
def handler_of(function: str) -> Any:
    path = ROOT / "functions" / function / "app.py"
    spec = importlib.util.spec_from_file_location(f"function_{function}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


def load_event(name: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((ROOT / "events" / f"{name}.json").read_text())
    return event


def with_body(event: dict[str, Any], body: Any) -> dict[str, Any]:
    """A copy of `event` carrying `body` (base64, as API Gateway sends it with binary types)."""
    event = copy.deepcopy(event)
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    event["body"] = base64.b64encode(raw).decode()
    event["isBase64Encoded"] = True
    return event


def with_header(event: dict[str, Any], name: str, value: str | None) -> dict[str, Any]:
    event = copy.deepcopy(event)
    for headers in (event["headers"], event["multiValueHeaders"]):
        headers.pop(name, None)
    if value is not None:
        event["headers"][name] = value
        event["multiValueHeaders"][name] = [value]
    return event


def with_path(event: dict[str, Any], **params: str) -> dict[str, Any]:
    event = copy.deepcopy(event)
    path = event["resource"]
    for key, value in params.items():
        path = path.replace("{" + key + "}", value)
    event["path"] = path
    event["pathParameters"] = params
    event["requestContext"]["path"] = "/v1" + path
    return event


def with_query(event: dict[str, Any], **params: str) -> dict[str, Any]:
    """A copy of `event` with `params` as its query string (one value each)."""
    event = copy.deepcopy(event)
    event["queryStringParameters"] = dict(params)
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in params.items()}
    return event


def invoke(function: str, event: dict[str, Any]) -> tuple[int, Any]:
    """Call the function's handler; returns (status, decoded JSON body; the bytes of a protobuf
    one)."""
    response = handler_of(function)(event, LambdaContext())
    body = response["body"]
    raw = base64.b64decode(body) if response.get("isBase64Encoded") else body.encode()
    headers = response.get("headers") or {}
    if headers.get("content-encoding") == "gzip":
        raw = gzip.decompress(raw)
    if headers.get("content-type") == "application/x-protobuf":
        return response["statusCode"], raw
    return response["statusCode"], json.loads(raw)
