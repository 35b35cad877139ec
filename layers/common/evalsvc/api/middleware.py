"""ASGI middleware run before any route: the request body limit (the Lambda synchronous payload
limit), JSON bodies accepted whatever Content-Type the client sent, and, on the local server,
each request's own log context."""

from __future__ import annotations

import json
import uuid

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from evalsvc.core.observability import log_context
from evalsvc.models.common import MAX_BODY_BYTES

TOO_LARGE = (
    f"request body is larger than {MAX_BODY_BYTES:,} bytes (4.4 MB, what one request carries "
    "through the gateway); split it"
)


class BodyTooLarge(HTTPException):
    """The body passed the limit as it streamed in (no Content-Length said so before). Raised
    from inside the app, where the route reads the body: an HTTPException, so FastAPI passes it
    on instead of calling it "an error parsing the body", and the app's error handler answers
    the same 413 as for a declared length."""

    def __init__(self) -> None:
        super().__init__(status_code=413, detail=TOO_LARGE)


async def _send_too_large(send: Send) -> None:
    body = json.dumps({"error": TOO_LARGE}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodySizeLimit:
    """Answers 413 for a body over MAX_BODY_BYTES, by its Content-Length or as it streams in."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0
                if declared > self.max_bytes:
                    await _send_too_large(send)
                    return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, tracking_send)
        except BodyTooLarge:
            if not started:
                await _send_too_large(send)


# Where JsonBodies keeps the Content-Type a request was sent with, for the one route that reads
# a body other than JSON (POST /otlp/v1/traces: OTLP in protobuf or JSON).
SENT_CONTENT_TYPE = "evalsvc.sent_content_type"


class JsonBodies:
    """Every body of this API but OTLP's is JSON. A body sent without `Content-Type:
    application/json` (curl -d sends a form type) is read as JSON all the same, instead of
    failing validation with a confusing message; the type it was sent with is kept in the
    scope (SENT_CONTENT_TYPE)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("method") in ("POST", "PUT", "PATCH"):
            headers = [(k, v) for k, v in scope.get("headers", []) if k != b"content-type"]
            content_type = next(
                (v for k, v in scope.get("headers", []) if k == b"content-type"), None
            )
            scope = {**scope, SENT_CONTENT_TYPE: content_type}
            if b"json" not in (content_type or b"").lower():
                scope["headers"] = [*headers, (b"content-type", b"application/json")]
        await self.app(scope, receive, send)


class RequestLogContext:
    """The local server's stand-in for what Lambda gives each invocation: a request id, the
    correlation id of every log line the request writes (in its own context: requests served
    at once, and the queue workers beside them, each log with their own), kept in the scope's
    state for error messages and sent back as `X-Request-Id`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = str(uuid.uuid4())
        scope.setdefault("state", {})["request_id"] = request_id

        async def with_request_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
                message = {**message, "headers": headers}
            await send(message)

        with log_context(correlation_id=request_id):
            await self.app(scope, receive, with_request_id)
