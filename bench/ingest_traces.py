"""Trace ingestion (E11): GenAI spans per second through POST /otlp/v1/traces of the local
server, and the DynamoDB writes per span against their minimum.

1. Throughput: `evalsvc serve` on free ports with a fresh data directory; exports of 1,000 GenAI
   spans each, made by the OpenTelemetry SDK and encoded as its protobuf exporter encodes them
   (gzip), sent one after another: spans per second per export, for exports of chat spans (a
   pair each) and of agent traces (invoke_agent, chat, execute_tool, chat: a pair per 4 spans);
   then the same exports sent again (every pair already held: nothing is added).
2. Writes: one export of 1,000 chat spans ingested in-process against moto, its DynamoDB calls
   counted: the minimum is one PutItem per pair (each pair is an item of its own, put under the
   condition that its id is new: a span sent again adds nothing), plus one counter ADD per
   append shard it touched.

    .venv/bin/python bench/ingest_traces.py [--exports 5] [--spans 1000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, fresh_tables, shown

# isort: split

import requests
from evalsvc.logic import traces
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind
from evalsvc.storage import datasets as store
from evalsvc.storage.datasets.keys import counter_pks
from evalsvc_tools.local.inprocess import moto_in_process
from local_server import serving
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

KEY = "evk_ingest_bench_key_00000000000000000000000"
PROTOBUF = {"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"}


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def chat_spans(spans: int, seed: int) -> list[ReadableSpan]:
    """`spans` chat spans, each its own trace, in the 1.37 conventions."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    for k in range(spans):
        with tracer.start_as_current_span("chat model") as span:
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.request.model", "small-model")
            span.set_attribute("gen_ai.conversation.id", f"conv-{seed}-{k // 4}")
            span.set_attribute(
                "gen_ai.input.messages",
                _messages("user", f"Question {seed}-{k}: where is the dark mode setting?"),
            )
            span.set_attribute(
                "gen_ai.output.messages",
                _messages("assistant", "Under Settings, Appearance, Dark mode."),
            )
    return list(exporter.get_finished_spans())


def agent_spans(spans: int, seed: int) -> list[ReadableSpan]:
    """Agent traces of 4 spans each (invoke_agent, chat, execute_tool, chat): `spans` in all."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")
    for k in range(spans // 4):
        with tracer.start_as_current_span("invoke_agent helper") as agent:
            agent.set_attribute("gen_ai.operation.name", "invoke_agent")
            with tracer.start_as_current_span("chat") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute(
                    "gen_ai.input.messages", _messages("user", f"Book a table {seed}-{k}")
                )
                chat.set_attribute("gen_ai.output.messages", _messages("assistant", "Looking"))
            with tracer.start_as_current_span("execute_tool book") as tool:
                tool.set_attribute("gen_ai.operation.name", "execute_tool")
                tool.set_attribute("gen_ai.tool.name", "book")
                tool.set_attribute("gen_ai.tool.call.arguments", json.dumps({"people": 2}))
            with tracer.start_as_current_span("chat") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.input.messages", _messages("user", "and?"))
                chat.set_attribute("gen_ai.output.messages", _messages("assistant", "Booked."))
    return list(exporter.get_finished_spans())


def body_of(spans: list[ReadableSpan]) -> bytes:
    return gzip.compress(encode_spans(spans).SerializeToString(), mtime=0)


def throughput(exports: int, spans: int) -> None:
    with serving(KEY) as base:
        session = requests.Session()
        headers = {**PROTOBUF, "Authorization": KEY, "X-Evalsvc-Dataset": "traffic"}
        url = f"{base}/otlp/v1/traces"
        for kind, make in (("chat", chat_spans), ("agent", agent_spans)):
            bodies = [body_of(make(spans, seed)) for seed in range(exports)]
            for sending in ("first", "again"):
                rates = []
                for body in bodies:
                    start = time.perf_counter()
                    answer = session.post(url, data=body, headers=headers, timeout=120)
                    seconds = time.perf_counter() - start
                    answer.raise_for_status()
                    partial = ExportTraceServiceResponse.FromString(answer.content)
                    assert not partial.HasField("partial_success"), partial
                    rates.append(spans / seconds)
                rates.sort()
                print(
                    f"{kind:5} spans, {sending:5}: {exports} exports of {spans} spans "
                    f"({len(bodies[0]):,} B gzipped): {rates[len(rates) // 2]:,.0f} spans/s "
                    f"median, {rates[0]:,.0f} slowest"
                )
        pairs = session.get(f"{base}/data/seed/traffic?limit=1", headers=headers, timeout=60)
        pairs.raise_for_status()


def writes(spans: int) -> None:
    identity = Identity(tenant="bench", key_id="k", user="bench", user_email="bench@example.test")
    body = body_of(chat_spans(spans, 99))
    with moto_in_process():
        fresh_tables()
        counter = CallCounter()
        traces.ingest(identity, body, "application/x-protobuf", "gzip", "w", lambda: False)
        calls = counter.take()
        header = store.get_header("bench", DatasetKind.SEED, "w")
        assert header is not None and header.pair_count == spans
        shards = len(counter_pks(header))
        puts = calls["PutItem"]
        written = sum(calls[op] for op in ("PutItem", "UpdateItem", "TransactWriteItems"))
        print(
            f"calls for {spans} chat spans (one pair each) into a new dataset: {shown(calls)}; "
            f"writes: {puts} PutItem + {written - puts} others = {written / spans:.3f} a span; "
            f"the minimum: {spans} puts + at most {shards} counter ADDs (one per append shard) "
            f"+ 2 once a dataset (its creation, the mark of its first append) = "
            f"{(spans + shards + 2) / spans:.3f} a span"
        )
        again = CallCounter()
        traces.ingest(identity, body, "application/x-protobuf", "gzip", "w", lambda: False)
        resent = again.take()
        print(f"the same export sent again: {shown(resent)}")


def split_writes(spans: int) -> None:
    """Agent traces whose agent spans leave in a later export than their chats and tools (as a
    batching exporter sends them): the pieces wait, then join their root."""
    identity = Identity(tenant="bench", key_id="k", user="bench", user_email="bench@example.test")
    ended = agent_spans(spans, 7)
    roots = [span for span in ended if span.parent is None]
    children = [span for span in ended if span.parent is not None]
    with moto_in_process():
        fresh_tables()
        store.create_empty("bench", DatasetKind.SEED, "s")
        counter = CallCounter()
        for piece in (children, roots):
            body = body_of(piece)
            traces.ingest(identity, body, "application/x-protobuf", "gzip", "s", lambda: False)
            calls = shown(counter.take())
            print(f"  an export of {len(piece)} spans of {len(roots)} agent traces: {calls}")
        header = store.get_header("bench", DatasetKind.SEED, "s")
        assert header is not None and header.pair_count == len(roots)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--exports", type=int, default=5)
    parser.add_argument("--spans", type=int, default=1000)
    args = parser.parse_args()
    throughput(args.exports, args.spans)
    writes(args.spans)
    print("agent traces in two exports, their roots last:")
    split_writes(args.spans)


if __name__ == "__main__":
    main()
