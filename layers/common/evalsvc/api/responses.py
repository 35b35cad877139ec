"""Response bodies: large ones serialised once (no second validation pass), compressed when the
client accepts gzip, and checked against the Lambda response limit."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import Request, Response

from evalsvc.core.errors import PayloadTooLarge
from evalsvc.core.identifiers import format_ms
from evalsvc.logic.datasets import too_large_for_one_response
from evalsvc.models.datasets import Dataset

# Lambda's synchronous response limit is 6 MB for the whole proxy response, less headroom for
# the status line and headers.
MAX_RESPONSE_BYTES = 6 * 1024 * 1024 - 64 * 1024
GZIP_MIN_BYTES = 64 * 1024
# The most text worth reading for one compressed response: it fits only if gzip shrinks it
# about 8 times; more would be read (and held) for nothing.
MAX_COMPRESSIBLE_BYTES = 32 * 1024 * 1024


def accepts_gzip(request: Request) -> bool:
    return "gzip" in request.headers.get("accept-encoding", "")


def readable_bytes(request: Request) -> int:
    """How much text may be read to answer `request` in one response: what can fit, known
    before anything is read (JSON is never smaller than its text; gzip rarely shrinks text by
    more than 8 times)."""
    return MAX_COMPRESSIBLE_BYTES if accepts_gzip(request) else MAX_RESPONSE_BYTES


def or_gzip(request: Request, too_large: str) -> str:
    """`too_large`, saying also to ask compressed when the client did not: a pair with its
    texts at their limits (E10's reference and contexts with them, 700,000 characters) in
    text outside ASCII escapes to over 8 MB uncompressed, and fits one response only gzipped,
    so a smaller page alone does not help."""
    if accepts_gzip(request):
        return too_large
    return f"{too_large}; or ask with Accept-Encoding: gzip (long texts may fit only compressed)"


def _proxy_bytes(body: bytes, compressed: bool) -> int:
    """How many bytes `body` takes in the Lambda proxy response: base64 when compressed,
    otherwise a JSON string (quotes and non-ASCII characters escaped)."""
    if compressed:
        return 4 * -(-len(body) // 3)
    if len(body) * 6 < MAX_RESPONSE_BYTES:
        return len(body)  # even escaped, it fits: skip the work
    return len(json.dumps(body.decode()))


def _encoded(request: Request, body: bytes) -> tuple[bytes, bool]:
    """`body` as sent to `request`: gzipped when it is large and the client accepts gzip; and
    whether it was."""
    compressed = len(body) >= GZIP_MIN_BYTES and accepts_gzip(request)
    return (gzip.compress(body, compresslevel=5) if compressed else body), compressed


def _fits(sent: bytes, compressed: bool) -> bool:
    return _proxy_bytes(sent, compressed) <= MAX_RESPONSE_BYTES


def _response(
    sent: bytes, compressed: bool, media_type: str, headers: Mapping[str, str] | None = None
) -> Response:
    fields = {"Vary": "Accept-Encoding", **(headers or {})}
    if compressed:
        fields["Content-Encoding"] = "gzip"
    return Response(content=sent, media_type=media_type, headers=fields)


def json_response(request: Request, content: Any, *, too_large: str) -> Response:
    """`content` as JSON; a 413 saying `too_large` if it cannot be returned in one response."""
    body = json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()
    sent, compressed = _encoded(request, body)
    if not _fits(sent, compressed):
        raise PayloadTooLarge(too_large)
    return _response(sent, compressed, "application/json")


def html_response(
    request: Request,
    render: Callable[[Callable[[bytes], bool]], bytes],
    headers: Mapping[str, str],
) -> Response:
    """A page drawn by `render`, which is told what fits in one response (compressed when the
    client accepts gzip) and cuts the page until it does."""
    last: list[tuple[bytes, bytes, bool]] = []  # the page last checked, as it would be sent

    def fits(body: bytes) -> bool:
        last[:] = [(body, *_encoded(request, body))]
        return _fits(*last[0][1:])

    body = render(fits)
    if last and last[0][0] is body:
        _, sent, compressed = last[0]
    else:
        sent, compressed = _encoded(request, body)
    return _response(sent, compressed, "text/html; charset=utf-8", headers)


def dataset_response(
    request: Request, dataset: Dataset, data: list[dict[str, Any]], *, paged: bool
) -> Response:
    """A dataset (or one page of it) with `data` as its pairs."""
    header = dataset.header
    content: dict[str, Any] = {
        "id": header.dataset_id,
        "data": data,
        "system_prompt": header.system_prompt,
        "created_at": format_ms(header.created_ms),
    }
    if paged:
        content["next_cursor"] = dataset.next_cursor.encode() if dataset.next_cursor else None
    too_large = too_large_for_one_response(header).message
    if paged:
        too_large = (
            "this page is too large for one response: ask for fewer pairs with a smaller limit"
        )
    return json_response(request, content, too_large=or_gzip(request, too_large))
