"""Structured output against each family of OpenAI-compatible servers (tests/fake_judge.py's
FAMILIES): every LLM feature works with each, a refused request shape is sent once and the mode
that worked is kept, EVALSVC_LLM_STRUCTURED pins a mode, and an answer outside the schema is a
failed attempt that says why, in every mode."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import boto3
import pytest
from evalsvc.scoring.llm.structured import MODES

from tests.conftest import point_service_at
from tests.fake_judge import FAMILIES, FakeJudge, sequence
from tests.integration.conftest import Tenant, ok
from tests.work_queue import Work

QUESTION = "Does the output say please?"
PROMPT = "You are a support assistant for {product}. Always say please."
PAIRS = [
    {"id": "a", "input": "hi", "output": "please sit"},
    {"id": "b", "input": "hey", "output": "sit"},
    {"id": "c", "input": "yo", "output": "Please, sit down"},
]

Start = Callable[..., FakeJudge]


@pytest.fixture
def start(monkeypatch: pytest.MonkeyPatch) -> Iterator[Start]:
    """Starts a fake of a family and points the service at it (with more settings)."""
    with ExitStack() as stack:

        def run(family: str, **env: str) -> FakeJudge:
            fake = stack.enter_context(FakeJudge(family=family).running())
            point_service_at(
                {
                    "EVALSVC_LLM": "openai:fake-llm",
                    "EVALSVC_OPENAI_BASE_URL": fake.base_url,
                    "EVALSVC_OPENAI_API_KEY": "sk-test-not-a-real-key",
                    "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
                    **env,
                },
                monkeypatch,
            )
            return fake

        yield run


def seed(tenant: Tenant, pairs: list[dict[str, str]] = PAIRS) -> None:
    ok(tenant.post("/data/seed/ds", {"data": pairs, "system_prompt": PROMPT}))
    ok(tenant.post("/specify_questions", {"metrics": [QUESTION, "check:non_empty"]}))


def refused_modes(family: str) -> list[str]:
    """The modes tried before the one the family takes."""
    return list(MODES[: MODES.index(FAMILIES[family].mode)])


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_judge_works_with_each_family_and_keeps_the_mode(
    acme: Tenant, start: Start, family: str
) -> None:
    fake = start(family)
    seed(acme)

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    scores = response.json()["scores"][0]
    assert scores["mean_score"] == 4.0
    assert scores["lowest_scoring_pairs"][0]["score_reason"] == "The output never says please."
    modes = fake.modes()
    mode = FAMILIES[family].mode
    # One answered request per pair, in the family's mode.
    assert modes.count(mode) == 3
    # The first mode may be refused to each of the three calls sent at once; after a first
    # refusal, each further refused mode is sent once.
    refused = refused_modes(family)
    if refused:
        assert 1 <= modes.count(refused[0]) <= 3
        assert all(modes.count(m) == 1 for m in refused[1:])
    assert sorted(set(modes)) == sorted([*refused, mode])
    answered = [r for r in fake.requests if fake.family.refusal(r) is None]
    if mode == "json_object":  # with the schema, which the server enforces by grammar
        schemas = [r["response_format"]["schema"] for r in answered]
        assert all(schema["required"] == ["reason", "score"] for schema in schemas)

    # Remembered: a new pair is asked in the settled mode first.
    ok(acme.post("/data/seed/ds/pair", {"id": "d", "input": "new", "output": "please"}))
    before = len(fake.requests)
    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))
    assert fake.modes()[before:] == [mode]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_refused_mode_is_sent_once(acme: Tenant, start: Start, family: str) -> None:
    fake = start(family, EVALSVC_JUDGE_CONCURRENCY="1")
    seed(acme)

    usage = ok(acme.post("/evaluate", {"seed_data_id": "ds"})).json()["usage"]

    mode = FAMILIES[family].mode
    assert fake.modes() == [*refused_modes(family), mode, mode, mode]
    # Every request is a call; a refused one costs no tokens (the answers' counts alone).
    assert usage["llm_calls"] == len(fake.requests)
    assert len(fake.reported) == 3
    assert usage["input_tokens"] == sum(u["prompt_tokens"] for u in fake.reported)
    assert usage["output_tokens"] == sum(u["completion_tokens"] for u in fake.reported)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_questions_improve_prompt_and_augment_work_with_each_family(
    acme: Tenant, start: Start, family: str
) -> None:
    fake = start(family)
    seed(acme)

    questions = acme.post("/questions", {"system_prompt": PROMPT})
    assert questions.status_code == 200, questions.text
    assert questions.json()["definitions"] == [
        "Is the answer in English?",
        "Is the answer under 80 words?",
    ]

    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    improved = acme.post(
        "/improve_prompt",
        {
            "seed_data_id": "ds",
            "prompt_comparison_results": {
                "candidates": [{"prompt": "Prompt B for {product}.", "score_means": [2.0]}]
            },
        },
    )
    assert improved.status_code == 200, improved.text
    assert improved.json()["improved_prompt"] == PROMPT + "\nAlways say please."

    augmented = acme.post("/augment", {"seed_data_id": "ds", "multiple": 2})
    assert augmented.status_code == 200, augmented.text
    data = acme.get(f"/data/synthetic/{augmented.json()['synthetic_data_id']}").json()["data"]
    assert [p["id"] for p in data] == [f"{s}.v{k}.llm" for s in "abc" for k in (1, 2)]
    assert data[0]["input"] == "hi (variant 1)"

    # Settled on the first call (questions): every later request is in the family's mode.
    modes = fake.modes()
    refused = refused_modes(family)
    assert modes[: len(refused)] == refused
    assert set(modes[len(refused) :]) == {FAMILIES[family].mode}


def test_a_pinned_mode_is_the_only_one_sent(acme: Tenant, start: Start) -> None:
    fake = start("openai", EVALSVC_LLM_STRUCTURED="tools")
    seed(acme)

    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))

    assert fake.modes() == ["tools"] * 3
    request = fake.requests[0]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "record_verdict"}}
    assert request["tools"][0]["function"]["parameters"]["required"] == ["reason", "score"]


def test_the_prompt_mode_puts_the_schema_in_the_system_prompt(acme: Tenant, start: Start) -> None:
    fake = start("plain-text", EVALSVC_LLM_STRUCTURED="prompt")
    seed(acme)

    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))

    assert fake.modes() == ["prompt"] * 3
    system = fake.requests[0]["messages"][0]["content"]
    assert system.startswith("You are a meticulous evaluator")
    assert "Answer with one JSON object only" in system
    assert '"required": ["reason", "score"]' in system


def test_a_pinned_mode_the_server_refuses_is_503_naming_the_setting(
    acme: Tenant, start: Start, tables: dict[str, str]
) -> None:
    fake = start("llama-cpp-python", EVALSVC_LLM_STRUCTURED="json_schema")
    seed(acme, PAIRS[:1])

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert "EVALSVC_LLM_STRUCTURED=json_schema" in error and "HTTP 500" in error
    assert "sk-test-not-a-real-key" not in response.text
    # Not asked again: neither retried nor sent in another mode.
    assert fake.modes() == ["json_schema"]
    assert boto3.client("dynamodb").scan(TableName=tables["EVALSVC_RESULTS_TABLE"])["Items"] == []


@pytest.mark.parametrize("family", list(FAMILIES))
def test_an_answer_outside_the_schema_is_a_failed_attempt_in_every_mode(
    acme: Tenant, start: Start, family: str, tables: dict[str, str]
) -> None:
    fake = start(family)
    fake.answer = sequence((200, json.dumps({"reason": "Very polite.", "score": 9})))
    seed(acme, PAIRS[:1])

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 502, response.text
    error = response.json()["error"]
    assert "after 4 attempts" in error
    assert "$.score: 9 is not one of [1, 2, 3, 4, 5]" in error
    # The refusals spent some of the four attempts; the rest were answers in the settled mode.
    refused = refused_modes(family)
    assert fake.modes() == [*refused] + [FAMILIES[family].mode] * (4 - len(refused))
    assert boto3.client("dynamodb").scan(TableName=tables["EVALSVC_RESULTS_TABLE"])["Items"] == []


def test_the_settled_mode_is_logged_once_without_the_endpoint_or_key(
    acme: Tenant, start: Start, log_lines: list[str]
) -> None:
    fake = start("llama-cpp-python")
    seed(acme)

    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))
    ok(acme.post("/questions", {"system_prompt": PROMPT}))

    settled = [json.loads(line) for line in log_lines if "structured output settled" in line]
    assert len(settled) == 1
    assert (settled[0]["llm"], settled[0]["mode"]) == ("openai:fake-llm", "json_object")
    assert settled[0]["refused_modes"] == ["json_schema"]
    address = fake.base_url.removeprefix("http://").removesuffix("/v1")
    assert not any(address in line or "sk-test-not-a-real-key" in line for line in log_lines)


def test_a_server_refusing_every_mode_is_503_after_one_request_in_each(
    acme: Tenant, start: Start, tables: dict[str, str]
) -> None:
    fake = start("openai")
    fake.answer = sequence((400, '{"error": {"message": "bad request"}}'))
    seed(acme, PAIRS[:1])

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 503, response.text
    assert response.json()["error"] == (
        "the LLM refused every structured-output mode (json_schema, json_object, tools, "
        'prompt); in the last it answered HTTP 400: {"error": {"message": "bad request"}}'
    )
    assert fake.modes() == list(MODES)
    assert boto3.client("dynamodb").scan(TableName=tables["EVALSVC_RESULTS_TABLE"])["Items"] == []


def test_a_queued_evaluation_negotiates_in_its_worker(
    acme: Tenant, start: Start, work: Work
) -> None:
    fake = start("plain-text", EVALSVC_INLINE_MAX_JUDGE_CALLS="2", EVALSVC_CHUNK_JUDGE_CALLS="40")
    pairs = [
        {"id": f"q{i}", "input": f"hi {i}", "output": "please" if i % 2 else "no"}
        for i in range(12)
    ]
    ok(acme.post("/data/seed/ds", {"data": pairs, "system_prompt": PROMPT}))
    ok(acme.post("/specify_questions", {"metrics": [QUESTION]}))

    queued = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "ds"},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert queued.status_code == 202, queued.text
    work.drain()

    done = ok(acme.get(f"/evaluation/{queued.json()['eval_results_id']}")).json()
    assert (done["status"], done["pairs_done"], done["score_means"]) == ("complete", 12, [3.5])
    modes = fake.modes()
    assert modes.count("prompt") == 12
    assert all(modes.count(m) == 1 for m in ("json_object", "tools"))
    assert work.waiting(work.dead_letter_url) == 0
