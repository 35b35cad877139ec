"""Each function's handler, called with its events/ file, against moto tables from template.yaml."""

from __future__ import annotations

import pytest

from tests.lambda_support import invoke, load_event, with_body, with_header, with_path


def test_write_then_get_seed_dataset_through_the_handlers(event_key: str) -> None:
    # Given the dataset written by the write_seed_dataset event
    status, body = invoke("write_seed_dataset", load_event("write_seed_dataset"))
    assert (status, body) == (200, {"id": "support-faq"})

    # When the get_seed_dataset event reads it
    status, body = invoke("get_seed_dataset", load_event("get_seed_dataset"))

    # Then every pair comes back in request order with its metadata
    assert status == 200
    assert body["id"] == "support-faq"
    assert [p["id"] for p in body["data"]] == ["q1", "q2"]
    assert body["data"][0]["metadata"]["labels"] == ["account"]
    assert body["system_prompt"].startswith("You are a concise support assistant")
    assert body["created_at"].endswith("Z")


def test_replace_seed_dataset_overwrites_whole_dataset(event_key: str) -> None:
    invoke("write_seed_dataset", load_event("write_seed_dataset"))

    status, body = invoke("replace_seed_dataset", load_event("replace_seed_dataset"))
    assert (status, body) == (200, {"id": "support-faq"})

    _, dataset = invoke("get_seed_dataset", load_event("get_seed_dataset"))
    assert [p["id"] for p in dataset["data"]] == ["q1"]


def test_create_seed_dataset_makes_a_server_id_that_latest_finds(event_key: str) -> None:
    status, body = invoke("create_seed_dataset", load_event("create_seed_dataset"))
    assert status == 200
    assert body["id"].startswith("ds_")

    status, latest = invoke("get_seed_dataset", load_event("get_seed_dataset_latest"))
    assert status == 200
    assert latest["id"] == body["id"]


def test_add_seed_pair_appends_after_existing_pairs(event_key: str) -> None:
    invoke("write_seed_dataset", load_event("write_seed_dataset"))

    status, body = invoke("add_seed_pair", load_event("add_seed_pair"))
    assert (status, body) == (200, {"dataset_id": "support-faq", "pair_id": "q3"})

    _, dataset = invoke("get_seed_dataset", load_event("get_seed_dataset"))
    assert [p["id"] for p in dataset["data"]] == ["q1", "q2", "q3"]


def test_add_seed_pair_twice_is_409(event_key: str) -> None:
    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    invoke("add_seed_pair", load_event("add_seed_pair"))

    status, body = invoke("add_seed_pair", load_event("add_seed_pair"))

    assert status == 409
    assert body == {"error": "pair id 'q3' already exists in dataset 'support-faq'"}


def test_ingest_traces_keeps_the_events_genai_spans_as_pairs(event_key: str) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    # The event: an exporter's gzipped protobuf of an agent trace and a chat span
    status, body = invoke("ingest_traces", load_event("ingest_traces"))

    assert status == 200
    assert ExportTraceServiceResponse.FromString(body).partial_success.rejected_spans == 0
    get = with_path(load_event("get_seed_dataset"), id="support-traffic")
    status, dataset = invoke("get_seed_dataset", get)
    assert status == 200
    pairs = {p["input"]: p for p in dataset["data"]}
    assert set(pairs) == {"Is there a dark mode?", "How do I reset my password?"}
    agent = pairs["Is there a dark mode?"]
    assert agent["output"] == "Yes, under Settings, Appearance."
    assert agent["tool_calls"] == [{"name": "search_docs", "arguments": {"query": "dark mode"}}]
    assert pairs["How do I reset my password?"]["messages"] == [
        {"role": "system", "content": "Be brief."}
    ]


def test_add_seed_pair_for_prompt_files_into_dataset_with_that_prompt(event_key: str) -> None:
    invoke("write_seed_dataset", load_event("write_seed_dataset"))

    status, body = invoke("add_seed_pair_for_prompt", load_event("add_seed_pair_for_prompt"))

    assert status == 200
    assert body["dataset_id"] == "support-faq"
    _, dataset = invoke("get_seed_dataset", load_event("get_seed_dataset"))
    assert dataset["data"][-1]["id"] == body["pair_id"]


def test_get_synthetic_latest_without_any_is_404(event_key: str) -> None:
    status, body = invoke("get_synthetic_dataset", load_event("get_synthetic_dataset"))
    assert (status, body) == (404, {"error": "there is no synthetic dataset yet"})


def test_get_synthetic_dataset_after_import(event_key: str) -> None:
    from evalsvc.logic.datasets import import_synthetic_dataset

    header = import_synthetic_dataset(
        "local", [("hi", "hello"), ("bye", "goodbye")], system_prompt="sp"
    )

    status, body = invoke("get_synthetic_dataset", load_event("get_synthetic_dataset"))

    assert status == 200
    assert body["id"] == header.dataset_id
    assert [(p["input"], p["output"]) for p in body["data"]] == [
        ("hi", "hello"),
        ("bye", "goodbye"),
    ]
    assert all(p["id"] for p in body["data"])


@pytest.mark.parametrize(
    "function",
    [
        "create_seed_dataset",
        "write_seed_dataset",
        "replace_seed_dataset",
        "get_seed_dataset",
        "add_seed_pair",
        "add_seed_pair_for_prompt",
        "get_synthetic_dataset",
    ],
)
@pytest.mark.parametrize("authorization", [None, "", "evk_not_a_key", "Bearer "])
def test_every_handler_refuses_a_missing_or_unknown_key(
    event_key: str, function: str, authorization: str | None
) -> None:
    event = with_header(load_event(function), "Authorization", authorization)

    status, body = invoke(function, event)

    assert status == 401
    assert set(body) == {"error"}


def test_bearer_scheme_is_accepted(event_key: str) -> None:
    event = with_header(load_event("write_seed_dataset"), "Authorization", f"Bearer {event_key}")
    assert invoke("write_seed_dataset", event)[0] == 200


def test_malformed_json_through_the_handler_is_400(event_key: str) -> None:
    event = with_body(load_event("write_seed_dataset"), b'{"data": [')

    status, body = invoke("write_seed_dataset", event)

    assert status == 400
    assert body["error"].startswith("request body is not valid JSON")


def test_bad_dataset_id_in_path_is_400(event_key: str) -> None:
    event = with_path(load_event("get_seed_dataset"), id="no spaces allowed")

    status, body = invoke("get_seed_dataset", event)

    assert status == 400
    assert "is not valid" in body["error"]


def test_large_dataset_read_is_gzip_compressed_when_accepted(event_key: str) -> None:
    pairs = [{"input": f"question {i} " * 20, "output": f"answer {i} " * 20} for i in range(400)]
    invoke("write_seed_dataset", with_body(load_event("write_seed_dataset"), {"data": pairs}))

    from tests.lambda_support import LambdaContext, handler_of

    response = handler_of("get_seed_dataset")(load_event("get_seed_dataset"), LambdaContext())

    assert response["statusCode"] == 200
    assert response["headers"]["content-encoding"] == "gzip"
    assert response["isBase64Encoded"] is True
    status, body = invoke("get_seed_dataset", load_event("get_seed_dataset"))
    assert status == 200
    assert len(body["data"]) == 400


def test_estimate_and_usage_through_their_handlers(event_key: str) -> None:
    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    checks = with_body(load_event("specify_questions"), {"metrics": ["check:non_empty"]})
    assert invoke("specify_questions", checks)[0] == 200

    status, estimate = invoke("estimate_evaluation", load_event("estimate_evaluation"))

    assert status == 200, estimate
    assert estimate["pairs"] == 2
    assert estimate["cost_usd_max"] == 0.0  # the event's metrics are checks: no LLM call
    status, month = invoke("get_usage", load_event("get_usage"))
    assert status == 200, month
    assert month == {
        "month": "2026-11",
        "llm_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "limit_usd": None,
        "limit_is_default": False,
        "reserved_usd": 0.0,
    }
