"""Traces that arrive in pieces. An exporter sends spans as they end, in batches on a timer, so
an agent's `chat` and `execute_tool` spans often leave in one export and its `invoke_agent`
span (which ends last) in a later one. Mapping each export alone would make pairs of the chats
and reject the agent. So a trace is mapped once its local root is here: a span without a parent,
or whose parent is in another process (OTLP's span flags say so). The spans of a trace whose
local root has not arrived wait (storage.waiting_spans) and join the trace when it does.

What waits is what the mapping reads of a span: its ids, start, flags and `gen_ai.*`
attributes, under its resource's `evalsvc.dataset_id`; nothing else of a span is kept. A trace
waits when it has a GenAI span, or when earlier pieces of it are waiting already (a span between
an agent and its chats may carry no GenAI attribute).

Left out: a span that ends after its trace's local root was mapped (it waits, and expires)."""

from __future__ import annotations

from collections.abc import Iterable

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import (
    SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK,
    SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK,
    ResourceSpans,
    Span,
)

from evalsvc.logic.otlp.mapping import DATASET_ATTRIBUTE

_REMOTE_PARENT = SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK


def _kept(resource: Resource, dataset_id: str | None) -> Resource:
    kept = Resource()
    if dataset_id is None:
        kept.attributes.extend(kv for kv in resource.attributes if kv.key == DATASET_ATTRIBUTE)
    else:
        named = kept.attributes.add()
        named.key = DATASET_ATTRIBUTE
        named.value.string_value = dataset_id
    return kept


def _trimmed(span: Span) -> Span:
    out = Span(
        trace_id=span.trace_id,
        span_id=span.span_id,
        parent_span_id=span.parent_span_id,
        flags=span.flags,
        start_time_unix_nano=span.start_time_unix_nano,
    )
    out.attributes.extend(kv for kv in span.attributes if kv.key.startswith("gen_ai."))
    return out


def by_trace(
    request: ExportTraceServiceRequest, dataset_id: str | None
) -> dict[bytes, ExportTraceServiceRequest]:
    """The export's spans, trace by trace, each trace as an export of its own holding what the
    mapping reads of them (the module's docstring), in the export's order; `dataset_id`, when
    the request names one, in place of the resources' own (so a piece that waits keeps it)."""
    traces: dict[bytes, ExportTraceServiceRequest] = {}
    for resource_spans in request.resource_spans:
        resource = _kept(resource_spans.resource, dataset_id)
        pieces: dict[bytes, ResourceSpans] = {}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                piece = pieces.get(span.trace_id)
                if piece is None:
                    export = traces.setdefault(span.trace_id, ExportTraceServiceRequest())
                    piece = export.resource_spans.add()
                    piece.resource.CopyFrom(resource)
                    piece.scope_spans.add()
                    pieces[span.trace_id] = piece
                piece.scope_spans[0].spans.append(_trimmed(span))
    return traces


def _spans(trace: ExportTraceServiceRequest) -> Iterable[Span]:
    for resource_spans in trace.resource_spans:
        for scope_spans in resource_spans.scope_spans:
            yield from scope_spans.spans


def is_local_root(span: Span) -> bool:
    return not span.parent_span_id or (span.flags & _REMOTE_PARENT) == _REMOTE_PARENT


def has_local_root(trace: ExportTraceServiceRequest) -> bool:
    return any(is_local_root(span) for span in _spans(trace))


def gen_ai_spans(trace: ExportTraceServiceRequest) -> int:
    """How many of the trace's spans carry GenAI attributes."""
    return sum(1 for span in _spans(trace) if len(span.attributes))


def without_dataset(trace: ExportTraceServiceRequest) -> bool:
    """Whether a GenAI span of the trace has no dataset named for it."""
    return any(
        not len(resource_spans.resource.attributes)
        and any(len(span.attributes) for ss in resource_spans.scope_spans for span in ss.spans)
        for resource_spans in trace.resource_spans
    )


def datasets_named(trace: ExportTraceServiceRequest) -> set[str]:
    """The datasets the trace's GenAI spans are named for (by_trace's resources)."""
    return {
        kv.value.string_value
        for resource_spans in trace.resource_spans
        if any(len(span.attributes) for ss in resource_spans.scope_spans for span in ss.spans)
        for kv in resource_spans.resource.attributes
        if kv.value.string_value
    }


def joined(pieces: Iterable[ExportTraceServiceRequest]) -> ExportTraceServiceRequest:
    """One export of every piece's spans (a span sent twice is read once by the mapping)."""
    whole = ExportTraceServiceRequest()
    for piece in pieces:
        whole.resource_spans.extend(piece.resource_spans)
    return whole
