"""The real exporter against the local server: code instrumented with the OpenTelemetry SDK,
its OTLP/HTTP protobuf exporter configured only by the environment variables the README shows
(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`), spans batched as the SDK
batches them (an agent's trace split over several exports), and the pairs found in the dataset,
then evaluated. The Python SDK has no OTLP/JSON exporter: the JSON form is tested with the same
SDK's spans in tests/integration/test_otlp_route.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Tracer

from tests.e2e.conftest import DEV_KEY, LocalServer


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


class Counting(SpanExporter):
    """The real exporter, and how many exports it made (each a POST) and their results."""

    def __init__(self, inner: OTLPSpanExporter) -> None:
        self.inner = inner
        self.exports: list[int] = []
        self.results: list[SpanExportResult] = []

    def export(self, spans: Any) -> SpanExportResult:
        self.exports.append(len(spans))
        result = self.inner.export(spans)
        self.results.append(result)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()


@pytest.fixture
def exporter_env(server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The three lines of the README, pointing at the local server."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"{server.base_url}/otlp/v1/traces")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
    monkeypatch.setenv(
        "OTEL_EXPORTER_OTLP_HEADERS", f"Authorization={DEV_KEY},X-Evalsvc-Dataset=sdk-traffic"
    )
    yield "sdk-traffic"


def instrumented_app(tracer: Tracer) -> None:
    """What an instrumented assistant records: an agent run with a tool, and two chat turns."""
    with tracer.start_as_current_span("invoke_agent booking") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("gen_ai.conversation.id", "conv-e2e")
        with tracer.start_as_current_span("chat small-model") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.request.model", "small-model")
            chat.set_attribute(
                "gen_ai.input.messages", json.dumps([text("user", "Table for 2 at 8?")])
            )
            chat.set_attribute(
                "gen_ai.output.messages", json.dumps([text("assistant", "Checking.")])
            )
        with tracer.start_as_current_span("execute_tool find_table") as tool:
            tool.set_attribute("gen_ai.operation.name", "execute_tool")
            tool.set_attribute("gen_ai.tool.name", "find_table")
            tool.set_attribute("gen_ai.tool.call.arguments", '{"people": 2, "time": "20:00"}')
        with tracer.start_as_current_span("chat small-model") as chat:
            chat.set_attribute("gen_ai.operation.name", "chat")
            chat.set_attribute("gen_ai.input.messages", json.dumps([text("user", "ok?")]))
            chat.set_attribute(
                "gen_ai.output.messages", json.dumps([text("assistant", "Booked for 20:00.")])
            )
    with tracer.start_as_current_span("chat small-model") as chat:
        chat.set_attribute("gen_ai.operation.name", "chat")
        chat.set_attribute("gen_ai.request.model", "small-model")
        chat.set_attribute(
            "gen_ai.input.messages",
            json.dumps([text("system", "Be brief."), text("user", "Where is dark mode?")]),
        )
        chat.set_attribute(
            "gen_ai.output.messages", json.dumps([text("assistant", "Settings, Appearance.")])
        )
    # The older numbered attributes, as earlier instrumentations write them
    with tracer.start_as_current_span("openai.chat") as old:
        old.set_attribute("gen_ai.request.model", "older-model")
        old.set_attribute("gen_ai.prompt.0.role", "user")
        old.set_attribute("gen_ai.prompt.0.content", "Hi")
        old.set_attribute("gen_ai.completion.0.role", "assistant")
        old.set_attribute("gen_ai.completion.0.content", "Hello!")


def run_app(batch: int) -> tuple[Counting, list[ReadableSpan]]:
    """The app instrumented with the real exporter, batches of `batch` spans; the spans ended."""
    counting = Counting(OTLPSpanExporter())
    ended: list[ReadableSpan] = []

    class Keep(BatchSpanProcessor):
        def on_end(self, span: ReadableSpan) -> None:
            ended.append(span)
            super().on_end(span)

    provider = TracerProvider(resource=Resource.create({"service.name": "booking-assistant"}))
    provider.add_span_processor(Keep(counting, max_export_batch_size=batch))
    instrumented_app(provider.get_tracer("booking-assistant"))
    provider.force_flush()
    provider.shutdown()
    return counting, ended


def span_pair_id(span: ReadableSpan) -> str:
    context = span.get_span_context()
    assert context is not None
    return f"{context.trace_id:032x}-{context.span_id:016x}"


def pairs_of(server: LocalServer, dataset_id: str) -> dict[str, dict[str, Any]]:
    answer = requests.get(
        f"{server.base_url}/data/seed/{dataset_id}", headers={"Authorization": DEV_KEY}, timeout=30
    )
    assert answer.status_code == 200, answer.text[:300]
    return {p["id"]: p for p in answer.json()["data"]}


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_the_real_exporter_sends_an_apps_genai_spans_as_pairs(
    server: LocalServer, exporter_env: str, monkeypatch: pytest.MonkeyPatch, compression: str
) -> None:
    dataset_id = f"{exporter_env}-{compression}"
    monkeypatch.setenv(
        "OTEL_EXPORTER_OTLP_HEADERS", f"Authorization={DEV_KEY},X-Evalsvc-Dataset={dataset_id}"
    )
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", compression)

    # Batches of 2: the agent's spans leave in several exports, the agent span last
    counting, ended = run_app(batch=2)

    assert all(result is SpanExportResult.SUCCESS for result in counting.results)
    assert len(counting.exports) >= 3 and sum(counting.exports) == len(ended) == 6
    by_name: dict[str, list[ReadableSpan]] = {}
    for span in ended:
        by_name.setdefault(span.name, []).append(span)
    (agent,) = by_name["invoke_agent booking"]
    chats = by_name["chat small-model"]
    plain_chat = next(s for s in chats if s.parent is None)
    (old,) = by_name["openai.chat"]
    pairs = pairs_of(server, dataset_id)
    # One pair for the agent (its chats give none), one per plain chat span
    assert set(pairs) == {span_pair_id(agent), span_pair_id(plain_chat), span_pair_id(old)}
    booked = pairs[span_pair_id(agent)]
    assert (booked["input"], booked["output"]) == ("Table for 2 at 8?", "Booked for 20:00.")
    assert booked["tool_calls"] == [
        {"name": "find_table", "arguments": {"people": 2, "time": "20:00"}}
    ]
    assert booked["conversation_id"] == "conv-e2e"
    chat = pairs[span_pair_id(plain_chat)]
    assert (chat["input"], chat["output"]) == ("Where is dark mode?", "Settings, Appearance.")
    assert chat["messages"] == [{"role": "system", "content": "Be brief."}]
    assert chat["metadata"]["labels"] == ["model:small-model"]
    assert (pairs[span_pair_id(old)]["input"], pairs[span_pair_id(old)]["output"]) == (
        "Hi",
        "Hello!",
    )

    # And the pairs are evaluated like any others
    headers = {"Authorization": DEV_KEY}
    metrics = requests.post(
        f"{server.base_url}/specify_questions",
        json={"metrics": ["check:non_empty", "check:trajectory:strict"]},
        headers=headers,
        timeout=30,
    ).json()
    result = requests.post(
        f"{server.base_url}/evaluate",
        json={"seed_data_id": dataset_id, "metrics_id": metrics["metrics_id"]},
        headers=headers,
        timeout=60,
    )
    assert result.status_code == 200, result.text[:300]
    scores = result.json()["scores"]
    assert scores[0]["mean_score"] == 5.0
    # No pair says which calls were expected: the trajectory check applies to none
    assert scores[1]["not_applicable"] == 3


def test_the_same_spans_exported_again_add_nothing(server: LocalServer, exporter_env: str) -> None:
    counting, ended = run_app(batch=512)
    again = OTLPSpanExporter()

    assert again.export(ended) is SpanExportResult.SUCCESS

    assert len(counting.exports) == 1
    assert len(pairs_of(server, exporter_env)) == 3
