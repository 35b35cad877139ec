"""An OTLP/HTTP trace export body, read into an ExportTraceServiceRequest.

The body is protobuf (`application/x-protobuf`) or OTLP/JSON (`application/json`), as is or
gzip-compressed (`Content-Encoding: gzip`). Every step is bounded: the body, compressed or not,
is at most MAX_BODY_BYTES (decompressed a piece at a time, so a small body that would inflate to
gigabytes stops at the limit), JSON is read within bounded_json's bounds, and an export holds at
most MAX_SPANS spans. A body that cannot be read raises InvalidInput (400), one over a limit
PayloadTooLarge (413), another type or encoding UnsupportedMediaType (415): each with a message
that tells the sender what to fix.

OTLP/JSON is protobuf's JSON mapping but for trace and span ids, which it writes in hex (the
mapping would read base64): those are turned into what json_format reads before it reads the
rest. Enums may be names or integers, 64-bit integers strings or numbers, and fields it does not
know are ignored, as a receiver must.
"""

from __future__ import annotations

import base64
import re
import zlib
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from evalsvc.core.errors import InvalidInput, PayloadTooLarge, UnsupportedMediaType
from evalsvc.logic.otlp.json_text import NotJson, read_json

MAX_BODY_BYTES = 32 * 1024 * 1024
MAX_SPANS = 10_000
PROTOBUF = "application/x-protobuf"
JSON = "application/json"
# What a library's error adds to a message, at most (it may quote the value it could not read).
_DETAIL_CHARS = 300

_ACCEPTED_TYPES = f"send {PROTOBUF} (OTLP protobuf) or {JSON} (OTLP/JSON)"
# Hex digits of each id OTLP/JSON writes in hex: 16-byte trace ids, 8-byte span ids.
_TRACE_ID_DIGITS = 32
_SPAN_ID_DIGITS = 16
_HEX = re.compile(r"[0-9a-fA-F]*")
_FAILED_FIELD = re.compile(r"Failed to parse (\w+) field: ")


def _detail(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= _DETAIL_CHARS else text[:_DETAIL_CHARS] + "..."


def _parse_detail(exc: Exception) -> str:
    """json_format's error, its chain of "Failed to parse X field: " written as a path (so the
    cause at its end is not cut off with the rest)."""
    text = str(exc)
    fields = _FAILED_FIELD.findall(text)
    cause = _FAILED_FIELD.sub("", text) or type(exc).__name__
    if len(cause) > _DETAIL_CHARS:
        cause = cause[:_DETAIL_CHARS] + "..."
    return f"{'.'.join(fields)}: {cause}" if fields else cause


def media_type(content_type: str | None) -> str:
    """PROTOBUF or JSON, from a Content-Type header (parameters and case aside)."""
    if not content_type or not content_type.strip():
        raise UnsupportedMediaType(f"the request has no Content-Type: {_ACCEPTED_TYPES}")
    media = content_type.split(";", 1)[0].strip().lower()
    if media not in (PROTOBUF, JSON):
        raise UnsupportedMediaType(
            f"Content-Type {content_type[:100]!r} is not read here: {_ACCEPTED_TYPES}"
        )
    return media


def _gunzip(body: bytes) -> bytes:
    """`body` decompressed (every gzip member in turn), never past MAX_BODY_BYTES."""
    out = bytearray()
    rest = body
    while True:
        member = zlib.decompressobj(16 + zlib.MAX_WBITS)
        while not member.eof:
            # One byte more than the limit allows: reaching it says the body is over.
            piece = member.decompress(rest, MAX_BODY_BYTES + 1 - len(out))
            out += piece
            if len(out) > MAX_BODY_BYTES:
                raise PayloadTooLarge(
                    f"the body is over {MAX_BODY_BYTES // (1024 * 1024)} MiB "
                    f"({MAX_BODY_BYTES:,} bytes) once decompressed: send fewer spans per export"
                )
            rest = member.unconsumed_tail
            if not piece and not rest:
                raise InvalidInput(
                    "the gzip body ends before its end (Content-Encoding: gzip): send the "
                    "whole compressed body"
                )
        rest = member.unused_data
        if not rest:
            return bytes(out)


def decompressed(body: bytes, content_encoding: str | None) -> bytes:
    """The body as sent (no Content-Encoding, or identity), or gunzipped (gzip)."""
    if len(body) > MAX_BODY_BYTES:
        raise PayloadTooLarge(
            f"the body is {len(body):,} bytes; at most {MAX_BODY_BYTES:,} "
            f"({MAX_BODY_BYTES // (1024 * 1024)} MiB) are read: send fewer spans per export"
        )
    encoding = (content_encoding or "").strip().lower()
    if encoding in ("", "identity"):
        return body
    if encoding != "gzip":
        raise UnsupportedMediaType(
            f"Content-Encoding {(content_encoding or '')[:100]!r} is not read here: send the body "
            "as is, or gzip-compressed with Content-Encoding: gzip"
        )
    try:
        return _gunzip(body)
    except zlib.error as exc:
        raise InvalidInput(
            f"the body is not gzip (Content-Encoding: gzip): {_detail(exc)}; send it "
            "gzip-compressed, or as is without Content-Encoding"
        ) from exc


def _too_many_spans(count: int) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"the export holds {count:,} spans; at most {MAX_SPANS:,} are read in one export: "
        "send fewer spans per export"
    )


def _from_protobuf(data: bytes) -> ExportTraceServiceRequest:
    try:
        return ExportTraceServiceRequest.FromString(data)
    except DecodeError as exc:
        raise InvalidInput(
            f"body is not an OTLP ExportTraceServiceRequest in protobuf: {_detail(exc)}"
        ) from exc


def _hex_id_as_base64(value: object, where: str, digits: int) -> str | None:
    """A hex id of OTLP/JSON as json_format reads bytes (base64); InvalidInput naming `where`."""
    what = f"{where} must be {digits} hex digits (OTLP/JSON writes ids in hex), or empty"
    if value is None:  # null: the field's default, as json_format reads it
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{what}; it is not a string")
    if value and (len(value) != digits or not _HEX.fullmatch(value)):
        raise InvalidInput(f"{what}, not {value[:40]!r}")
    return base64.b64encode(bytes.fromhex(value)).decode("ascii")


def _items(parent: dict[str, Any], *names: str) -> list[tuple[str, Any]]:
    """The elements of the list field named `names` (its JSON name, and the proto name that
    json_format reads too) with their paths; none when it is not a list (json_format then says
    what is wrong)."""
    found: list[tuple[str, Any]] = []
    for name in names:
        value = parent.get(name)
        if isinstance(value, list):
            found += [(f"{name}[{index}]", item) for index, item in enumerate(value)]
    return found


def _convert_ids(holder: dict[str, Any], where: str, names: dict[str, int]) -> None:
    for name, digits in names.items():
        if name in holder:
            holder[name] = _hex_id_as_base64(holder[name], f"{where}.{name}", digits)


_SPAN_IDS = {
    "traceId": _TRACE_ID_DIGITS,
    "trace_id": _TRACE_ID_DIGITS,
    "spanId": _SPAN_ID_DIGITS,
    "span_id": _SPAN_ID_DIGITS,
    "parentSpanId": _SPAN_ID_DIGITS,
    "parent_span_id": _SPAN_ID_DIGITS,
}
_LINK_IDS = {name: digits for name, digits in _SPAN_IDS.items() if "parent" not in name}


def _ids_in_base64(document: dict[str, Any]) -> int:
    """Turn the hex ids of an OTLP/JSON document into base64, in place; how many spans it has
    (counted before json_format reads them all)."""
    spans_seen = 0
    for resource_path, resource_spans in _items(document, "resourceSpans", "resource_spans"):
        if not isinstance(resource_spans, dict):
            continue
        for scope_path, scope_spans in _items(resource_spans, "scopeSpans", "scope_spans"):
            if not isinstance(scope_spans, dict):
                continue
            spans = _items(scope_spans, "spans")
            spans_seen += len(spans)
            if spans_seen > MAX_SPANS:
                raise _too_many_spans(spans_seen)
            for span_path, span in spans:
                if not isinstance(span, dict):
                    continue
                where = f"{resource_path}.{scope_path}.{span_path}"
                _convert_ids(span, where, _SPAN_IDS)
                for link_path, link in _items(span, "links"):
                    if isinstance(link, dict):
                        _convert_ids(link, f"{where}.{link_path}", _LINK_IDS)
    return spans_seen


def _from_json(data: bytes) -> ExportTraceServiceRequest:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"body is not UTF-8, as OTLP/JSON is: {_detail(exc)}") from exc
    try:
        document = read_json(text)
    except NotJson as exc:
        raise InvalidInput(f"body is not JSON: {_detail(exc)}") from exc
    if not isinstance(document, dict):
        raise InvalidInput(
            "body is not an OTLP/JSON ExportTraceServiceRequest: send an object with resourceSpans"
        )
    _ids_in_base64(document)
    try:
        return json_format.ParseDict(
            document, ExportTraceServiceRequest(), ignore_unknown_fields=True
        )
    except (json_format.ParseError, ValueError, TypeError) as exc:
        raise InvalidInput(
            f"body is not an OTLP/JSON ExportTraceServiceRequest: {_parse_detail(exc)}"
        ) from exc


def span_count(request: ExportTraceServiceRequest) -> int:
    return sum(
        len(scope.spans) for resource in request.resource_spans for scope in resource.scope_spans
    )


def decode_export(
    body: bytes, content_type: str | None, content_encoding: str | None
) -> ExportTraceServiceRequest:
    """The export a POST of OTLP/HTTP traces sent, from its body and its Content-Type and
    Content-Encoding headers (None when absent). Raises UnsupportedMediaType (415),
    PayloadTooLarge (413) or InvalidInput (400), each saying what to send instead."""
    media = media_type(content_type)
    data = decompressed(body, content_encoding)
    request = _from_protobuf(data) if media == PROTOBUF else _from_json(data)
    count = span_count(request)
    if count > MAX_SPANS:
        raise _too_many_spans(count)
    return request
