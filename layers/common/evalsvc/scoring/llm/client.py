"""The LLM client: a provider (provider.py) asked with the same settings, retries and failure
rules for every caller (the judge, prompt improvement, question generation, augmentation).

Every call plans against the caller's deadline: its timeout is what is left of it, a call that
would not finish in time (judging by the provider's recent latency) is not started, and a pause
before a retry (at least the provider's `Retry-After`) that would cross it ends the asking with
LLMOutOfTime instead. A refusal of the request's shape (ShapeRefused: the transport has moved
to its next structured-output mode) is asked again at once, within the same attempts.

Every answer is checked against the schema its request named (provider.schema_problem) before
the caller reads it, whatever the transport or mode: one outside it is a failed attempt. Calls
are greedy (temperature 0) until an answer is unusable or a sent call times out; the attempts
after that sample at RETRY_TEMPERATURE, since a greedy model asked again answers the same.

Every ask ends with one DEBUG line, "llm asked": its schema, attempts, whether an answer was
usable, the seconds its calls took and the last problem (POWERTOOLS_LOG_LEVEL=DEBUG shows them;
bench/real_llm.py reads them for the per-feature figures).

Every attempt is metered (evalsvc.spending.meter): a call, and the tokens the provider says it used;
an answer that says nothing of its tokens, or that timed out after the request was sent (the
model may have run), counts the call's bound (what was sent, and max_tokens, which every call
sends), so spending is not undercounted. A throttled or refused call costs nothing.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from evalsvc.core import backoff
from evalsvc.core.deadlines import Deadline
from evalsvc.core.observability import logger
from evalsvc.core.settings import Settings, get_settings
from evalsvc.scoring.llm.latency import LATENCY
from evalsvc.scoring.llm.provider import (
    Answer,
    InvalidAnswer,
    Provider,
    RetryableError,
    ShapeRefused,
    provider_from_settings,
    schema_problem,
)
from evalsvc.spending.meter import (
    CALL_OVERHEAD_TOKENS,
    Attempt,
    Bound,
    Meter,
    Usage,
    calls_bound,
    current_meter,
    text_bytes,
)

T = TypeVar("T")

# A call is not started with less than this left before the deadline.
MIN_CALL_SECONDS = 1.0
# Calls are greedy (temperature 0) until an answer is unusable or a call times out after it was
# sent; after that, the next attempts sample at this temperature: a greedy model asked the same
# again gives the same answer again (SmolLM2-135M looped the same way on every retry, until
# max_tokens or the timeout), so a retry that is to differ must sample.
RETRY_TEMPERATURE = 0.7


class LLMFailed(Exception):
    """No usable answer after every attempt; `problem` says what went wrong last."""

    def __init__(
        self,
        problem: str,
        attempts: int,
        *,
        transient: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(problem)
        self.problem = problem
        self.attempts = attempts
        # The last attempt met throttling, a 5xx or a timeout (not an unusable answer): the
        # provider may well answer later (not before `retry_after` seconds, if it said so).
        self.transient = transient
        self.retry_after = retry_after


class LLMOutOfTime(LLMFailed):
    """The deadline came before a usable answer: nothing more can be asked in time."""

    def __init__(self, problem: str, attempts: int, retry_after: float | None = None) -> None:
        super().__init__(problem, attempts, transient=True, retry_after=retry_after)


class Calls:
    """What every caller of a model shares (the LLM here, the embeddings model in embedder.py):
    the settings' attempts, pauses, concurrency and call timeout, the deadline every call plans
    against, counts of calls and retries, and the meter every attempt's usage goes to."""

    def __init__(self, name: str, settings: Settings, deadline: Deadline | None = None) -> None:
        self.name = name
        # What the recent latency of its calls is kept under (LATENCY).
        self.latency_key = name
        self.max_attempts = max(1, settings.judge_max_attempts)
        self.base_delay = settings.judge_retry_base_seconds
        self.concurrency = max(1, settings.judge_concurrency)
        self.call_timeout = settings.judge_timeout_seconds
        self.deadline = deadline or Deadline.never()
        self._lock = threading.Lock()
        self.calls = 0
        self.retries = 0
        # Where every attempt's usage goes: the request's or chunk's meter (usage.metering).
        self.meter = current_meter() or Meter()
        self.meter.name_model(self.name)

    def expected_call_seconds(self) -> float | None:
        """How long a call is expected to take, from this process's recent calls."""
        return LATENCY.expected(self.latency_key)

    def _timeout(self, problem: str, attempt: int, retry_after: float | None) -> float:
        """The timeout of the next call; LLMOutOfTime when it could not finish in time."""
        left = self.deadline.left()
        expected = self.expected_call_seconds() or 0.0
        if left < max(MIN_CALL_SECONDS, expected):
            raise LLMOutOfTime(
                problem or f"no time left for a call ({max(0.0, left):.1f} s)",
                attempt,
                retry_after=retry_after,
            )
        return min(self.call_timeout, left)

    def _pause(
        self, attempt: int, retry_after: float | None, problem: str, *, at_once: bool = False
    ) -> None:
        """Wait before attempt `attempt`; not at all after a refused shape (`at_once`): the
        next attempt is in another mode, which the server has not refused."""
        pause = 0.0 if at_once else backoff.delay(attempt, self.base_delay, 8.0)
        pause = max(pause, retry_after or 0.0)
        if pause + MIN_CALL_SECONDS > self.deadline.left():
            raise LLMOutOfTime(problem, attempt, retry_after=retry_after)
        with self._lock:
            self.retries += 1
        if pause:
            time.sleep(pause)


class LLM(Calls):
    """A provider with the service's retry rules: throttling, 5xx, timeouts and unusable answers
    are asked again after a jittered exponential pause (at least the provider's Retry-After), up
    to `max_attempts` in all, all before `deadline`."""

    def __init__(
        self, provider: Provider, settings: Settings, deadline: Deadline | None = None
    ) -> None:
        self.provider = provider
        super().__init__(provider.name, settings, deadline)

    def bound(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        max_tokens: int,
        *,
        expected_output: int,
    ) -> Bound:
        """At most what one `ask` with these can use, every attempt made."""
        sent = text_bytes(system, user, json.dumps(schema), schema_name)
        bound = calls_bound(1, sent, max_tokens, self.max_attempts, expected_output)
        bound.model = self.name
        return bound

    def _call(
        self,
        sent: tuple[str, str, str, str],
        schema: dict[str, Any],
        most: Usage,
        timeout: float,
        asked: _Asked,
        metered: Attempt,
    ) -> Answer | ShapeRefused | RetryableError | InvalidAnswer:
        """One attempt: the provider's answer, or why it gave none usable; what it used goes
        to `metered` (the provider's counts, or, when it gave none, the attempt's bound `most`:
        what was sent, and max_tokens)."""
        system, user, _, schema_name = sent
        bound = (most.input_tokens, most.output_tokens)
        max_tokens = most.output_tokens
        started = time.monotonic()
        try:
            try:
                answer = self.provider.complete(
                    system,
                    user,
                    schema,
                    schema_name,
                    max_tokens,
                    timeout,
                    temperature=RETRY_TEMPERATURE if asked.model_ran else 0.0,
                )
            finally:
                asked.seconds += time.monotonic() - started
        except ShapeRefused as exc:
            return exc
        except RetryableError as exc:
            if exc.billed:  # no counts came back: the attempt's bound is counted
                metered.used(*bound)
            return exc
        except InvalidAnswer as exc:
            LATENCY.record(self.name, time.monotonic() - started)
            metered.used(*(exc.tokens or bound))
            return exc
        LATENCY.record(self.name, time.monotonic() - started)
        metered.used(*(answer.tokens or bound))
        return answer

    def ask(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        accept: Callable[[Any], T],
        *,
        max_tokens: int = 1024,
        sample: bool = False,
    ) -> T:
        """The first JSON value of the answer that matches `schema` and that `accept` takes (it
        raises InvalidAnswer otherwise); LLMFailed after the last attempt, LLMOutOfTime when
        the deadline comes first. A refusal of the request's shape is asked again at once, in
        the transport's next mode, within the same attempts. `sample`: every attempt samples
        (RETRY_TEMPERATURE), for a caller asking again after an answer it could not use."""
        asked = _Asked(schema_name)
        asked.model_ran = sample
        try:
            value: T = self._ask(system, user, schema, schema_name, accept, max_tokens, asked)
        except LLMFailed as exc:
            asked.log(exc.problem, out_of_time=isinstance(exc, LLMOutOfTime))
            raise
        asked.log(None)
        return value

    def _ask(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        accept: Callable[[Any], T],
        max_tokens: int,
        asked: _Asked,
    ) -> T:
        problem = ""
        transient = False
        at_once = False
        wait: float | None = None
        for attempt in range(self.max_attempts):
            if attempt:
                self._pause(attempt, wait, problem, at_once=at_once)
            at_once = False
            timeout = self._timeout(problem, attempt, wait)
            with self._lock:
                self.calls += 1
            sent = (system, user, json.dumps(schema), schema_name)
            most = Usage(1, 0, text_bytes(*sent) + CALL_OVERHEAD_TOKENS, max_tokens, self.name)
            asked.attempts += 1
            # The attempt holds a room (the most it can use) until its usage is kept.
            with self.meter.attempt(most) as metered:
                outcome = self._call(sent, schema, most, timeout, asked, metered)
            if isinstance(outcome, ShapeRefused):
                asked.shape_refusals += 1
                problem, transient, wait, at_once = str(outcome), False, None, True
                continue
            if isinstance(outcome, RetryableError):
                if outcome.billed:
                    # Timed out after it was sent: the model may be looping, greedily.
                    asked.model_ran = True
                problem, transient, wait = str(outcome), True, outcome.retry_after
                continue
            if isinstance(outcome, InvalidAnswer):
                problem, transient, wait = f"unusable answer ({outcome})", False, None
                asked.unusable(problem)
                continue
            transient, wait = False, None
            problems = []
            for candidate in outcome.values:
                try:
                    mismatch = schema_problem(schema, candidate)
                    if mismatch is not None:
                        raise InvalidAnswer(f"it does not match the schema: {mismatch}")
                    value = accept(candidate)
                    asked.answered = True
                    return value
                except InvalidAnswer as exc:
                    problems.append(str(exc))
            # The first (outermost) JSON value is the one the model meant as its answer.
            problem = f"unusable answer ({problems[0] if problems else 'no JSON object in it'})"
            asked.unusable(problem)
        raise LLMFailed(problem, self.max_attempts, transient=transient, retry_after=wait)


class _Asked:
    """What one ask took, for its DEBUG line."""

    __slots__ = (
        "answered",
        "attempts",
        "model_ran",
        "problems",
        "schema",
        "seconds",
        "shape_refusals",
        "started",
    )

    def __init__(self, schema: str) -> None:
        self.schema = schema
        self.attempts = 0
        self.shape_refusals = 0
        self.seconds = 0.0
        self.answered = False
        # Why each unusable answer was not used (the first 200 characters of each).
        self.problems: list[str] = []
        # An attempt's answer was unusable, or it timed out after it was sent: the attempts
        # after it sample (RETRY_TEMPERATURE).
        self.model_ran = False
        self.started = time.monotonic()

    def unusable(self, problem: str) -> None:
        """An attempt's answer could not be used: why, and the attempts after it sample."""
        self.problems.append(problem)
        self.model_ran = True

    def log(self, problem: str | None, *, out_of_time: bool = False) -> None:
        logger.debug(
            "llm asked",
            extra={
                "schema": self.schema,
                "answered": self.answered,
                "attempts": self.attempts,
                "shape_refusals": self.shape_refusals,
                "call_seconds": round(self.seconds, 3),
                "ask_seconds": round(time.monotonic() - self.started, 3),
                "problem": problem,
                # The deadline came first: what is left is asked again later (in the queue).
                "out_of_time": out_of_time,
                "unusable": [p[:200] for p in self.problems],
            },
        )


def configured_llm(deadline: Deadline | None = None) -> LLM | None:
    """The LLM that EVALSVC_LLM configures, asking before `deadline`; None when it is unset."""
    settings = get_settings()
    provider = provider_from_settings(settings)
    return LLM(provider, settings, deadline) if provider else None
