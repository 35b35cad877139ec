"""Structured output: which refusals are about the request's shape, how an endpoint moves down
the modes, and every answer checked against the schema its request named."""

from __future__ import annotations

import json
from typing import Any

import pytest
from evalsvc.core.deadlines import Deadline
from evalsvc.core.settings import Settings
from evalsvc.scoring.llm import LLM, Answer, InvalidAnswer, LLMFailed, RetryableError, openai
from evalsvc.scoring.llm import client as client_module
from evalsvc.scoring.llm.provider import ShapeRefused, schema_problem
from evalsvc.scoring.llm.structured import MODES, Endpoints, is_shape_refusal
from evalsvc.scoring.verdicts import VERDICT_SCHEMA

from tests.log_capture import captured

LLAMA_CPP_PYTHON_500 = (
    b"{\"error\": {\"message\": \"[{'type': 'literal_error', 'loc': ('body', "
    b"'response_format', 'type'), 'msg': \\\"Input should be 'text' or 'json_object'\\\"}]\"}}"
)


@pytest.mark.parametrize(
    ("status", "body", "shape"),
    [
        (400, b'{"error": "bad request"}', True),
        (422, b'{"detail": "unprocessable"}', True),
        # llama-cpp-python's and OpenAI's answers to a prompt longer than the context window
        (
            400,
            b'{"error": {"message": "Requested tokens (5000) exceed context window of 4096"}}',
            False,
        ),
        (400, b"This model's maximum context length is 8192 tokens", False),
        (400, b'{"error": "response_format json_schema needs a larger context"}', True),
        (500, LLAMA_CPP_PYTHON_500, True),
        (500, b'{"error": "tool_choice is not supported"}', True),
        (500, b'{"error": "out of memory"}', False),
        (503, b'{"error": "response_format overloaded"}', False),
        (429, b'{"error": "slow down"}', False),
        (404, b'{"error": "no such model"}', False),
    ],
)
def test_which_refusals_are_about_the_request_shape(status: int, body: bytes, shape: bool) -> None:
    assert is_shape_refusal(status, body) is shape


def test_an_endpoint_moves_down_one_mode_per_refused_mode() -> None:
    endpoints = Endpoints()
    endpoint = endpoints.get("http://127.0.0.1:1/v1", "m")
    assert endpoint.mode == "json_schema" and not endpoint.settled

    endpoints.refused(endpoint, "json_schema")
    # Calls sent in json_schema before the first refusal came back: refused again, no further.
    endpoints.refused(endpoint, "json_schema")
    assert endpoint.mode == "json_object"
    endpoints.refused(endpoint, "json_object")
    endpoints.refused(endpoint, "tools")
    endpoints.refused(endpoint, "prompt")
    assert endpoint.mode == "prompt"
    assert endpoint.refused == ["json_schema", "json_object", "tools"]

    assert endpoints.answered(endpoint, "prompt") is True
    assert endpoints.answered(endpoint, "prompt") is False
    assert endpoints.get("http://127.0.0.1:1/v1", "m") is endpoint
    # Another model at the same URL is another endpoint.
    assert endpoints.get("http://127.0.0.1:1/v1", "other").mode == MODES[0]


def test_a_settled_endpoint_does_not_move() -> None:
    endpoints = Endpoints()
    endpoint = endpoints.get("http://127.0.0.1:1/v1", "m")
    endpoints.answered(endpoint, "json_schema")

    endpoints.refused(endpoint, "json_schema")

    assert (endpoint.mode, endpoint.settled) == ("json_schema", True)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ({"reason": "Fine.", "score": 4}, None),
        ({"reason": "Fine.", "score": 9}, "$.score: 9 is not one of [1, 2, 3, 4, 5]"),
        ({"reason": "Fine.", "score": 0}, "$.score: 0 is not one of [1, 2, 3, 4, 5]"),
        ({"reason": "Fine.", "score": "4"}, "$.score: '4' is not one of [1, 2, 3, 4, 5]"),
        ({"score": 3}, "$: 'reason' is a required property"),
        ({"reason": "x", "score": 3, "mood": "ok"}, "Additional properties are not allowed"),
        (["reason", 3], "is not of type 'object'"),
    ],
)
def test_answers_are_checked_against_the_schema(answer: Any, problem: str | None) -> None:
    found = schema_problem(VERDICT_SCHEMA, answer)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


class _Provider:
    name = "fake:model"

    def __init__(self, *script: Any) -> None:
        self.script = list(script)
        self.calls = 0
        self.temperatures: list[float] = []

    def complete(self, *args: Any, **kwargs: Any) -> Answer:
        self.calls += 1
        self.temperatures.append(kwargs.get("temperature", 0.0))
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, Exception):
            raise step
        return Answer(list(step), None)


def _llm(provider: _Provider, base_seconds: float = 0.01) -> LLM:
    settings = Settings(judge_retry_base_seconds=base_seconds, judge_timeout_seconds=30.0)
    return LLM(provider, settings, Deadline.after(600))


def _verdict(value: Any) -> Any:
    return value


def test_a_shape_refusal_is_asked_again_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", pauses.append)
    provider = _Provider(
        ShapeRefused("json_schema refused"),
        ShapeRefused("json_object refused"),
        [{"reason": "Fine.", "score": 4}],
    )

    answer = _llm(provider, base_seconds=5.0).ask(
        "s", "u", VERDICT_SCHEMA, "record_verdict", _verdict
    )

    assert answer == {"reason": "Fine.", "score": 4}
    assert provider.calls == 3
    assert pauses == []


def test_shape_refusals_spend_the_same_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module.time, "sleep", lambda seconds: None)
    provider = _Provider(ShapeRefused("the LLM refused structured output in mode 'tools'"))

    with pytest.raises(LLMFailed) as failed:
        _llm(provider).ask("s", "u", VERDICT_SCHEMA, "record_verdict", _verdict)

    assert provider.calls == 4 and failed.value.attempts == 4
    assert "refused structured output in mode 'tools'" in failed.value.problem
    assert not failed.value.transient


def test_a_transient_error_is_still_paused_for(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(client_module.time, "sleep", pauses.append)
    provider = _Provider(RetryableError("HTTP 503"), [{"reason": "Fine.", "score": 4}])

    _llm(provider).ask("s", "u", VERDICT_SCHEMA, "record_verdict", _verdict)

    assert len(pauses) == 1 and pauses[0] > 0


def test_an_answer_outside_the_schema_is_a_failed_attempt_that_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client_module.time, "sleep", lambda seconds: None)
    provider = _Provider([{"reason": "Great.", "score": 7}])
    accepted: list[Any] = []

    with pytest.raises(LLMFailed) as failed:
        _llm(provider).ask("s", "u", VERDICT_SCHEMA, "record_verdict", accepted.append)

    assert provider.calls == 4
    assert accepted == []  # the caller never saw it
    assert failed.value.problem == (
        "unusable answer (it does not match the schema: $.score: 7 is not one of [1, 2, 3, 4, 5])"
    )


def test_the_first_candidate_inside_the_schema_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    provider = _Provider([{"reason": "Wrong.", "score": 6}, {"reason": "Right.", "score": 5}])

    answer = _llm(provider).ask("s", "u", VERDICT_SCHEMA, "record_verdict", _verdict)

    assert answer == {"reason": "Right.", "score": 5}


def _reply(message: Any) -> bytes:
    return json.dumps({"choices": [{"index": 0, "message": message}]}).encode()


@pytest.mark.parametrize(
    ("message", "values"),
    [
        ({"content": 'Sure: {"score": 4} ok'}, [{"score": 4}]),
        (
            {
                "content": None,
                "tool_calls": [{"function": {"name": "record", "arguments": '{"score": 4}'}}],
            },
            [{"score": 4}],
        ),
        # Some servers give the arguments decoded.
        (
            {"content": None, "tool_calls": [{"function": {"arguments": {"score": 3}}}]},
            [{"score": 3}],
        ),
        # A tool call comes before whatever the text says.
        (
            {
                "content": '{"score": 1}',
                "tool_calls": [{"function": {"arguments": '{"score": 5}'}}],
            },
            [{"score": 5}, {"score": 1}],
        ),
    ],
)
def test_what_an_openai_compatible_answer_gives(message: Any, values: list[Any]) -> None:
    assert openai._answer(_reply(message)).values == values


@pytest.mark.parametrize(
    "message", [{"content": None}, {"content": None, "tool_calls": "nope"}, "text", None]
)
def test_an_answer_with_neither_text_nor_a_tool_call_is_invalid(message: Any) -> None:
    with pytest.raises(InvalidAnswer):
        openai._answer(_reply(message))


def test_every_ask_ends_with_one_debug_line_of_what_it_took(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client_module.time, "sleep", lambda seconds: None)
    provider = _Provider(
        ShapeRefused("json_schema refused"),
        [{"reason": "Great.", "score": 7}],
        [{"reason": "Fine.", "score": 4}],
    )
    failing = _Provider(RetryableError("HTTP 503"))

    with captured() as lines:
        _llm(provider).ask("s", "u", VERDICT_SCHEMA, "record_verdict", _verdict)
        with pytest.raises(LLMFailed):
            _llm(failing).ask("s", "u", VERDICT_SCHEMA, "record_verdict", _verdict)

    asked = [r for r in lines.records() if r["message"] == "llm asked"]
    assert [(r["level"], r["schema"], r["answered"]) for r in asked] == [
        ("DEBUG", "record_verdict", True),
        ("DEBUG", "record_verdict", False),
    ]
    assert (asked[0]["attempts"], asked[0]["shape_refusals"]) == (3, 1)
    assert "problem" not in asked[0] and asked[0]["out_of_time"] is False
    assert asked[0]["unusable"] == [
        "unusable answer (it does not match the schema: $.score: 7 is not one of [1, 2, 3, 4, 5])"
    ]
    assert asked[0]["call_seconds"] >= 0 and asked[0]["ask_seconds"] >= asked[0]["call_seconds"]
    assert (asked[1]["attempts"], asked[1]["problem"], asked[1]["unusable"]) == (4, "HTTP 503", [])


def test_calls_are_greedy_until_an_answer_is_unusable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module.time, "sleep", lambda seconds: None)
    provider = _Provider(
        ShapeRefused("json_schema refused"),
        RetryableError("HTTP 503"),
        [{"reason": "Loops.", "score": 9}],
        [{"reason": "Fine.", "score": 4}],
    )

    _llm(provider).ask("s", "u", VERDICT_SCHEMA, "record_verdict", _verdict)

    # A refused shape or a 503 says nothing of the model's answer: still greedy. After an
    # unusable answer, a greedy model would answer the same again: the retry samples.
    assert provider.temperatures == [0.0, 0.0, 0.0, client_module.RETRY_TEMPERATURE]


def test_a_call_that_timed_out_after_it_was_sent_is_retried_sampling(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client_module.time, "sleep", lambda seconds: None)
    provider = _Provider(
        RetryableError("could not connect"),
        RetryableError("could not reach the LLM: TimeoutError", billed=True),
        [{"reason": "Fine.", "score": 4}],
    )

    _llm(provider).ask("s", "u", VERDICT_SCHEMA, "record_verdict", _verdict)

    # Not sent: nothing was seen of the model. Sent and timed out: it may loop greedily.
    assert provider.temperatures == [0.0, 0.0, client_module.RETRY_TEMPERATURE]


def test_a_caller_asking_again_can_have_every_attempt_sample() -> None:
    provider = _Provider([{"reason": "Fine.", "score": 4}])

    _llm(provider).ask("s", "u", VERDICT_SCHEMA, "record_verdict", _verdict, sample=True)

    assert provider.temperatures == [client_module.RETRY_TEMPERATURE]
