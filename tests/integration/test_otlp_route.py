"""POST /otlp/v1/traces through the API: GenAI spans made by the OpenTelemetry SDK, sent as its
exporters send them (protobuf, OTLP/JSON, gzip), kept as pairs of a seed dataset; sent again,
nothing is added; the dataset from the header or the resource attribute, created when absent;
tenants apart; spans that cannot be pairs counted in partialSuccess; bad bodies refused with
the status OTLP exporters understand and nothing stored."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceResponse,
)

from tests.integration.conftest import Tenant, ok
from tests.otlp_spans import Recorder, messages, pair_id

PROTOBUF = "application/x-protobuf"


def post(
    tenant: Tenant,
    body: bytes,
    content_type: str = PROTOBUF,
    dataset: str | None = "traffic",
    **headers: str,
) -> Any:
    sent = {**tenant.headers, "Content-Type": content_type, **headers}
    if dataset is not None:
        sent["X-Evalsvc-Dataset"] = dataset
    return tenant.http.post("/v1/otlp/v1/traces", content=body, headers=sent)


def chat_trace(recorder: Recorder, k: int, output: str = "Under Settings.") -> None:
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "small-model",
        "gen_ai.conversation.id": f"conv-{k // 2}",
        "gen_ai.input.messages": messages(
            ("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello!"), ("user", f"Q{k}?")
        ),
    }
    if output:
        attributes["gen_ai.output.messages"] = messages(("assistant", output))
    with recorder.span("chat small-model", attributes, at_ms=10 * k):
        pass


def agent_trace(recorder: Recorder) -> None:
    with recorder.span("invoke_agent", {"gen_ai.operation.name": "invoke_agent"}, 0) as agent:
        with recorder.span(
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": messages(("user", "Book a table for 2")),
                "gen_ai.output.messages": messages(("assistant", "Looking")),
            },
            1,
            agent,
        ):
            pass
        with recorder.span(
            "execute_tool book",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "book",
                "gen_ai.tool.call.arguments": json.dumps({"people": 2, "time": "20:00"}),
            },
            2,
            agent,
        ):
            pass
        with recorder.span(
            "chat",
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.input.messages": messages(("user", "ok?")),
                "gen_ai.output.messages": messages(("assistant", "Booked for 20:00.")),
            },
            3,
            agent,
        ):
            pass


def dataset_pairs(tenant: Tenant, dataset_id: str) -> dict[str, dict[str, Any]]:
    return {p["id"]: p for p in ok(tenant.get(f"/data/seed/{dataset_id}")).json()["data"]}


def test_protobuf_spans_become_pairs_and_a_second_sending_adds_nothing(acme: Tenant) -> None:
    recorder = Recorder()
    for k in range(3):
        chat_trace(recorder, k)
    agent_trace(recorder)
    body = recorder.protobuf()

    first = post(acme, body)
    again = post(acme, gzip.compress(body), **{"Content-Encoding": "gzip"})

    for answer in (first, again):
        assert answer.status_code == 200, answer.text[:300]
        assert answer.headers["content-type"] == PROTOBUF
        assert (
            ExportTraceServiceResponse.FromString(answer.content).partial_success.rejected_spans
            == 0
        )
    pairs = dataset_pairs(acme, "traffic")
    spans = {s.name: s for s in recorder.spans()}
    chats = [s for s in recorder.spans() if s.name == "chat small-model"]
    assert set(pairs) == {pair_id(s) for s in chats} | {pair_id(spans["invoke_agent"])}
    chat = pairs[pair_id(chats[1])]
    assert (chat["input"], chat["output"]) == ("Q1?", "Under Settings.")
    assert chat["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello!"},
    ]
    assert chat["conversation_id"] == "conv-0"
    assert chat["metadata"]["labels"] == ["model:small-model"]
    agent = pairs[pair_id(spans["invoke_agent"])]
    assert (agent["input"], agent["output"]) == ("Book a table for 2", "Booked for 20:00.")
    assert agent["tool_calls"] == [{"name": "book", "arguments": {"people": 2, "time": "20:00"}}]


def test_otlp_json_is_read_and_answered_in_json(acme: Tenant) -> None:
    recorder = Recorder()
    chat_trace(recorder, 0)

    answer = post(acme, recorder.json(), "application/json; charset=utf-8")

    assert answer.status_code == 200, answer.text[:300]
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json() == {"partialSuccess": {}}
    assert list(dataset_pairs(acme, "traffic")) == [pair_id(recorder.spans()[0])]


def test_spans_that_cannot_be_pairs_are_counted_and_the_rest_kept(acme: Tenant) -> None:
    recorder = Recorder()
    chat_trace(recorder, 0)
    chat_trace(recorder, 1, output="")  # no output: left out
    with recorder.span("GET /health", {"http.request.method": "GET"}, 50):
        pass  # not GenAI: ignored, not counted

    answer = post(acme, recorder.json(), "application/json")

    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == 1
    assert pair_id(recorder.spans()[1]) in partial["errorMessage"]
    assert "no output" in partial["errorMessage"]
    assert list(dataset_pairs(acme, "traffic")) == [pair_id(recorder.spans()[0])]


def test_the_dataset_is_created_when_absent_and_appended_to_when_present(acme: Tenant) -> None:
    ok(
        acme.post(
            "/data/seed/kept",
            {"data": [{"id": "w0", "input": "i", "output": "o"}], "system_prompt": "S"},
        )
    )
    recorder = Recorder()
    chat_trace(recorder, 0)

    ok(post(acme, recorder.protobuf(), dataset="kept"))
    ok(post(acme, recorder.protobuf(), dataset="fresh"))

    kept = ok(acme.get("/data/seed/kept")).json()
    assert [p["id"] for p in kept["data"]] == ["w0", pair_id(recorder.spans()[0])]
    assert kept["system_prompt"] == "S"
    fresh = ok(acme.get("/data/seed/fresh")).json()
    assert [p["id"] for p in fresh["data"]] == [pair_id(recorder.spans()[0])]
    assert fresh["system_prompt"] == ""


def test_the_resource_attribute_names_the_dataset_when_the_header_does_not(acme: Tenant) -> None:
    a, b = Recorder({"evalsvc.dataset_id": "app-a"}), Recorder({"evalsvc.dataset_id": "app-b"})
    chat_trace(a, 0)
    chat_trace(b, 1)
    body = a.protobuf()

    ok(post(acme, body, dataset=None))
    ok(post(acme, b.protobuf(), dataset=None))
    # The header wins over the attribute
    ok(post(acme, body, dataset="header-wins"))

    assert list(dataset_pairs(acme, "app-a")) == [pair_id(a.spans()[0])]
    assert list(dataset_pairs(acme, "app-b")) == [pair_id(b.spans()[0])]
    assert list(dataset_pairs(acme, "header-wins")) == [pair_id(a.spans()[0])]


def test_neither_header_nor_attribute_is_a_400_and_nothing_is_stored(acme: Tenant) -> None:
    recorder = Recorder()
    chat_trace(recorder, 0)

    answer = post(acme, recorder.protobuf(), dataset=None)

    assert answer.status_code == 400
    assert "X-Evalsvc-Dataset" in answer.json()["error"]
    assert "evalsvc.dataset_id" in answer.json()["error"]
    assert acme.get("/data/seed/latest").status_code == 404


def test_tenants_are_apart(acme: Tenant, globex: Tenant) -> None:
    recorder = Recorder()
    chat_trace(recorder, 0)

    ok(post(acme, recorder.protobuf()))
    ok(post(globex, recorder.protobuf()))

    # Each tenant has its own dataset of that id, each with the pair; neither saw the other's
    assert list(dataset_pairs(acme, "traffic")) == list(dataset_pairs(globex, "traffic"))
    header = ok(acme.get("/data/seed/traffic")).json()
    assert len(header["data"]) == 1


@pytest.mark.parametrize(
    ("headers", "body", "status", "words"),
    [
        ({"Content-Type": "text/plain"}, b"x", 415, "application/x-protobuf"),
        ({"Content-Type": PROTOBUF, "Content-Encoding": "br"}, b"x", 415, "gzip"),
        ({"Content-Type": PROTOBUF}, b"\xff\xff\xff", 400, "protobuf"),
        ({"Content-Type": PROTOBUF, "Content-Encoding": "gzip"}, b"not gzip", 400, "gzip"),
        ({"Content-Type": "application/json"}, b"{", 400, "JSON"),
        ({"Content-Type": "application/json"}, b"[" * 100_000, 400, "JSON"),
        (
            {"Content-Type": "application/json"},
            b'{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz"}]}]}]}',
            400,
            "traceId",
        ),
        ({"Content-Type": PROTOBUF, "X-Evalsvc-Dataset": "a b"}, b"", 400, "X-Evalsvc-Dataset"),
    ],
)
def test_bad_exports_are_refused_saying_what_to_send_and_nothing_is_stored(
    acme: Tenant, headers: dict[str, str], body: bytes, status: int, words: str
) -> None:
    sent = {**acme.headers, "X-Evalsvc-Dataset": "traffic", **headers}

    answer = acme.http.post("/v1/otlp/v1/traces", content=body, headers=sent)

    assert answer.status_code == status, answer.text[:300]
    assert words in answer.json()["error"], answer.json()["error"]
    assert acme.get("/data/seed/traffic").status_code == 404


def test_a_gzip_bomb_and_a_body_over_the_limit_are_413(acme: Tenant) -> None:
    bomb = gzip.compress(b"\x00" * (40 * 1024 * 1024))
    answer = post(acme, bomb, **{"Content-Encoding": "gzip"})
    assert answer.status_code == 413, answer.text[:300]
    assert "32" in answer.json()["error"]

    answer = post(acme, b"\x00" * (5 * 1024 * 1024))
    assert answer.status_code == 413
    assert acme.get("/data/seed/traffic").status_code == 404


def test_a_key_is_needed(acme: Tenant) -> None:
    recorder = Recorder()
    chat_trace(recorder, 0)

    answer = acme.http.post(
        "/v1/otlp/v1/traces",
        content=recorder.protobuf(),
        headers={"Content-Type": PROTOBUF, "X-Evalsvc-Dataset": "traffic"},
    )

    assert answer.status_code == 401
    assert acme.get("/data/seed/traffic").status_code == 404


def test_an_export_that_does_not_fit_the_request_is_a_503_and_its_resending_completes(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.api.routes import ingest_traces

    recorder = Recorder()
    for k in range(5):
        chat_trace(recorder, k)
    body = recorder.protobuf()
    monkeypatch.setattr(ingest_traces, "ANSWER_SECONDS", 10_000.0)

    answer = post(acme, body)

    assert answer.status_code == 503
    assert "send the same data again" in answer.json()["error"]
    monkeypatch.setattr(ingest_traces, "ANSWER_SECONDS", 2.0)
    ok(post(acme, body))
    assert len(dataset_pairs(acme, "traffic")) == 5


# ---- traces in pieces: an exporter sends spans as they end -------------------------------------


def test_an_agent_trace_sent_in_pieces_gives_its_one_pair_when_its_root_arrives(
    acme: Tenant,
) -> None:
    recorder = Recorder()
    agent_trace(recorder)
    spans = {(s.name, s.start_time): s for s in recorder.spans()}
    ordered = sorted(spans.values(), key=lambda s: s.end_time or 0)
    root = next(s for s in ordered if s.name == "invoke_agent")

    # The chats and the tool call leave first, in two exports; the agent last
    from tests.otlp_spans import protobuf_body

    children = [s for s in ordered if s is not root]
    for piece in (children[:2], children[2:]):
        answer = post(acme, protobuf_body(piece))
        assert answer.status_code == 200, answer.text[:300]
        assert (
            ExportTraceServiceResponse.FromString(answer.content).partial_success.rejected_spans
            == 0
        )
    # Nothing yet: the trace waits for its root (the dataset exists, empty)
    assert dataset_pairs(acme, "traffic") == {}
    # A piece sent again while waiting changes nothing
    ok(post(acme, protobuf_body(children[:2])))

    ok(post(acme, protobuf_body([root])))

    pairs = dataset_pairs(acme, "traffic")
    assert list(pairs) == [pair_id(root)]
    agent = pairs[pair_id(root)]
    assert (agent["input"], agent["output"]) == ("Book a table for 2", "Booked for 20:00.")
    assert agent["tool_calls"] == [{"name": "book", "arguments": {"people": 2, "time": "20:00"}}]
    # The pieces are no longer kept, and the trace sent again whole adds nothing
    ok(post(acme, recorder.protobuf()))
    assert list(dataset_pairs(acme, "traffic")) == [pair_id(root)]


def test_a_chat_under_a_request_span_waits_for_it(acme: Tenant) -> None:
    recorder = Recorder()
    chat_attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": messages(("user", "Hi?")),
        "gen_ai.output.messages": messages(("assistant", "Hello.")),
    }
    with (
        recorder.span("POST /ask", {"http.request.method": "POST"}, 0) as request,
        recorder.span("chat", chat_attributes, 1, request),
    ):
        pass
    chat, root = sorted(recorder.spans(), key=lambda s: s.name != "chat")
    from tests.otlp_spans import protobuf_body

    ok(post(acme, protobuf_body([chat])))
    assert dataset_pairs(acme, "traffic") == {}
    ok(post(acme, protobuf_body([root])))

    assert list(dataset_pairs(acme, "traffic")) == [pair_id(chat)]


def test_a_span_whose_parent_is_in_another_process_is_a_local_root() -> None:
    from evalsvc.logic.otlp import waiting
    from opentelemetry.proto.trace.v1.trace_pb2 import (
        SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK,
        SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK,
        Span,
    )

    child = Span(parent_span_id=b"\x01" * 8)
    remote = Span(
        parent_span_id=b"\x01" * 8,
        flags=SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK | SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK,
    )
    known_local = Span(parent_span_id=b"\x01" * 8, flags=SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK)

    assert waiting.is_local_root(Span())
    assert waiting.is_local_root(remote)
    assert not waiting.is_local_root(child)
    assert not waiting.is_local_root(known_local)


def test_a_trace_too_large_to_wait_is_counted_as_rejected(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.storage import waiting_spans

    from tests.otlp_spans import protobuf_body

    monkeypatch.setattr(waiting_spans, "MAX_BYTES", 300)
    recorder = Recorder()
    agent_trace(recorder)
    children = [s for s in recorder.spans() if s.name != "invoke_agent"]

    answer = post(acme, protobuf_body(children))

    partial = ExportTraceServiceResponse.FromString(answer.content).partial_success
    assert partial.rejected_spans == 3
    assert "too large to wait for its root span" in partial.error_message
