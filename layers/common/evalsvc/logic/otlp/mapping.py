"""OpenTelemetry GenAI spans of one export, mapped to pairs.

A span is a GenAI span when it has `gen_ai.operation.name`, `gen_ai.input.messages`,
`gen_ai.output.messages` or any `gen_ai.prompt.*` / `gen_ai.completion.*` attribute (how its
messages are read: messages.py). Its operation is `gen_ai.operation.name`; an older-form span
without one is a `chat` span. `text_completion` and `generate_content` are mapped as `chat`:
they carry the same messages. Spans without GenAI attributes give nothing and are not counted;
nor are GenAI spans of other operations (`execute_tool`, `embeddings`, ...), which give no pair
of their own.

- A trace with an `invoke_agent` span gives one pair per such span, and its `chat` spans give
  none of their own. Its descendants are found through parentSpanId within the trace (a cycle
  in hostile input is cut where it closes); its `chat` descendants are ordered by start time,
  then span id. `input` = the last user message of the first one's input, `output` = the text
  of the last one's first output message, `tool_calls` = its `execute_tool` descendants in the
  same order (`gen_ai.tool.name`, `gen_ai.tool.call.arguments`; a span without a tool name is
  left out). `gen_ai.conversation.id` and `gen_ai.request.model` are the agent span's, or else
  the first `chat` descendant's, then the last one's. `messages` is not set.
- Other traces give one pair per `chat` span: `input` = its last user message, `messages` = the
  messages before it (the system instructions first; absent when there are none), `output` =
  its first output message's text, `tool_calls` = that message's tool calls. An input without a
  user message is "" and all its messages are `messages`.

`tool_calls` is a list, empty when the span shows no call. The pair id is
`<traceId>-<spanId>` (lowercase hex) of the span the pair comes from, so a span sent again maps
to the same pair; a span repeated within one export is read once. `dataset_id` is the resource
attribute `evalsvc.dataset_id` (when a string), `conversation_id` is `gen_ai.conversation.id`,
the labels hold `model:<gen_ai.request.model>` when that fits a label, and `created_ms` is the
span's start.

A GenAI span that would give a pair but cannot is rejected, with a reason naming it: its
attribute JSON cannot be read, it has no output text (an output of tool calls only included),
a text or list is over a pair's limits (models.datasets, models.conversations: nothing is cut
short), its ids are not 16 and 8 bytes, or its `evalsvc.dataset_id` names no dataset.
Everything is linear in the spans and their attributes, within decode's bounds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import check_dataset_id
from evalsvc.logic.otlp.decode import PROTOBUF
from evalsvc.logic.otlp.messages import (
    RawCall,
    Turn,
    Unreadable,
    arguments_attribute,
    input_messages,
    is_gen_ai,
    output_messages,
    string_value,
)
from evalsvc.models.conversations import (
    MAX_ARGUMENTS_BYTES,
    MAX_CONVERSATION_ID_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_MESSAGES,
    MAX_TOOL_CALLS,
    MAX_TOOL_NAME_CHARS,
    Message,
    ToolCall,
)
from evalsvc.models.datasets import MAX_LABEL_CHARS, MAX_TEXT_CHARS

DATASET_ATTRIBUTE = "evalsvc.dataset_id"
CHAT_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
AGENT_OPERATION = "invoke_agent"
TOOL_OPERATION = "execute_tool"
# Reasons shown in a partial success's errorMessage; the others are counted.
SHOWN_REASONS = 5

_TRACE_ID_BYTES = 16
_SPAN_ID_BYTES = 8


@dataclass(slots=True)
class SpanPair:
    """A pair as one span (a `chat` span, or an `invoke_agent` span and its descendants) tells
    it."""

    id: str
    dataset_id: str | None
    input: str
    output: str
    messages: list[Message] | None
    tool_calls: list[ToolCall] | None
    conversation_id: str | None
    labels: list[str]
    created_ms: int


@dataclass(slots=True)
class Mapped:
    """The pairs of an export, and the GenAI spans left out: how many, and why (distinct
    reasons, each naming a span)."""

    pairs: list[SpanPair] = field(default_factory=list)
    rejected: int = 0
    reasons: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _Span:
    trace_id: bytes
    span_id: bytes
    parent_id: bytes
    start_ns: int
    # The span's gen_ai.* attributes only.
    attributes: dict[str, AnyValue]
    # "agent", "chat", "tool", "other" (a GenAI span of another operation), None (not GenAI).
    kind: str | None
    dataset_id: str | None
    dataset_problem: str | None
    # What was read of its attributes, once (nested agents share their chats and tools); a str:
    # the name of the attribute that could not be read.
    _input: tuple[str, list[Message]] | str | None = None
    _output: Turn | str | None = None
    _call: tuple[RawCall | None] | None = None

    @property
    def pair_id(self) -> str:
        return f"{self.trace_id.hex()}-{self.span_id.hex()}"

    @property
    def order(self) -> tuple[int, bytes]:
        return (self.start_ns, self.span_id)

    def split_input(self) -> tuple[str, list[Message]]:
        """Its last user message's text and the messages before it; Unreadable."""
        if self._input is None:
            try:
                self._input = _split(input_messages(self.attributes))
            except Unreadable as exc:
                self._input = exc.name
        if isinstance(self._input, str):
            raise Unreadable(self._input)
        return self._input

    def first_output(self) -> Turn:
        """Its first output message (no text when it has none); Unreadable."""
        if self._output is None:
            try:
                outputs = output_messages(self.attributes)
                self._output = outputs[0] if outputs else Turn("assistant", "")
            except Unreadable as exc:
                self._output = exc.name
        if isinstance(self._output, str):
            raise Unreadable(self._output)
        return self._output

    def tool_call(self) -> RawCall | None:
        """The call of an execute_tool span (None without a tool name)."""
        if self._call is None:
            name = string_value(self.attributes, "gen_ai.tool.name")
            arguments = arguments_attribute(self.attributes, "gen_ai.tool.call.arguments")
            self._call = (None if name is None else RawCall(name, arguments),)
        return self._call[0]


def _kind(attributes: dict[str, AnyValue]) -> str | None:
    if not is_gen_ai(attributes):
        return None
    operation = string_value(attributes, "gen_ai.operation.name")
    if operation is None or operation in CHAT_OPERATIONS:
        return "chat"
    if operation == AGENT_OPERATION:
        return "agent"
    return "tool" if operation == TOOL_OPERATION else "other"


def _dataset(attributes: Iterable[KeyValue]) -> tuple[str | None, str | None]:
    """The resource's dataset id, or what is wrong with it."""
    value = next((kv.value for kv in attributes if kv.key == DATASET_ATTRIBUTE), None)
    if value is None or value.WhichOneof("value") != "string_value":
        return None, None
    try:
        return check_dataset_id(value.string_value), None
    except InvalidInput:
        return None, f"{DATASET_ATTRIBUTE} {value.string_value[:40]!r} cannot name a dataset"


def _split(messages: list[Message]) -> tuple[str, list[Message]]:
    """The last user message's text, and the messages before it."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return messages[index].content, messages[:index]
    return "", messages


def _first_string(spans: Sequence[_Span | None], name: str) -> str | None:
    return next(
        (value for span in spans if span and (value := string_value(span.attributes, name))),
        None,
    )


def _limits(
    user_input: str, output: str, messages: list[Message], calls: list[RawCall]
) -> str | None:
    """What in a pair is over its limits, if anything."""
    if len(user_input) > MAX_TEXT_CHARS:
        return f"too large: input over {MAX_TEXT_CHARS:,} characters"
    if len(output) > MAX_TEXT_CHARS:
        return f"too large: output over {MAX_TEXT_CHARS:,} characters"
    if len(messages) > MAX_MESSAGES:
        return f"too large: more than {MAX_MESSAGES} messages before the input"
    if any(len(message.content) > MAX_MESSAGE_CHARS for message in messages):
        return f"too large: a message over {MAX_MESSAGE_CHARS:,} characters"
    if len(calls) > MAX_TOOL_CALLS:
        return f"too large: more than {MAX_TOOL_CALLS} tool calls"
    if any(len(call.name) > MAX_TOOL_NAME_CHARS for call in calls):
        return f"too large: a tool name over {MAX_TOOL_NAME_CHARS} characters"
    if any(call.size > MAX_ARGUMENTS_BYTES for call in calls):
        return f"too large: tool call arguments over {MAX_ARGUMENTS_BYTES:,} bytes"
    return None


def _pair(
    span: _Span,
    user_input: str,
    output: str,
    messages: list[Message] | None,
    calls: list[RawCall],
    context: Sequence[_Span | None],
) -> SpanPair | str:
    """The pair of `span`, or why there is none. `context`: the spans whose conversation id and
    model are read, the first that has one."""
    problem = span.dataset_problem or _limits(user_input, output, messages or [], calls)
    if problem:
        return problem
    conversation_id = _first_string(context, "gen_ai.conversation.id")
    if conversation_id is not None and len(conversation_id) > MAX_CONVERSATION_ID_CHARS:
        return f"too large: gen_ai.conversation.id over {MAX_CONVERSATION_ID_CHARS} characters"
    model = _first_string(context, "gen_ai.request.model")
    label = f"model:{model}"
    return SpanPair(
        id=span.pair_id,
        dataset_id=span.dataset_id,
        input=user_input,
        output=output,
        messages=messages or None,
        tool_calls=[ToolCall(call.name, call.arguments) for call in calls],
        conversation_id=conversation_id,
        labels=[label] if model is not None and len(label) <= MAX_LABEL_CHARS else [],
        created_ms=span.start_ns // 1_000_000,
    )


def _chat_pair(span: _Span) -> SpanPair | str:
    try:
        user_input, before = span.split_input()
        output = span.first_output()
    except Unreadable as exc:
        return f"unreadable {exc.name}"
    if not output.text:
        return "no output"
    return _pair(span, user_input, output.text, before, output.tool_calls, [span])


def _agent_pair(
    agent: _Span, first: _Span | None, last: _Span | None, tools: list[_Span] | None
) -> SpanPair | str:
    """The pair of an `invoke_agent` span from its first and last `chat` descendants and its
    `execute_tool` descendants (None: more than MAX_TOOL_CALLS)."""
    if first is None or last is None:
        return "no output"
    try:
        user_input, _ = first.split_input()
    except Unreadable as exc:
        return f"unreadable {exc.name} (chat span {first.span_id.hex()})"
    try:
        output = last.first_output()
    except Unreadable as exc:
        return f"unreadable {exc.name} (chat span {last.span_id.hex()})"
    if not output.text:
        return "no output"
    if tools is None:
        return f"too large: more than {MAX_TOOL_CALLS} tool calls"
    calls = [call for tool in sorted(tools, key=_order) if (call := tool.tool_call())]
    return _pair(agent, user_input, output.text, None, calls, [agent, first, last])


def _order(span: _Span) -> tuple[int, bytes]:
    return span.order


def _earlier(one: _Span | None, other: _Span | None) -> _Span | None:
    if one is None or other is None:
        return one or other
    return other if other.order < one.order else one


def _later(one: _Span | None, other: _Span | None) -> _Span | None:
    if one is None or other is None:
        return one or other
    return other if other.order > one.order else one


def _agent_pairs(spans: list[_Span]) -> list[tuple[_Span, SpanPair | str]]:
    """The pair of each `invoke_agent` span of a trace. Descendants are gathered bottom-up over
    a spanning forest of the parent links (each span visited once, so a cycle is cut and nested
    agents cost no more): the first and last `chat` span under each span, and its
    `execute_tool` spans while they are at most MAX_TOOL_CALLS."""
    count = len(spans)
    position = {span.span_id: index for index, span in enumerate(spans)}
    children: list[list[int]] = [[] for _ in spans]
    roots: list[int] = []
    for index, span in enumerate(spans):
        parent = position.get(span.parent_id) if span.parent_id else None
        if parent is None or parent == index:
            roots.append(index)
        else:
            children[parent].append(index)
    order: list[int] = []
    tree_parent = [-1] * count
    visited = [False] * count
    for start in chain(roots, range(count)):
        if visited[start]:
            continue
        visited[start] = True
        stack = [start]
        while stack:
            node = stack.pop()
            order.append(node)
            for child in children[node]:
                if not visited[child]:
                    visited[child] = True
                    tree_parent[child] = node
                    stack.append(child)
    first: list[_Span | None] = [span if span.kind == "chat" else None for span in spans]
    last = list(first)
    tools: list[list[_Span] | None] = [[span] if span.kind == "tool" else [] for span in spans]
    results: dict[int, SpanPair | str] = {}
    for node in reversed(order):  # every span after all of its descendants
        span = spans[node]
        if span.kind == "agent":
            results[node] = _agent_pair(span, first[node], last[node], tools[node])
        parent = tree_parent[node]
        if parent < 0:
            continue
        first[parent] = min(
            (s for s in (first[parent], first[node]) if s), key=_order, default=None
        )
        last[parent] = max((s for s in (last[parent], last[node]) if s), key=_order, default=None)
        below, own = tools[node], tools[parent]
        merged = None if below is None or own is None else own + below
        tools[parent] = merged if merged is not None and len(merged) <= MAX_TOOL_CALLS else None
    return [(spans[node], results[node]) for node in sorted(results)]


def _indexed(request: ExportTraceServiceRequest, mapped: _Outcome) -> dict[bytes, list[_Span]]:
    """The export's spans with valid ids, by trace, each (trace id, span id) once; a GenAI span
    that would give a pair but has invalid ids is rejected."""
    traces: dict[bytes, list[_Span]] = {}
    seen: set[tuple[bytes, bytes]] = set()
    for resource_spans in request.resource_spans:
        dataset_id, problem = _dataset(resource_spans.resource.attributes)
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                attributes = {
                    kv.key: kv.value for kv in span.attributes if kv.key.startswith("gen_ai.")
                }
                kind = _kind(attributes)
                if not _valid_ids(span):
                    if kind in ("chat", "agent"):
                        label = f"{span.trace_id[:16].hex()}-{span.span_id[:8].hex()}"
                        mapped.reject(label, "trace id and span id must be 16 and 8 bytes")
                    continue
                if (span.trace_id, span.span_id) in seen:
                    continue
                seen.add((span.trace_id, span.span_id))
                traces.setdefault(span.trace_id, []).append(
                    _Span(
                        trace_id=span.trace_id,
                        span_id=span.span_id,
                        parent_id=span.parent_span_id,
                        start_ns=span.start_time_unix_nano,
                        attributes=attributes,
                        kind=kind,
                        dataset_id=dataset_id,
                        dataset_problem=problem,
                    )
                )
    return traces


def _valid_ids(span: Span) -> bool:
    return (
        len(span.trace_id) == _TRACE_ID_BYTES
        and len(span.span_id) == _SPAN_ID_BYTES
        and any(span.trace_id)
        and any(span.span_id)
    )


class _Outcome:
    def __init__(self) -> None:
        self.mapped = Mapped()
        self._reasons: dict[str, None] = {}

    def reject(self, span_label: str, why: str) -> None:
        self.mapped.rejected += 1
        reason = f"span {span_label}: {why}"
        if reason not in self._reasons:
            self._reasons[reason] = None
            self.mapped.reasons.append(reason)

    def add(self, span: _Span, pair: SpanPair | str) -> None:
        if isinstance(pair, str):
            self.reject(span.pair_id, pair)
        else:
            self.mapped.pairs.append(pair)


def map_export(request: ExportTraceServiceRequest) -> Mapped:
    """The pairs the GenAI spans of `request` give (trace by trace, in the order of the
    export), and the GenAI spans left out with why."""
    outcome = _Outcome()
    for spans in _indexed(request, outcome).values():
        if any(span.kind == "agent" for span in spans):
            for span, pair in _agent_pairs(spans):
                outcome.add(span, pair)
        else:
            for span in spans:
                if span.kind == "chat":
                    outcome.add(span, _chat_pair(span))
    return outcome.mapped


def _error_message(mapped: Mapped) -> str:
    shown = mapped.reasons[:SHOWN_REASONS]
    more = len(mapped.reasons) - len(shown)
    return (
        f"{mapped.rejected} GenAI span(s) left out: "
        + "; ".join(shown)
        + (f"; and {more} more" if more else "")
    )


def partial_success(mapped: Mapped) -> dict[str, Any]:
    """The OTLP/JSON answer to the export: `{"partialSuccess": {}}` when every GenAI span gave
    a pair, else the number left out and why (the first SHOWN_REASONS reasons)."""
    if not mapped.rejected:
        return {"partialSuccess": {}}
    return {
        "partialSuccess": {
            "rejectedSpans": mapped.rejected,
            "errorMessage": _error_message(mapped),
        }
    }


def export_response(mapped: Mapped, media_type: str) -> bytes:
    """The answer's body in the export's own encoding (decode.media_type of its Content-Type):
    an ExportTraceServiceResponse in protobuf, or partial_success's JSON."""
    if media_type != PROTOBUF:
        return json.dumps(partial_success(mapped)).encode("utf-8")
    response = ExportTraceServiceResponse()
    if mapped.rejected:
        response.partial_success.CopyFrom(
            ExportTracePartialSuccess(
                rejected_spans=mapped.rejected, error_message=_error_message(mapped)
            )
        )
    return response.SerializeToString()
