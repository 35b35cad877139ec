"""An OTLP/HTTP trace export body is read as the SDK's exporters send it (protobuf, or OTLP/JSON
with hex ids; gzip or not), within its bounds: 32 MiB decompressed (a gzip bomb stops there),
10,000 spans, JSON nested at most 64 levels. Whatever the bytes, reading them answers a request
or raises one of the service's errors (400, 413, 415) that says what to fix; nothing else."""

from __future__ import annotations

import gzip
import json
import time
import tracemalloc

import pytest
from evalsvc.core.errors import (
    DomainError,
    InvalidInput,
    PayloadTooLarge,
    UnsupportedMediaType,
)
from evalsvc.logic.otlp.decode import MAX_BODY_BYTES, MAX_SPANS, decode_export
from evalsvc.logic.otlp.json_text import deeper_than, read_json
from evalsvc.scoring.bounded_json import NotJson, nesting_depth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.otlp_spans import T0, Recorder, json_body, json_document, messages

PROTOBUF = "application/x-protobuf"
JSON = "application/json"


@pytest.fixture(scope="module")
def sdk_body() -> bytes:
    """An agent trace and a chat trace, as the SDK's protobuf exporter sends them."""
    recorder = Recorder({"evalsvc.dataset_id": "support"})
    with recorder.span("invoke_agent helper", {"gen_ai.operation.name": "invoke_agent"}, 0) as a:
        chat = {"gen_ai.operation.name": "chat", "gen_ai.input.messages": messages(("user", "hi"))}
        with recorder.span("chat", chat, 1, parent=a):
            pass
    with recorder.span(
        "chat", {"gen_ai.prompt.0.content": "q", "gen_ai.completion.0.content": "a"}, 5
    ):
        pass
    return recorder.protobuf()


def test_the_sdk_protobuf_export_is_read_as_it_was_encoded(sdk_body: bytes) -> None:
    request = decode_export(sdk_body, PROTOBUF, None)
    assert request == ExportTraceServiceRequest.FromString(sdk_body)
    spans = [s for r in request.resource_spans for ss in r.scope_spans for s in ss.spans]
    assert len(spans) == 3
    assert {len(s.trace_id) for s in spans} == {16}
    assert {s.start_time_unix_nano for s in spans} == {T0, T0 + 1_000_000, T0 + 5_000_000}


@pytest.mark.parametrize(
    "content_type",
    [
        PROTOBUF,
        "Application/X-Protobuf",
        "application/x-protobuf; charset=utf-8",
        " application/x-protobuf ;q=1",
    ],
)
def test_the_content_type_is_read_without_case_or_parameters(
    sdk_body: bytes, content_type: str
) -> None:
    assert decode_export(sdk_body, content_type, None) == ExportTraceServiceRequest.FromString(
        sdk_body
    )


@pytest.mark.parametrize("encoding", ["gzip", "GZIP", " gzip "])
def test_a_gzip_body_is_read(sdk_body: bytes, encoding: str) -> None:
    expected = ExportTraceServiceRequest.FromString(sdk_body)
    assert decode_export(gzip.compress(sdk_body), PROTOBUF, encoding) == expected
    assert decode_export(gzip.compress(json_body(sdk_body)), JSON, encoding) == expected


def test_every_member_of_a_gzip_body_is_read(sdk_body: bytes) -> None:
    halves = gzip.compress(sdk_body[:100]) + gzip.compress(sdk_body[100:])
    assert decode_export(halves, PROTOBUF, "gzip") == ExportTraceServiceRequest.FromString(sdk_body)


@pytest.mark.parametrize("encoding", [None, "", "identity"])
def test_a_body_without_content_encoding_is_read_as_is(
    sdk_body: bytes, encoding: str | None
) -> None:
    assert decode_export(sdk_body, PROTOBUF, encoding) == ExportTraceServiceRequest.FromString(
        sdk_body
    )


def test_the_same_export_in_otlp_json_with_hex_ids_reads_the_same(sdk_body: bytes) -> None:
    document = json_document(sdk_body)
    trace_id = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
    assert len(trace_id) == 32 and int(trace_id, 16) >= 0  # hex, as OTLP/JSON writes it
    expected = ExportTraceServiceRequest.FromString(sdk_body)
    assert decode_export(json_body(sdk_body), JSON, None) == expected
    assert decode_export(json_body(sdk_body), "application/json; charset=utf-8", None) == expected


def test_upper_case_hex_ids_read_the_same(sdk_body: bytes) -> None:
    document = json_document(sdk_body)
    span = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["traceId"] = span["traceId"].upper()
    body = json.dumps(document).encode()
    assert decode_export(body, JSON, None) == ExportTraceServiceRequest.FromString(sdk_body)


# The shape of the OTLP/JSON example of the protocol's own documents: ids in hex, the span kind an
# integer, times as strings, an int64 attribute as a string and another as a number, and fields
# this version of the messages does not know (which a receiver ignores).
HAND_WRITTEN = {
    "resourceSpans": [
        {
            "resource": {
                "attributes": [
                    {"key": "service.name", "value": {"stringValue": "my.service"}},
                    {"key": "evalsvc.dataset_id", "value": {"stringValue": "support"}},
                ]
            },
            "scopeSpans": [
                {
                    "scope": {"name": "my.library", "version": "1.0.0", "attributes": []},
                    "spans": [
                        {
                            "traceId": "5B8EFFF798038103D269B633813FC60C",
                            "spanId": "EEE19B7EC3C1B174",
                            "parentSpanId": "EEE19B7EC3C1B173",
                            "name": "chat gpt-x",
                            "startTimeUnixNano": "1544712660000000000",
                            "endTimeUnixNano": 1544712661000000000,
                            "kind": 3,
                            "attributes": [
                                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                                {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "12"}},
                                {"key": "gen_ai.usage.output_tokens", "value": {"intValue": 7}},
                                {"key": "later.field", "value": {"futureValue": {"x": 1}}},
                            ],
                            "links": [
                                {
                                    "traceId": "00000000000000000000000000000001",
                                    "spanId": "0000000000000002",
                                }
                            ],
                            "status": {"code": 1},
                            "aFieldFromTheFuture": [1, 2, 3],
                        }
                    ],
                }
            ],
        }
    ]
}


def test_a_hand_written_otlp_json_export_is_read() -> None:
    request = decode_export(json.dumps(HAND_WRITTEN).encode(), JSON, None)
    span = request.resource_spans[0].scope_spans[0].spans[0]
    assert span.trace_id.hex() == "5b8efff798038103d269b633813fc60c"
    assert span.span_id.hex() == "eee19b7ec3c1b174"
    assert span.parent_span_id.hex() == "eee19b7ec3c1b173"
    assert span.links[0].span_id.hex() == "0000000000000002"
    assert span.kind == Span.SPAN_KIND_CLIENT
    assert span.start_time_unix_nano == 1544712660000000000
    assert span.end_time_unix_nano == 1544712661000000000
    assert [kv.value.int_value for kv in span.attributes[1:3]] == [12, 7]


def _with_span_field(name: str, value: object) -> bytes:
    document = json.loads(json.dumps(HAND_WRITTEN))
    document["resourceSpans"][0]["scopeSpans"][0]["spans"][0][name] = value
    return json.dumps(document).encode()


@pytest.mark.parametrize(
    ("name", "value", "named"),
    [
        ("traceId", "5B8EFFF798038103D269B633813FC60G", "spans[0].traceId must be 32 hex digits"),
        ("traceId", "W46/95gDgQPSabYzgT/GDA==", "spans[0].traceId must be 32 hex digits"),
        ("spanId", "eee19b7ec3c1b1", "spans[0].spanId must be 16 hex digits"),
        ("spanId", "ee e1 9b 7e c3 c1 b1 74", "spans[0].spanId must be 16 hex digits"),
        ("parentSpanId", 12, "spans[0].parentSpanId must be 16 hex digits"),
        ("links", [{"traceId": "xyz"}], "spans[0].links[0].traceId must be 32 hex digits"),
    ],
)
def test_a_bad_hex_id_is_400_naming_it(name: str, value: object, named: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        decode_export(_with_span_field(name, value), JSON, None)
    assert named in raised.value.message
    assert raised.value.message.startswith("resourceSpans[0].scopeSpans[0].")


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b'{"resourceSpans": [', "body is not JSON"),
        (b'{"resourceSpans": NaN}', "NaN is not a JSON value"),
        (b"[1, 2]", "send an object with resourceSpans"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b'{"resourceSpans": {"a": 1}}', "not an OTLP/JSON ExportTraceServiceRequest"),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": 5}]}]}]}',
            "resourceSpans.scopeSpans.spans.name: expected string",
        ),
        (
            b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "soon"}]}]}]}',
            "soon",
        ),
    ],
)
def test_malformed_json_is_400_saying_what_is_wrong(body: bytes, says: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        decode_export(body, JSON, None)
    assert says in raised.value.message


def test_a_null_id_is_an_absent_one() -> None:
    request = decode_export(_with_span_field("parentSpanId", None), JSON, None)
    assert request.resource_spans[0].scope_spans[0].spans[0].parent_span_id == b""


def test_unknown_enum_names_and_fields_are_ignored() -> None:
    body = _with_span_field("status", {"code": "STATUS_CODE_FROM_THE_FUTURE", "what": 1})
    assert decode_export(body, JSON, None).resource_spans[0].scope_spans[0].spans[0].name


def test_a_body_that_is_not_protobuf_is_400() -> None:
    with pytest.raises(InvalidInput) as raised:
        decode_export(b"\xff\xff\xff\xff not protobuf", PROTOBUF, None)
    assert raised.value.message.startswith(
        "body is not an OTLP ExportTraceServiceRequest in protobuf: "
    )


@pytest.mark.parametrize(
    "content_type", [None, "", "text/plain", "application/protobuf", "application/jsonx"]
)
def test_another_content_type_is_415_naming_the_two_read(content_type: str | None) -> None:
    with pytest.raises(UnsupportedMediaType) as raised:
        decode_export(b"{}", content_type, None)
    assert raised.value.status_code == 415
    assert "application/x-protobuf" in raised.value.message
    assert "application/json" in raised.value.message


@pytest.mark.parametrize("encoding", ["br", "deflate", "gzip, br", "x-gzip"])
def test_another_content_encoding_is_415(encoding: str) -> None:
    with pytest.raises(UnsupportedMediaType) as raised:
        decode_export(b"{}", JSON, encoding)
    assert "gzip" in raised.value.message


@pytest.mark.parametrize(
    "body",
    [
        b"not gzip at all",
        gzip.compress(b"{}", mtime=0)[:-6],
        gzip.compress(b"{}", mtime=0) + b"trailing",
    ],
    ids=["not gzip", "cut short", "trailing bytes"],
)
def test_a_corrupt_or_cut_gzip_body_is_400(body: bytes) -> None:
    with pytest.raises(InvalidInput) as raised:
        decode_export(body, JSON, "gzip")
    assert "gzip" in raised.value.message


ONE_MIB = bytes(1024 * 1024)


@pytest.mark.parametrize(
    "bomb",
    [
        gzip.compress(ONE_MIB * 48, mtime=0),  # one member, 48 MiB inflated
        gzip.compress(ONE_MIB, mtime=0) * 1024,  # 1,024 members, 1 GiB inflated
    ],
    ids=["one member", "many members"],
)
def test_a_gzip_bomb_stops_at_32_mib_quickly(bomb: bytes) -> None:
    assert len(bomb) < 2 * 1024 * 1024
    started = time.monotonic()
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLarge) as raised:
            decode_export(bomb, PROTOBUF, "gzip")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 10
    assert peak < 3 * MAX_BODY_BYTES  # never the whole inflated body
    assert "32 MiB" in raised.value.message


def test_a_body_just_at_the_limit_inflates() -> None:
    # A string field of the request (a resource's schema_url) padded to MAX_BODY_BYTES.
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.schema_url = "x" * MAX_BODY_BYTES
    while len(body := request.SerializeToString()) > MAX_BODY_BYTES:
        resource_spans.schema_url = "x" * (
            len(resource_spans.schema_url) - (len(body) - MAX_BODY_BYTES)
        )
    assert len(body) == MAX_BODY_BYTES
    assert decode_export(gzip.compress(body, 1), PROTOBUF, "gzip") == request


def test_a_body_over_the_limit_is_413_before_it_is_read() -> None:
    with pytest.raises(PayloadTooLarge) as raised:
        decode_export(bytes(MAX_BODY_BYTES + 1), PROTOBUF, None)
    assert "32 MiB" in raised.value.message


def _request_of(spans: int) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    for index in range(spans):
        scope.spans.add(trace_id=bytes(15) + b"\x01", span_id=index.to_bytes(8, "big"))
    return request


def test_more_than_10000_spans_are_413_naming_the_limit() -> None:
    assert MAX_SPANS == 10_000
    at_limit = _request_of(MAX_SPANS)
    assert decode_export(at_limit.SerializeToString(), PROTOBUF, None) == at_limit
    over = _request_of(MAX_SPANS + 1).SerializeToString()
    with pytest.raises(PayloadTooLarge) as raised:
        decode_export(over, PROTOBUF, None)
    assert "10,001 spans" in raised.value.message and "10,000" in raised.value.message
    with pytest.raises(PayloadTooLarge):
        decode_export(json_body(over), JSON, None)


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000,
        b"[" * 65 + b"]" * 65,
        b'{"resourceSpans": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}",
    ],
)
def test_deep_json_is_400_not_a_recursion_error(body: bytes) -> None:
    with pytest.raises(InvalidInput) as raised:
        decode_export(body, JSON, None)
    assert "nested more than 64 levels deep" in raised.value.message


def test_deep_kvlists_in_json_are_400() -> None:
    value: dict[str, object] = {"stringValue": "x"}
    for _ in range(70):
        value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    document = {"resourceSpans": [{"resource": {"attributes": [{"key": "deep", "value": value}]}}]}
    with pytest.raises(InvalidInput):
        decode_export(json.dumps(document).encode(), JSON, None)


def test_deep_kvlists_in_protobuf_are_400_not_a_recursion_error() -> None:
    value = AnyValue(string_value="x")
    for _ in range(300):
        outer = AnyValue()
        outer.kvlist_value.values.add(key="k").value.CopyFrom(value)
        value = outer
    request = ExportTraceServiceRequest()
    request.resource_spans.add().resource.attributes.add(key="deep").value.CopyFrom(value)
    with pytest.raises(InvalidInput):
        decode_export(request.SerializeToString(), PROTOBUF, None)


def test_a_20_mib_json_string_is_read_in_reasonable_time() -> None:
    document = json.loads(json.dumps(HAND_WRITTEN))
    attributes = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    attributes.append({"key": "big", "value": {"stringValue": 'a"\\' * (4 * 1024 * 1024)}})
    body = json.dumps(document).encode()
    started = time.monotonic()
    decode_export(body, JSON, None)
    assert time.monotonic() - started < 20


# ---- the bounded JSON reader ------------------------------------------------------------------

BRACKETY = st.text(st.sampled_from('[]{}"\\ a,:1'), max_size=80)


@settings(max_examples=400, deadline=None)
@given(text=BRACKETY, limit=st.integers(min_value=0, max_value=6))
def test_deeper_than_agrees_with_bounded_json(text: str, limit: int) -> None:
    assert deeper_than(text, limit) == (nesting_depth(text) > limit)


@pytest.mark.parametrize("text", ["1e999", "-1e400", "NaN", "Infinity", "1" * 4001])
def test_what_is_not_a_json_value_is_not_read(text: str) -> None:
    with pytest.raises(NotJson):
        read_json(text)


def test_hostile_nesting_is_answered_quickly() -> None:
    for text in ["[" * 8_000_000, "[]" * 4_000_000, ("[" * 64 + "]" * 64) * 30_000]:
        started = time.monotonic()
        deeper_than(text, 64)
        assert time.monotonic() - started < 10


# ---- whatever the bytes -----------------------------------------------------------------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=30,
)
FIELD_NAMES = st.sampled_from(
    ["resourceSpans", "scopeSpans", "spans", "traceId", "spanId", "parentSpanId", "links",
     "attributes", "key", "value", "stringValue", "intValue", "kvlistValue", "arrayValue",
     "values", "kind", "startTimeUnixNano", "resource", "status", "code", "name", "events"]
)  # fmt: skip
OTLP_LIKE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(st.sampled_from("0123456789abcdefXZ+/="), max_size=34),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(FIELD_NAMES, inner, max_size=4),
    max_leaves=40,
)


def _only_domain_errors(body: bytes, content_type: str, encoding: str | None) -> None:
    try:
        decode_export(body, content_type, encoding)
    except DomainError as exc:
        assert exc.status_code in (400, 413, 415)
        assert exc.message and "Traceback" not in exc.message
        assert len(exc.message) < 1000


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.binary(max_size=400),
    content_type=st.sampled_from([PROTOBUF, JSON, "text/plain"]),
    encoding=st.sampled_from([None, "gzip", "identity"]),
)
def test_any_bytes_read_or_raise_a_domain_error(
    body: bytes, content_type: str, encoding: str | None
) -> None:
    _only_domain_errors(body, content_type, encoding)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.one_of(JSON_VALUES, OTLP_LIKE, st.fixed_dictionaries({"resourceSpans": OTLP_LIKE})))
def test_any_json_reads_or_raises_a_domain_error(value: object) -> None:
    _only_domain_errors(json.dumps(value).encode(), JSON, None)
    _only_domain_errors(gzip.compress(json.dumps(value).encode()), JSON, "gzip")
