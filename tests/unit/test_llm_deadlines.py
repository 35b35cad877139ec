"""The LLM's asking against a deadline, the provider's Retry-After, and hostile answers."""

from __future__ import annotations

import email.utils
import json
import time
from typing import Any

import pytest
from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import ModelFailed
from evalsvc.core.settings import Settings
from evalsvc.logic import chunks
from evalsvc.models.jobs import Chunk
from evalsvc.scoring.llm import (
    LATENCY,
    LLM,
    Answer,
    LLMFailed,
    LLMOutOfTime,
    RetryableError,
    json_objects,
)
from evalsvc.scoring.llm.bedrock import timeout_step
from evalsvc.scoring.llm.openai import retry_after


class _Provider:
    """Answers from a script: an exception to raise, or a list of JSON values."""

    name = "fake:model"

    def __init__(self, *script: Any, seconds: float = 0.0) -> None:
        self.script = list(script)
        self.seconds = seconds
        self.timeouts: list[float] = []

    def complete(self, *args: Any, **kwargs: Any) -> Answer:
        self.timeouts.append(args[-1])
        time.sleep(self.seconds)
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, Exception):
            raise step
        return Answer(list(step), (10, 5))


def _llm(provider: _Provider, deadline: Deadline, **settings: Any) -> LLM:
    values = {"judge_retry_base_seconds": 0.01, "judge_timeout_seconds": 30.0, **settings}
    return LLM(provider, Settings(**values), deadline)


def _ask(llm: LLM) -> Any:
    return llm.ask("system", "user", {}, "record", lambda v: v)


def test_each_call_gets_the_time_left_as_its_timeout() -> None:
    provider = _Provider([{"ok": 1}])
    assert _ask(_llm(provider, Deadline.after(5))) == {"ok": 1}
    assert provider.timeouts[0] == pytest.approx(5, abs=0.1)
    provider = _Provider([{"ok": 1}])
    _ask(_llm(provider, Deadline.never()))
    assert provider.timeouts == [30.0]


def test_no_call_is_started_without_the_time_it_is_expected_to_take() -> None:
    LATENCY.record("fake:model", 4.0)
    provider = _Provider([{"ok": 1}])
    with pytest.raises(LLMOutOfTime):
        _ask(_llm(provider, Deadline.after(3)))
    assert provider.timeouts == []
    _ask(_llm(provider, Deadline.after(5)))
    assert len(provider.timeouts) == 1


def test_a_pause_that_would_cross_the_deadline_ends_the_asking() -> None:
    provider = _Provider(RetryableError("HTTP 429", retry_after=30.0), [{"ok": 1}])
    with pytest.raises(LLMOutOfTime) as stopped:
        _ask(_llm(provider, Deadline.after(10)))
    assert stopped.value.retry_after == 30.0 and stopped.value.transient
    assert len(provider.timeouts) == 1


def test_retry_after_sets_the_pause() -> None:
    provider = _Provider(RetryableError("HTTP 429", retry_after=0.5), [{"ok": 1}])
    started = time.monotonic()
    assert _ask(_llm(provider, Deadline.after(10))) == {"ok": 1}
    assert time.monotonic() - started >= 0.5


def test_attempts_spent_on_throttling_say_so_with_the_pause_asked_for() -> None:
    provider = _Provider(RetryableError("HTTP 429", retry_after=0.01))
    with pytest.raises(LLMFailed) as failed:
        _ask(_llm(provider, Deadline.never(), judge_max_attempts=2))
    assert not isinstance(failed.value, LLMOutOfTime)
    assert (failed.value.transient, failed.value.retry_after) == (True, 0.01)


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "99999999"}, 3600.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after-ms": "x", "retry-after": "2"}, 2.0),
        ({}, None),
    ],
)
def test_retry_after_headers(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after(headers) == seconds


def test_retry_after_as_an_http_date() -> None:
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    assert retry_after({"retry-after": when}) == pytest.approx(20, abs=1.5)


def test_bedrock_clients_take_the_largest_timeout_that_fits() -> None:
    assert [timeout_step(t) for t in (0.2, 1, 4.9, 29, 600)] == [1, 1, 3, 21, 60]


def test_model_answers_are_read_with_bounds() -> None:
    assert json_objects("[" * 100_000) == []
    assert json_objects('{"a": ' * 5_000) == []
    assert json_objects('text {"reason": "x \\ud800 y", "score": 3} text') == [
        {"reason": "x \ufffd y", "score": 3}
    ]
    assert json_objects('{"n": ' + "9" * 5_000 + "}") == []
    # A raw line break inside a string (a small model's, let through by a grammar) is read.
    assert json_objects('{"reason": "two\nlines\tand a tab", "score": 2}') == [
        {"reason": "two\nlines\tand a tab", "score": 2}
    ]
    many = " ".join(["{"] * 10_000) + json.dumps({"score": 1})
    assert json_objects(many) == []  # only the first 32 starts are tried


def test_a_throttled_chunk_waits_at_least_what_the_provider_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[int] = []
    monkeypatch.setattr(
        chunks.work_queue, "send", lambda pieces, delay_seconds=0: sent.append(delay_seconds)
    )
    chunk = Chunk("evaluation", "t", "ev_1", 0, 0, 10, "a", "b")
    chunks._requeue_throttled(chunk, ModelFailed("throttled"), _NoRecord(), retry_after=120.4)
    chunks._requeue_throttled(chunk, ModelFailed("throttled"), _NoRecord(), retry_after=5000)
    assert sent[0] >= 121 and sent[1] == 900


class _NoRecord:
    def fail(self, *args: Any) -> None:
        raise AssertionError("not expected")

    def note_error(self, *args: Any) -> None:
        raise AssertionError("not expected")

    def requeued(self, *args: Any) -> None:
        pass
