"""This process's boto3 clients calling the embedded store (store.py) directly rather than over
HTTP: the request botocore has built is handed to the store's front door (front.py: one at a
time, writes journaled) before it is signed or sent, and a successful DynamoDB answer is read
with `json.loads` rather than botocore's shape-driven parser (docs/design.md, "What made it
slow"). Errors are parsed by botocore, so they raise exactly as they would."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from botocore.awsrequest import AWSResponse, HTTPHeaders
from botocore.parsers import create_parser
from werkzeug.test import EnvironBuilder

from evalsvc_tools.local.front import Front
from evalsvc_tools.local.journal import binary_values

# What botocore's before-call event is given, and what it answers (None: send it as usual).
DirectCall = Callable[..., "tuple[Any, Any] | None"]


class _RawBody(io.BytesIO):
    def stream(self, **_: Any) -> Iterator[bytes]:
        chunk = self.read()
        while chunk:
            yield chunk
            chunk = self.read()


def direct_caller(front: Front, endpoint: str, access_key: str, region: str) -> DirectCall:
    """The handler of botocore's before-call event that answers the requests for `endpoint`
    through `front`, unsigned (the store checks no signature) but for the `access_key` and
    `region` moto reads from the Authorization header."""
    parsers: dict[str, Any] = {}

    def call(model: Any, params: dict[str, Any], **_: Any) -> tuple[Any, Any] | None:
        url = params.get("url", "")
        if not url.startswith(endpoint):
            return None
        service = model.service_model.service_name
        headers = {
            k: v.decode() if isinstance(v, bytes) else v
            for k, v in params.get("headers", {}).items()
        }
        # Not signed (the store checks no signature); moto reads the caller's account and
        # region from this header.
        headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={access_key}/20260101/"
            f"{region}/{service}/aws4_request, SignedHeaders=host, Signature=0"
        )
        body = params.get("body") or b""
        if isinstance(body, str):
            body = body.encode()
        elif not isinstance(body, bytes):
            body = body.read()
        environ = EnvironBuilder(
            path=params.get("url_path") or "/",
            query_string=urlsplit(url).query,
            method=params.get("method", "POST"),
            headers=headers,
            data=body,
            base_url=endpoint,
        ).get_environ()
        answer: list[Any] = []

        def start_response(status: str, headers: Any, exc_info: Any = None) -> Any:
            answer[:] = [int(status.split()[0]), dict(headers)]
            return lambda data: None

        content = b"".join(front(environ, start_response))
        status, response_headers = answer
        http = AWSResponse(url, status, response_headers, _RawBody(content))
        if status == 200 and service == "dynamodb":
            parsed = json.loads(content) if content else {}
            if b'"B' in content:
                parsed = {k: binary_values(v) for k, v in parsed.items()}
        else:
            protocol = model.service_model.protocol
            if protocol not in parsers:
                parsers[protocol] = create_parser(protocol)
            parser = parsers[protocol]
            raw = {
                "status_code": status,
                "headers": HTTPHeaders(response_headers),
                "body": content,
            }
            parsed = parser.parse(raw, model.output_shape)
            code = parsed.get("Error", {}).get("Code") if status >= 300 else None
            shape = model.service_model.shape_for_error_code(code) if code else None
            if shape is not None:
                # The error's own fields (CancellationReasons, Item), as botocore adds them.
                parsed.update(parser.parse(raw, shape))
        parsed.setdefault("ResponseMetadata", {})
        parsed["ResponseMetadata"].update(
            {
                "HTTPStatusCode": status,
                "HTTPHeaders": {k.lower(): v for k, v in response_headers.items()},
                "RetryAttempts": 0,
            }
        )
        return http, parsed

    return call
