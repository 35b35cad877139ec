"""Spans made by the real OpenTelemetry SDK, and the export bodies its exporters send: the
protobuf bytes its OTLP/HTTP protobuf exporter posts (encode_spans, as it encodes them), and the
same export as OTLP/JSON (ids in hex). Start times are fixed, so the order of spans is the
test's, not the clock's."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, Tracer, set_span_in_context

# 2026-01-02T03:04:05Z, in nanoseconds: the first span's start.
T0 = 1_767_323_045_000_000_000
MS = 1_000_000


class Recorder:
    """A tracer of its own provider (resource attributes `resource`), and the spans it ended."""

    def __init__(self, resource: dict[str, Any] | None = None) -> None:
        self.exporter = InMemorySpanExporter()
        provider = TracerProvider(resource=Resource.create(resource or {}))
        provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer: Tracer = provider.get_tracer("evalsvc.tests")

    @contextmanager
    def span(
        self,
        name: str,
        attributes: dict[str, Any],
        at_ms: int,
        parent: Span | None = None,
    ) -> Iterator[Span]:
        """A span started at T0 + `at_ms`, under `parent` (a new trace when None)."""
        context = set_span_in_context(parent) if parent is not None else None
        span = self.tracer.start_span(
            name, context=context, attributes=attributes, start_time=T0 + at_ms * MS
        )
        try:
            yield span
        finally:
            span.end(end_time=T0 + (at_ms + 1) * MS)

    def spans(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()

    def protobuf(self) -> bytes:
        return protobuf_body(self.spans())

    def json(self) -> bytes:
        return json_body(self.protobuf())


def protobuf_body(spans: Sequence[ReadableSpan]) -> bytes:
    """What the SDK's OTLP/HTTP protobuf exporter posts for `spans`."""
    return encode_spans(spans).SerializeToString()


def _hex(value: str) -> str:
    return base64.b64decode(value).hex()


def json_document(body: bytes) -> dict[str, Any]:
    """The OTLP/JSON form of a protobuf export: protobuf's JSON mapping, ids in hex."""
    document = json_format.MessageToDict(ExportTraceServiceRequest.FromString(body))
    for resource_spans in document.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for holder in [span, *span.get("links", [])]:
                    for name in ("traceId", "spanId", "parentSpanId"):
                        if name in holder:
                            holder[name] = _hex(holder[name])
    return document


def json_body(body: bytes) -> bytes:
    return json.dumps(json_document(body)).encode("utf-8")


def messages(*turns: tuple[str, str]) -> str:
    """gen_ai.input/output.messages (1.37+) of text messages (role, text)."""
    return json.dumps(
        [{"role": role, "parts": [{"type": "text", "content": text}]} for role, text in turns]
    )


def pair_id(span: ReadableSpan) -> str:
    context = span.get_span_context()
    assert context is not None
    return f"{context.trace_id:032x}-{context.span_id:016x}"
