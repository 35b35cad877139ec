"""OpenTelemetry GenAI spans map to pairs by the contract's rules: an agent trace gives one pair
per invoke_agent span (input from its first chat, output from its last, its tools as calls),
another trace one pair per chat span (its last user message, the messages before it, its first
output and that output's tool calls), in both forms of the conventions. A GenAI span that cannot
give a pair is counted and named, never cut short; other spans are ignored. The spans are the
real SDK's, encoded as its exporter sends them, unless a test needs what the SDK cannot make."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from typing import Any

import pytest
from evalsvc.logic.otlp.decode import decode_export
from evalsvc.logic.otlp.mapping import (
    Mapped,
    SpanPair,
    export_response,
    map_export,
    partial_success,
)
from evalsvc.models.conversations import (
    MAX_ARGUMENTS_BYTES,
    MAX_CONVERSATION_ID_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_MESSAGES,
    MAX_TOOL_CALLS,
    MAX_TOOL_NAME_CHARS,
    Message,
    arguments_bytes,
)
from evalsvc.models.datasets import MAX_LABEL_CHARS, MAX_LABELS, MAX_TEXT_CHARS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from tests.otlp_spans import T0, Recorder, json_body, messages, pair_id

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


def mapped_of(recorder: Recorder) -> Mapped:
    return map_export(decode_export(recorder.protobuf(), PROTOBUF, None))


def calls_of(pair: SpanPair) -> list[tuple[str, dict[str, Any]]]:
    return [(call.name, call.arguments) for call in pair.tool_calls or []]


def output_parts(*parts: dict[str, Any]) -> str:
    return json.dumps([{"role": "assistant", "parts": list(parts), "finish_reason": "stop"}])


def text(content: str) -> dict[str, Any]:
    return {"type": "text", "content": content}


def tool_call(name: str, arguments: Any) -> dict[str, Any]:
    return {"type": "tool_call", "id": f"call_{name}", "name": name, "arguments": arguments}


def chat(input_messages: str, output_messages: str, **more: Any) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": input_messages,
        "gen_ai.output.messages": output_messages,
        **more,
    }


def agent_trace(recorder: Recorder) -> dict[str, Any]:
    """invoke_agent -> chat -> execute_tool -> chat, and a tool call under a span of no GenAI
    attributes; returns the SDK spans by role. The chats are started out of order."""
    spans: dict[str, Any] = {}
    agent_attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather",
        "gen_ai.conversation.id": "conv-7",
    }
    with recorder.span("invoke_agent weather", agent_attributes, 0) as agent:
        second = chat(
            messages(("user", "weather in Paris?"), ("tool", "rain")),
            output_parts(text("It rains in Paris."), text("Take an umbrella.")),
            **{"gen_ai.request.model": "small-1"},
        )
        with recorder.span("chat small-1", second, 30, parent=agent) as span:
            spans["second chat"] = span
        first = chat(
            messages(("system", "be brief"), ("user", "weather in Paris?")),
            output_parts(tool_call("forecast", {"city": "Paris"})),
            **{"gen_ai.request.model": "small-1"},
        )
        with recorder.span("chat small-1", first, 10, parent=agent) as span:
            spans["first chat"] = span
        with recorder.span(
            "execute_tool forecast",
            tool_attributes("forecast", '{"city": "Paris"}'),
            20,
            parent=agent,
        ):
            pass
        log = tool_attributes("log", "[1, 2]")
        with (
            recorder.span("http", {"http.method": "GET"}, 21, parent=agent) as http,
            recorder.span("execute_tool log", log, 22, parent=http),
        ):
            pass
    spans["agent"] = agent
    return spans


def tool_attributes(name: str, arguments: str) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": arguments,
    }


# ---- agent traces -----------------------------------------------------------------------------


def test_an_agent_trace_gives_one_pair_from_its_first_and_last_chat_and_its_tools() -> None:
    recorder = Recorder({"evalsvc.dataset_id": "weather-bot"})
    spans = agent_trace(recorder)
    mapped = mapped_of(recorder)
    assert (mapped.rejected, mapped.reasons) == (0, [])
    assert mapped.pairs == [
        SpanPair(
            id=pair_id(spans["agent"]),
            dataset_id="weather-bot",
            input="weather in Paris?",
            output="It rains in Paris.\nTake an umbrella.",
            messages=None,
            tool_calls=mapped.pairs[0].tool_calls,
            conversation_id="conv-7",
            labels=["model:small-1"],
            created_ms=T0 // 1_000_000,
        )
    ]
    # In start order, under the agent at any depth; arguments not an object read as {}.
    assert calls_of(mapped.pairs[0]) == [("forecast", {"city": "Paris"}), ("log", {})]


def test_an_agent_without_a_chat_below_it_is_rejected_as_no_output() -> None:
    recorder = Recorder()
    with (
        recorder.span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, 0) as agent,
        recorder.span("execute_tool", tool_attributes("t", "{}"), 1, parent=agent),
    ):
        pass
    mapped = mapped_of(recorder)
    assert mapped.pairs == []
    assert mapped.rejected == 1
    assert mapped.reasons == [f"span {pair_id(agent)}: no output"]


def test_chat_spans_of_an_agent_trace_give_no_pair_of_their_own() -> None:
    recorder = Recorder()
    agent_trace(recorder)
    with recorder.span(
        "chat", chat(messages(("user", "hi")), messages(("assistant", "hello"))), 50
    ):
        pass
    mapped = mapped_of(recorder)
    assert [pair.input for pair in mapped.pairs] == ["weather in Paris?", "hi"]


def test_nested_agents_each_give_a_pair() -> None:
    recorder = Recorder()
    with recorder.span("invoke_agent outer", {"gen_ai.operation.name": "invoke_agent"}, 0) as outer:
        with (
            recorder.span(
                "invoke_agent inner", {"gen_ai.operation.name": "invoke_agent"}, 1, parent=outer
            ) as inner,
            recorder.span(
                "chat",
                chat(messages(("user", "in")), messages(("assistant", "deep"))),
                2,
                parent=inner,
            ),
        ):
            pass
        with recorder.span(
            "chat",
            chat(messages(("user", "late")), messages(("assistant", "last"))),
            3,
            parent=outer,
        ):
            pass
    pairs = {pair.id: (pair.input, pair.output) for pair in mapped_of(recorder).pairs}
    assert pairs == {pair_id(outer): ("in", "last"), pair_id(inner): ("in", "deep")}


def test_chats_starting_together_are_ordered_by_span_id() -> None:
    recorder = Recorder()
    words = {}
    with recorder.span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, 0) as agent:
        for word in ("a", "b", "c"):
            attributes = chat(messages(("user", word)), messages(("assistant", word.upper())))
            with recorder.span("chat", attributes, 5, parent=agent) as span:
                words[pair_id(span)] = word
    by_span_id = [words[key] for key in sorted(words, key=lambda key: key.split("-")[1])]
    pair = mapped_of(recorder).pairs[0]
    assert (pair.input, pair.output) == (by_span_id[0], by_span_id[-1].upper())


# ---- chat traces ------------------------------------------------------------------------------


def test_a_chat_span_gives_its_last_user_message_and_the_messages_before_it() -> None:
    recorder = Recorder()
    attributes = chat(
        messages(("user", "hi"), ("assistant", "hello"), ("user", "what is 2+2?")),
        output_parts(text("4"), tool_call("calc", '{"expr": "2+2"}')),
        **{
            "gen_ai.system_instructions": json.dumps([text("You add."), text("Be exact.")]),
            "gen_ai.conversation.id": "c-1",
            "gen_ai.request.model": "tiny",
        },
    )
    with recorder.span("chat tiny", attributes, 7) as span:
        pass
    mapped = mapped_of(recorder)
    assert mapped.pairs == [
        SpanPair(
            id=pair_id(span),
            dataset_id=None,
            input="what is 2+2?",
            output="4",
            messages=[
                Message("system", "You add.\nBe exact."),
                Message("user", "hi"),
                Message("assistant", "hello"),
            ],
            tool_calls=mapped.pairs[0].tool_calls,
            conversation_id="c-1",
            labels=["model:tiny"],
            created_ms=(T0 + 7_000_000) // 1_000_000,
        )
    ]
    assert calls_of(mapped.pairs[0]) == [("calc", {"expr": "2+2"})]


@pytest.mark.parametrize("operation", ["chat", "text_completion", "generate_content"])
def test_text_completion_and_generate_content_map_as_chat(operation: str) -> None:
    recorder = Recorder()
    attributes = chat(messages(("user", "q")), messages(("assistant", "a")))
    attributes["gen_ai.operation.name"] = operation
    with recorder.span(operation, attributes, 0):
        pass
    assert [(p.input, p.output) for p in mapped_of(recorder).pairs] == [("q", "a")]


def test_the_tool_calls_of_the_output_and_their_arguments() -> None:
    recorder = Recorder()
    output = output_parts(
        text("calling"),
        tool_call("object", {"a": [1, {"b": None}]}),
        tool_call("json_string", '{"x": true}'),
        tool_call("json_list", "[1, 2]"),
        tool_call("not_json", "city=Paris"),
        tool_call("number", 3),
        {"type": "tool_call", "name": "", "arguments": {}},  # no name: no call
        {"type": "tool_call", "arguments": {}},
    )
    with recorder.span("chat", chat(messages(("user", "go")), output), 0):
        pass
    assert calls_of(mapped_of(recorder).pairs[0]) == [
        ("object", {"a": [1, {"b": None}]}),
        ("json_string", {"x": True}),
        ("json_list", {}),
        ("not_json", {}),
        ("number", {}),
    ]


def test_a_tool_message_reads_its_responses_and_unknown_roles_and_parts_are_skipped() -> None:
    recorder = Recorder()
    input_messages = json.dumps(
        [
            {"role": "user", "parts": [text("look it up"), {"type": "image", "uri": "x"}]},
            {"role": "assistant", "parts": [tool_call("find", {"q": "x"})]},
            {
                "role": "tool",
                "parts": [
                    {"type": "tool_call_response", "id": "1", "response": "found"},
                    {"type": "tool_call_response", "id": "2", "response": {"n": 1, "s": "é"}},
                ],
            },
            {"role": "developer", "parts": [text("ignored")]},
            {"role": "user", "content": "and now?"},
            "not a message",
        ]
    )
    with recorder.span("chat", chat(input_messages, messages(("assistant", "done"))), 0):
        pass
    pair = mapped_of(recorder).pairs[0]
    assert pair.input == "and now?"
    assert pair.messages == [
        Message("user", "look it up"),
        Message("assistant", ""),
        Message("tool", 'found\n{"n":1,"s":"é"}'),
    ]


def test_the_older_form_in_numeric_order_with_its_tool_calls() -> None:
    recorder = Recorder()
    attributes = {
        "gen_ai.prompt.10.role": "user",
        "gen_ai.prompt.10.content": "third",
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.content": "second",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "first",
        "gen_ai.prompt.1.content": "no role: the user's",
        "gen_ai.prompt.7.role": "narrator",
        "gen_ai.prompt.7.content": "skipped",
        "gen_ai.completion.1.content": "not the first completion",
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "answer",
        "gen_ai.completion.0.tool_calls.1.name": "b",
        "gen_ai.completion.0.tool_calls.1.arguments": '{"k": 2}',
        "gen_ai.completion.0.tool_calls.0.name": "a",
        "gen_ai.completion.0.tool_calls.0.arguments": "oops",
        "gen_ai.request.model": "old-model",
    }
    with recorder.span("openai.chat", attributes, 0):  # no operation name: a chat span
        pass
    [pair] = mapped_of(recorder).pairs
    assert (pair.input, pair.output, pair.labels) == ("third", "answer", ["model:old-model"])
    assert pair.messages == [
        Message("system", "first"),
        Message("user", "no role: the user's"),
        Message("assistant", "second"),
    ]
    assert calls_of(pair) == [("a", {}), ("b", {"k": 2})]


def test_the_newer_form_is_read_when_a_span_has_both() -> None:
    recorder = Recorder()
    attributes = chat(messages(("user", "new")), messages(("assistant", "new answer")))
    attributes |= {"gen_ai.prompt.0.content": "old", "gen_ai.completion.0.content": "old answer"}
    with recorder.span("chat", attributes, 0):
        pass
    assert [(p.input, p.output) for p in mapped_of(recorder).pairs] == [("new", "new answer")]


def test_input_without_a_user_message_is_empty_with_every_message_before() -> None:
    recorder = Recorder()
    with recorder.span("chat", chat(messages(("system", "s")), messages(("assistant", "a"))), 0):
        pass
    [pair] = mapped_of(recorder).pairs
    assert (pair.input, pair.messages, pair.tool_calls) == ("", [Message("system", "s")], [])


def test_spans_without_gen_ai_attributes_are_ignored() -> None:
    recorder = Recorder()
    with (
        recorder.span("GET /", {"http.method": "GET", "gen_ai_like": "x"}, 0) as root,
        recorder.span("db", {"db.system": "dynamodb"}, 1, parent=root),
    ):
        pass
    with recorder.span("embeddings", {"gen_ai.operation.name": "embeddings"}, 2):
        pass
    assert mapped_of(recorder) == Mapped()
    assert partial_success(mapped_of(recorder)) == {"partialSuccess": {}}


def test_ids_are_lowercase_hex_of_the_span_and_mapping_is_idempotent() -> None:
    recorder = Recorder()
    agent_trace(recorder)
    with recorder.span(
        "chat", chat(messages(("user", "q")), messages(("assistant", "a"))), 90
    ) as span:
        pass
    body = recorder.protobuf()
    once = map_export(decode_export(body, PROTOBUF, None))
    again = map_export(decode_export(body, PROTOBUF, None))
    as_json = map_export(decode_export(json_body(body), JSON, None))
    assert [asdict(pair) for pair in once.pairs] == [asdict(pair) for pair in again.pairs]
    assert [asdict(pair) for pair in once.pairs] == [asdict(pair) for pair in as_json.pairs]
    assert (once.rejected, again.rejected, as_json.rejected) == (0, 0, 0)
    for pair in once.pairs:
        trace, _, span_hex = pair.id.partition("-")
        assert len(trace) == 32 and len(span_hex) == 16
        assert pair.id == pair.id.lower() and int(trace, 16) and int(span_hex, 16)
    assert once.pairs[-1].id == pair_id(span)


def test_a_span_repeated_in_one_export_gives_one_pair() -> None:
    recorder = Recorder()
    with recorder.span("chat", chat(messages(("user", "q")), messages(("assistant", "a"))), 0):
        pass
    request = decode_export(recorder.protobuf(), PROTOBUF, None)
    request.resource_spans.extend(list(request.resource_spans))
    assert len(map_export(request).pairs) == 1


def test_the_dataset_id_is_the_resources_when_a_string_naming_a_dataset() -> None:
    by_resource: dict[str, Any] = {}
    for name, value in [("good", "ds-1"), ("number", 5), ("bad", "no spaces allowed")]:
        recorder = Recorder({"evalsvc.dataset_id": value})
        with recorder.span("chat", chat(messages(("user", "q")), messages(("assistant", "a"))), 0):
            pass
        by_resource[name] = mapped_of(recorder)
    assert by_resource["good"].pairs[0].dataset_id == "ds-1"
    assert by_resource["number"].pairs[0].dataset_id is None
    assert by_resource["bad"].pairs == []
    assert (
        "evalsvc.dataset_id 'no spaces allowed' cannot name a dataset"
        in by_resource["bad"].reasons[0]
    )


def test_a_model_name_too_long_for_a_label_gives_no_label() -> None:
    recorder = Recorder()
    attributes = chat(messages(("user", "q")), messages(("assistant", "a")))
    fits = "m" * (MAX_LABEL_CHARS - len("model:"))
    for at, model in enumerate([fits, fits + "m"]):
        with recorder.span("chat", attributes | {"gen_ai.request.model": model}, at):
            pass
    assert [pair.labels for pair in mapped_of(recorder).pairs] == [[f"model:{fits}"], []]


# ---- left out, and why ------------------------------------------------------------------------


def test_genai_spans_that_cannot_give_a_pair_are_counted_and_named() -> None:
    recorder = Recorder()
    cases = {
        "kept": chat(messages(("user", "q")), messages(("assistant", "a"))),
        "no output": chat(messages(("user", "q")), "[]"),
        "tool calls only": chat(messages(("user", "q")), output_parts(tool_call("t", {}))),
        "unreadable": chat("[{'role': 'user'}]", messages(("assistant", "a"))),
        "unreadable output": chat(messages(("user", "q")), "[" * 100 + "]" * 100),
        "unreadable instructions": chat(
            messages(("user", "q")),
            messages(("assistant", "a")),
            **{"gen_ai.system_instructions": "{"},
        ),
        "input": chat(messages(("user", "x" * (MAX_TEXT_CHARS + 1))), messages(("assistant", "a"))),
        "output": chat(
            messages(("user", "q")), messages(("assistant", "x" * (MAX_TEXT_CHARS + 1)))
        ),
        "messages": chat(
            messages(*[("user", "m")] * (MAX_MESSAGES + 2)), messages(("assistant", "a"))
        ),
        "a message": chat(
            messages(("user", "x" * (MAX_MESSAGE_CHARS + 1)), ("user", "q")),
            messages(("assistant", "a")),
        ),
        "tool calls": chat(
            messages(("user", "q")),
            output_parts(text("a"), *[tool_call("t", {})] * (MAX_TOOL_CALLS + 1)),
        ),
        "tool name": chat(
            messages(("user", "q")),
            output_parts(text("a"), tool_call("t" * (MAX_TOOL_NAME_CHARS + 1), {})),
        ),
        "arguments": chat(
            messages(("user", "q")),
            output_parts(text("a"), tool_call("t", {"a": "x" * MAX_ARGUMENTS_BYTES})),
        ),
        "conversation": chat(
            messages(("user", "q")),
            messages(("assistant", "a")),
            **{"gen_ai.conversation.id": "c" * (MAX_CONVERSATION_ID_CHARS + 1)},
        ),
    }
    ids = {}
    for at, (case, attributes) in enumerate(cases.items()):
        with recorder.span(case, attributes, at) as span:
            ids[case] = pair_id(span)
    mapped = mapped_of(recorder)
    assert [pair.id for pair in mapped.pairs] == [ids["kept"]]
    assert mapped.rejected == len(cases) - 1
    expected = {
        "no output": "no output",
        "tool calls only": "no output",
        "unreadable": "unreadable gen_ai.input.messages",
        "unreadable output": "unreadable gen_ai.output.messages",
        "unreadable instructions": "unreadable gen_ai.system_instructions",
        "input": "too large: input over 100,000 characters",
        "output": "too large: output over 100,000 characters",
        "messages": "too large: more than 200 messages before the input",
        "a message": "too large: a message over 100,000 characters",
        "tool calls": "too large: more than 100 tool calls",
        "tool name": "too large: a tool name over 128 characters",
        "arguments": "too large: tool call arguments over 16,384 bytes",
        "conversation": "too large: gen_ai.conversation.id over 128 characters",
    }
    assert mapped.reasons == [f"span {ids[case]}: {why}" for case, why in expected.items()]
    answer = partial_success(mapped)["partialSuccess"]
    assert answer["rejectedSpans"] == 13
    assert answer["errorMessage"].startswith(
        f"13 GenAI span(s) left out: span {ids['no output']}: no output; "
    )
    assert answer["errorMessage"].endswith("; and 8 more")
    assert answer["errorMessage"].count("span ") == 5


def test_the_limits_themselves_are_kept() -> None:
    recorder = Recorder()
    before = [("user", "m" * MAX_MESSAGE_CHARS)] * (MAX_MESSAGES - 1) + [("assistant", "a")]
    output = output_parts(
        text("x" * MAX_TEXT_CHARS),
        *[tool_call("t" * MAX_TOOL_NAME_CHARS, {"a": "x" * (MAX_ARGUMENTS_BYTES - 8)})]
        * MAX_TOOL_CALLS,
    )
    attributes = chat(
        messages(*before, ("user", "q" * MAX_TEXT_CHARS)),
        output,
        **{"gen_ai.conversation.id": "c" * MAX_CONVERSATION_ID_CHARS},
    )
    with recorder.span("chat", attributes, 0):
        pass
    mapped = mapped_of(recorder)
    assert mapped.rejected == 0
    [pair] = mapped.pairs
    assert len(pair.messages or []) == MAX_MESSAGES
    assert arguments_bytes((pair.tool_calls or [])[0].arguments) == MAX_ARGUMENTS_BYTES


def test_an_unreadable_chat_of_an_agent_rejects_the_agent_naming_the_chat() -> None:
    recorder = Recorder()
    unreadable = chat("not json", messages(("assistant", "a")))
    with (
        recorder.span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, 0) as agent,
        recorder.span("chat", unreadable, 1, parent=agent) as bad,
    ):
        pass
    mapped = mapped_of(recorder)
    chat_id = pair_id(bad).split("-")[1]
    assert mapped.reasons == [
        f"span {pair_id(agent)}: unreadable gen_ai.input.messages (chat span {chat_id})"
    ]


def test_an_agent_with_more_than_100_tools_is_rejected() -> None:
    recorder = Recorder()
    with recorder.span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, 0) as agent:
        with recorder.span(
            "chat", chat(messages(("user", "q")), messages(("assistant", "a"))), 1, parent=agent
        ):
            pass
        for at in range(MAX_TOOL_CALLS + 1):
            with recorder.span("execute_tool", tool_attributes("t", "{}"), 2 + at, parent=agent):
                pass
    assert mapped_of(recorder).reasons == [
        f"span {pair_id(agent)}: too large: more than 100 tool calls"
    ]


def test_the_answer_in_the_exports_own_encoding() -> None:
    recorder = Recorder()
    with recorder.span("chat", chat(messages(("user", "q")), "[]"), 0):
        pass
    mapped = mapped_of(recorder)
    response = ExportTraceServiceResponse.FromString(export_response(mapped, PROTOBUF))
    assert response.partial_success.rejected_spans == 1
    assert response.partial_success.error_message.endswith(": no output")
    assert json.loads(export_response(mapped, JSON)) == partial_success(mapped)
    assert (
        ExportTraceServiceResponse.FromString(export_response(Mapped(), PROTOBUF))
        == ExportTraceServiceResponse()
    )
    assert json.loads(export_response(Mapped(), JSON)) == {"partialSuccess": {}}


# ---- what the SDK cannot send -----------------------------------------------------------------


def _request() -> tuple[ExportTraceServiceRequest, Any]:
    request = ExportTraceServiceRequest()
    return request, request.resource_spans.add().scope_spans.add()


def _add(scope: Any, trace: int, span: int, parent: int = 0, **attributes: Any) -> Any:
    added = scope.spans.add(
        trace_id=trace.to_bytes(16, "big"),
        span_id=span.to_bytes(8, "big"),
        parent_span_id=parent.to_bytes(8, "big") if parent else b"",
        start_time_unix_nano=T0 + span,
    )
    for key, value in attributes.items():
        added.attributes.add(key=key.replace("__", "."), value=value)
    return added


def _string(value: str) -> AnyValue:
    return AnyValue(string_value=value)


def _kvlist(**values: AnyValue) -> AnyValue:
    value = AnyValue()
    for key, item in values.items():
        value.kvlist_value.values.add(key=key, value=item)
    return value


def test_messages_as_an_array_of_kvlists_are_read() -> None:
    request, scope = _request()
    parts = AnyValue()
    parts.array_value.values.add().CopyFrom(_kvlist(type=_string("text"), content=_string("hi")))
    message = _kvlist(role=_string("user"), parts=parts)
    input_messages = AnyValue()
    input_messages.array_value.values.add().CopyFrom(message)
    output = _string(messages(("assistant", "hello")))
    _add(scope, 1, 1, gen_ai__operation__name=_string("chat"),
         gen_ai__input__messages=input_messages, gen_ai__output__messages=output)  # fmt: skip
    [pair] = map_export(request).pairs
    assert (pair.input, pair.output) == ("hi", "hello")


def test_invalid_ids_and_an_absent_start() -> None:
    request, scope = _request()
    chat_attributes = {
        "gen_ai__operation__name": _string("chat"),
        "gen_ai__input__messages": _string(messages(("user", "q"))),
        "gen_ai__output__messages": _string(messages(("assistant", "a"))),
    }
    _add(scope, 1, 0, **chat_attributes)  # an all-zero span id
    scope.spans.add(trace_id=b"\x01" * 3, span_id=b"\x02" * 8).attributes.extend(
        scope.spans[0].attributes
    )
    _add(scope, 1, 9, **chat_attributes).start_time_unix_nano = 0
    _add(scope, 0, 0)  # not GenAI: ignored whatever its ids
    mapped = map_export(request)
    assert [(pair.id, pair.created_ms) for pair in mapped.pairs] == [(f"{1:032x}-{9:016x}", 0)]
    assert mapped.reasons == [
        f"span {1:032x}-{0:016x}: trace id and span id must be 16 and 8 bytes",
        f"span {'01' * 3}-{'02' * 8}: trace id and span id must be 16 and 8 bytes",
    ]


def test_a_cycle_of_parents_ends() -> None:
    request, scope = _request()
    chat_attributes = {
        "gen_ai__operation__name": _string("chat"),
        "gen_ai__input__messages": _string(messages(("user", "q"))),
        "gen_ai__output__messages": _string(messages(("assistant", "a"))),
    }
    _add(scope, 1, 1, parent=3, gen_ai__operation__name=_string("invoke_agent"))
    _add(scope, 1, 2, parent=1, **chat_attributes)
    _add(scope, 1, 3, parent=2, gen_ai__operation__name=_string("invoke_agent"))
    _add(scope, 1, 4, parent=4, gen_ai__operation__name=_string("invoke_agent"))  # its own parent
    mapped = map_export(request)
    assert len(mapped.pairs) == 1 and mapped.rejected == 2


def test_a_chain_of_10000_nested_agents_maps_in_linear_time() -> None:
    """Every agent of the chain has the one chat at its bottom and the tools below it: each is
    read once, however many agents are above it."""
    request, scope = _request()
    for span in range(1, 10_000):
        _add(scope, 1, span, parent=span - 1, gen_ai__operation__name=_string("invoke_agent"))
        if span > 9_950:
            _add(scope, 1, 100_000 + span, parent=span, **tool_attributes_value())
    big_input = messages(*[("user", "w" * 1000)] * 2000)  # 2 MB of messages
    _add(scope, 1, 10_000, parent=9_999, gen_ai__operation__name=_string("chat"),
         gen_ai__input__messages=_string(big_input),
         gen_ai__output__messages=_string(messages(("assistant", "a"))))  # fmt: skip
    started = time.monotonic()
    mapped = map_export(request)
    # Read once per agent, the chat alone would be 20 GB of JSON: hours, not seconds.
    assert time.monotonic() - started < 30
    assert len(mapped.pairs) == 9_999 and mapped.rejected == 0
    assert {(pair.input, pair.output) for pair in mapped.pairs} == {("w" * 1000, "a")}
    assert [len(pair.tool_calls or []) for pair in mapped.pairs[-3:]] == [3, 2, 1]


def tool_attributes_value() -> dict[str, AnyValue]:
    return {
        "gen_ai__operation__name": _string("execute_tool"),
        "gen_ai__tool__name": _string("t"),
        "gen_ai__tool__call__arguments": _kvlist(a=_string("x" * 10_000)),
    }


# ---- whatever the attributes ------------------------------------------------------------------

KEYS = st.sampled_from(
    ["gen_ai.operation.name", "gen_ai.input.messages", "gen_ai.output.messages",
     "gen_ai.system_instructions", "gen_ai.conversation.id", "gen_ai.request.model",
     "gen_ai.tool.name", "gen_ai.tool.call.arguments", "gen_ai.prompt.0.role",
     "gen_ai.prompt.0.content", "gen_ai.prompt.99999999999.content", "gen_ai.prompt.x.role",
     "gen_ai.completion.0.content", "gen_ai.completion.0.tool_calls.0.name",
     "gen_ai.completion.0.tool_calls.0.arguments", "gen_ai.completion.1.tool_calls.x.name"]
)  # fmt: skip
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10)
    | st.sampled_from(["user", "assistant", "tool", "system", "text", "tool_call",
                       "tool_call_response", "chat", "invoke_agent", "execute_tool"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["role", "parts", "type", "content", "name", "arguments",
                                       "response", "id"]), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip


def _any_value(value: Any, depth: int = 0) -> AnyValue:
    out = AnyValue()
    if isinstance(value, bool):
        out.bool_value = value
    elif isinstance(value, int):
        out.int_value = max(min(value, 2**63 - 1), -(2**63))
    elif isinstance(value, float):
        out.double_value = value
    elif isinstance(value, str):
        out.string_value = value
    elif isinstance(value, list):
        out.array_value.values.extend(_any_value(item, depth + 1) for item in value)
    elif isinstance(value, dict):
        out.kvlist_value.values.add()
        del out.kvlist_value.values[:]
        for key, item in value.items():
            out.kvlist_value.values.add(key=key, value=_any_value(item, depth + 1))
    return out


ATTRIBUTE_VALUES = st.one_of(
    JSONISH.map(lambda value: _string(json.dumps(value))),
    JSONISH.map(_any_value),
    st.text(max_size=30).map(_string),
)
SPANS = st.lists(
    st.tuples(
        st.integers(1, 3),  # trace
        st.integers(1, 8),  # span
        st.integers(0, 8),  # parent
        st.dictionaries(KEYS, ATTRIBUTE_VALUES, max_size=6),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spans=SPANS)
def test_any_attributes_map_within_the_limits_without_raising(spans: list[Any]) -> None:
    request, scope = _request()
    for trace, span, parent, attributes in spans:
        added = _add(scope, trace, span, parent)
        for key, value in attributes.items():
            added.attributes.add(key=key, value=value)
    mapped = map_export(request)
    assert len(mapped.pairs) + mapped.rejected <= len(spans)
    assert len(set(mapped.reasons)) == len(mapped.reasons) <= mapped.rejected
    for pair in mapped.pairs:
        assert len(pair.input) <= MAX_TEXT_CHARS and 0 < len(pair.output) <= MAX_TEXT_CHARS
        assert len(pair.labels) <= MAX_LABELS
        assert all(isinstance(call.arguments, dict) for call in pair.tool_calls or [])
        for call in pair.tool_calls or []:
            arguments_bytes(call.arguments)  # compact JSON: finite numbers only
    json.dumps(partial_success(mapped))
    export_response(mapped, PROTOBUF)
