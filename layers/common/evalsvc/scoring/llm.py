"""The one LLM provider module: Bedrock Converse and OpenAI-compatible chat completions, each
asked for structured output (a JSON object matching a schema), with the same settings, retries
and failure rules for every caller (the judge, prompt improvement, question generation,
augmentation).

`EVALSVC_LLM` chooses the provider: `bedrock:<model-id>` or `openai:<model>` (with
`OPENAI_BASE_URL` and `OPENAI_API_KEY`; OpenAI, vLLM and Ollama all speak it). Unset, there
is no LLM and callers take their deterministic paths.

Every call plans against the caller's deadline: its timeout is what is left of it, a call that
would not finish in time (judging by the provider's recent latency) is not started, and a pause
before a retry (at least the provider's `Retry-After`) that would cross it ends the asking with
LLMOutOfTime instead. Model text is hostile: answers are read with bounds (size, nesting) and
lone surrogates in them become U+FFFD, so whatever is stored from them can be stored.

Every attempt is metered (evalsvc.usage): a call, and the tokens the provider says it used;
an answer that says nothing of its tokens, or that timed out after the request was sent (the
model may have run), counts the call's bound (what was sent, and max_tokens, which every call
sends), so spending is not undercounted. A throttled or refused call costs nothing.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from evalsvc import backoff
from evalsvc.deadlines import Deadline
from evalsvc.errors import ProviderUnavailable
from evalsvc.scoring.bounded_json import MAX_DEPTH, nesting_depth
from evalsvc.scoring.text import storable
from evalsvc.settings import Settings, get_settings
from evalsvc.usage import (
    CALL_OVERHEAD_TOKENS,
    Bound,
    Meter,
    calls_bound,
    current_meter,
    text_bytes,
)

T = TypeVar("T")


# The largest answer read from a provider: far above what max_tokens allows.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
# A call is not started with less than this left before the deadline.
MIN_CALL_SECONDS = 1.0


class RetryableError(Exception):
    """Throttling, a 5xx, or a timeout: worth asking again after a pause (at least
    `retry_after` seconds when the provider said so). `billed`: the model may have done the
    work all the same (the answer timed out after the request was sent)."""

    def __init__(
        self, message: str, retry_after: float | None = None, *, billed: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.billed = billed


class InvalidAnswer(ValueError):
    """The model's answer is not what the schema asked for; `tokens` (input, output) when the
    provider said what it used on it."""

    def __init__(self, message: str, tokens: tuple[int, int] | None = None) -> None:
        super().__init__(message)
        self.tokens = tokens


# The most tokens a provider's count is believed for, per call (far above any context window).
MAX_REPORTED_TOKENS = 100_000_000


def reported_tokens(input_tokens: Any, output_tokens: Any) -> tuple[int, int] | None:
    """The provider's counts when both are sane whole numbers; None otherwise."""
    counts = (input_tokens, output_tokens)
    if all(
        isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= MAX_REPORTED_TOKENS
        for c in counts
    ):
        return int(input_tokens), int(output_tokens)
    return None


@dataclass(slots=True)
class Answer:
    """What one call gave: the JSON values of the answer (most likely first), and the tokens
    (input, output) the provider said it used, or None when it did not say."""

    values: list[Any]
    tokens: tuple[int, int] | None


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


class Provider(Protocol):
    name: str

    def complete(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        max_tokens: int,
        timeout: float,
    ) -> Answer:
        """The answer, within `timeout` seconds; at most `max_tokens` of it."""
        ...


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
# An answer holds one object, perhaps with text or a fence around it: a few starts suffice.
MAX_OBJECT_STARTS = 32


def clean(value: Any) -> Any:
    """A decoded answer with every string made storable (a lone surrogate becomes U+FFFD)."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, list):
        return [clean(item) for item in value]
    if isinstance(value, dict):
        return {clean(key): clean(item) for key, item in value.items()}
    return value


def json_objects(text: str) -> list[Any]:
    """Every JSON object in `text`: inside code fences first, then anywhere, in order. Text
    nested deeper than bounded_json reads yields none; strings are made storable."""
    if nesting_depth(text) > MAX_DEPTH:
        return []
    decoder = json.JSONDecoder()
    found: list[Any] = []
    for source in [*_FENCE.findall(text), text]:
        for start, match in enumerate(re.finditer(r"\{", source)):
            if start == MAX_OBJECT_STARTS:
                break
            try:
                value, _ = decoder.raw_decode(source, match.start())
            except ValueError:  # not JSON there, or a number too long to read
                continue
            found.append(clean(value))
    return found


# ---- OpenAI-compatible -------------------------------------------------------------------------


class OpenAIProvider:
    """`POST {base_url}/chat/completions` with a JSON-schema response format, temperature 0.
    Connections are kept alive, one per worker thread, with TCP_NODELAY."""

    def __init__(self, model: str, base_url: str, api_key: str) -> None:
        self.name = f"openai:{model}"
        self.model = model
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderUnavailable(f"OPENAI_BASE_URL {base_url!r} is not an http(s) URL")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._path = f"{parts.path}/chat/completions"
        self._api_key = api_key
        self._local = threading.local()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            factory = (
                http.client.HTTPSConnection
                if self._scheme == "https"
                else http.client.HTTPConnection
            )
            connection = factory(self._host, self._port, timeout=timeout)
            connection.connect()
            # Requests are small and answers awaited: never hold a segment back (Nagle).
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._local.connection = connection
        connection.timeout = timeout
        if connection.sock is not None:
            connection.sock.settimeout(timeout)
        return connection

    def _post(self, payload: dict[str, Any], timeout: float) -> tuple[int, bytes, float | None]:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = json.dumps(payload).encode()
        connection: http.client.HTTPConnection | None = None
        sent = False
        try:
            connection = self._connection(timeout)
            connection.request("POST", self._path, body=body, headers=headers)
            sent = True
            response = connection.getresponse()
            raw = response.read(MAX_ANSWER_BYTES + 1)
            if len(raw) > MAX_ANSWER_BYTES:
                connection.close()
                self._local.connection = None
                raise InvalidAnswer(f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
            return response.status, raw, retry_after(response.headers)
        except (OSError, http.client.HTTPException) as exc:
            if connection is not None:
                connection.close()
            self._local.connection = None
            raise RetryableError(
                f"could not reach the LLM: {exc.__class__.__name__}", billed=sent
            ) from exc

    def complete(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        max_tokens: int,
        timeout: float,
    ) -> Answer:
        status, raw, wait = self._post(
            {
                "model": self.model,
                "temperature": 0,
                "max_tokens": max_tokens,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "strict": True, "schema": schema},
                },
            },
            timeout,
        )
        if status == 429 or status >= 500:
            raise RetryableError(f"the LLM answered HTTP {status}", retry_after=wait)
        if status in (401, 403):
            raise ProviderUnavailable(
                f"the LLM refused the credentials (HTTP {status}); check OPENAI_API_KEY"
            )
        if status != 200:
            detail = raw[:200].decode(errors="replace")
            raise ProviderUnavailable(f"the LLM answered HTTP {status}: {detail}")
        try:
            document = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise InvalidAnswer("the response is not JSON") from exc
        tokens = None
        if isinstance(document, dict) and isinstance(document.get("usage"), dict):
            usage = document["usage"]
            tokens = reported_tokens(usage.get("prompt_tokens"), usage.get("completion_tokens"))
        try:
            content = document["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise InvalidAnswer("the response has no message content", tokens) from exc
        if not isinstance(content, str):
            raise InvalidAnswer("the message content is not text", tokens)
        return Answer(json_objects(content), tokens)


def retry_after(headers: Any) -> float | None:
    """The pause a provider asked for: `retry-after-ms`, or `Retry-After` in seconds or as an
    HTTP date; None when it gave none (or nonsense). At most an hour."""
    milliseconds = headers.get("retry-after-ms")
    try:
        if milliseconds is not None:
            return min(3600.0, max(0.0, float(milliseconds) / 1000))
    except ValueError:
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if not math.isfinite(seconds):
        return None
    return min(3600.0, max(0.0, seconds))


# ---- Bedrock -----------------------------------------------------------------------------------

_BEDROCK_RETRYABLE = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelTimeoutException",
        "ModelNotReadyException",
    }
)


class BedrockProvider:
    """Bedrock Converse with a forced tool whose input schema is the answer's, temperature 0."""

    def __init__(self, model_id: str, client_for: Callable[[int], Any]) -> None:
        self.name = f"bedrock:{model_id}"
        self.model_id = model_id
        # A client whose read timeout is at most the given whole seconds.
        self.client_for = client_for

    def complete(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        max_tokens: int,
        timeout: float,
    ) -> Answer:
        from botocore.exceptions import BotoCoreError, ClientError, ReadTimeoutError

        client = self.client_for(timeout_step(timeout))
        try:
            response = client.converse(
                modelId=self.model_id,
                system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": user}]}],
                inferenceConfig={"temperature": 0, "maxTokens": max_tokens},
                toolConfig={
                    "tools": [
                        {
                            "toolSpec": {
                                "name": schema_name,
                                "description": "Record the answer.",
                                "inputSchema": {"json": schema},
                            }
                        }
                    ],
                    "toolChoice": {"tool": {"name": schema_name}},
                },
            )
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in _BEDROCK_RETRYABLE:
                billed = code == "ModelTimeoutException"
                raise RetryableError(f"Bedrock answered {code}", billed=billed) from exc
            raise ProviderUnavailable(
                f"Bedrock refused the call ({code}); check EVALSVC_LLM and model access"
            ) from exc
        except BotoCoreError as exc:
            # A read timeout came after the request was sent: the model may have run.
            billed = isinstance(exc, ReadTimeoutError)
            raise RetryableError(
                f"could not reach Bedrock: {exc.__class__.__name__}", billed=billed
            ) from exc
        usage = response.get("usage") or {}
        tokens = reported_tokens(usage.get("inputTokens"), usage.get("outputTokens"))
        blocks = response.get("output", {}).get("message", {}).get("content", [])
        tool_inputs = [b["toolUse"].get("input") for b in blocks if "toolUse" in b]
        if tool_inputs:
            return Answer(tool_inputs, tokens)
        return Answer(json_objects("".join(block.get("text", "") for block in blocks)), tokens)


# Read timeouts Bedrock clients are made with; a call uses the largest that fits its time.
TIMEOUT_STEPS = (1, 2, 3, 5, 8, 13, 21, 34, 60)


def timeout_step(timeout: float) -> int:
    return max((s for s in TIMEOUT_STEPS if s <= timeout), default=TIMEOUT_STEPS[0])


@cache
def _bedrock_client(region: str, read_timeout: int) -> Any:
    import boto3
    from botocore.config import Config

    # Retries are this module's own (below), so one policy covers every provider.
    config = Config(
        retries={"mode": "standard", "max_attempts": 1},
        connect_timeout=min(5, read_timeout),
        read_timeout=read_timeout,
    )
    return boto3.client("bedrock-runtime", region_name=region, config=config)


def provider_from_settings(settings: Settings) -> Provider | None:
    spec = settings.llm.strip()
    if not spec:
        return None
    kind, _, model = spec.partition(":")
    if not model:
        raise ProviderUnavailable(
            f"EVALSVC_LLM={spec!r} names no model: use bedrock:<model-id> or openai:<model>"
        )
    if kind == "openai":
        return OpenAIProvider(
            model, settings.openai_base_url, settings.openai_api_key.get_secret_value()
        )
    if kind == "bedrock":
        region = settings.region
        return BedrockProvider(model, lambda read_timeout: _bedrock_client(region, read_timeout))
    raise ProviderUnavailable(
        f"EVALSVC_LLM={spec!r} is not understood: use bedrock:<model-id> or openai:<model>"
    )


# ---- asking with retries -----------------------------------------------------------------------


class Latency:
    """The recent time of a provider's calls (an exponentially weighted mean), kept for the
    life of the process: what planning against a deadline expects of the next call."""

    WEIGHT = 0.3

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seconds: dict[str, float] = {}

    def record(self, provider: str, seconds: float) -> None:
        with self._lock:
            before = self._seconds.get(provider)
            self._seconds[provider] = (
                seconds if before is None else before + self.WEIGHT * (seconds - before)
            )

    def expected(self, provider: str) -> float | None:
        with self._lock:
            return self._seconds.get(provider)

    def forget(self) -> None:
        with self._lock:
            self._seconds.clear()


LATENCY = Latency()


class LLM:
    """A provider with the service's retry rules: throttling, 5xx, timeouts and unusable answers
    are asked again after a jittered exponential pause (at least the provider's Retry-After), up
    to `max_attempts` in all, all before `deadline`."""

    def __init__(
        self, provider: Provider, settings: Settings, deadline: Deadline | None = None
    ) -> None:
        self.provider = provider
        self.name = provider.name
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

    def _meter(
        self, tokens: tuple[int, int] | None, sent: tuple[str, ...], max_tokens: int
    ) -> None:
        """Record an answered attempt: the provider's counts, or, when it gave none, the
        attempt's bound."""
        if tokens is None:
            tokens = (text_bytes(*sent) + CALL_OVERHEAD_TOKENS, max_tokens)
        self.meter.record(input_tokens=tokens[0], output_tokens=tokens[1])

    def expected_call_seconds(self) -> float | None:
        """How long a call is expected to take, from this process's recent calls."""
        return LATENCY.expected(self.name)

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

    def _pause(self, attempt: int, retry_after: float | None, problem: str) -> None:
        pause = max(backoff.delay(attempt, self.base_delay, 8.0), retry_after or 0.0)
        if pause + MIN_CALL_SECONDS > self.deadline.left():
            raise LLMOutOfTime(problem, attempt, retry_after=retry_after)
        with self._lock:
            self.retries += 1
        time.sleep(pause)

    def ask(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        accept: Callable[[Any], T],
        *,
        max_tokens: int = 1024,
    ) -> T:
        """The first JSON value of the answer that `accept` takes (it raises InvalidAnswer
        otherwise); LLMFailed after the last attempt, LLMOutOfTime when the deadline comes
        first."""
        problem = ""
        transient = False
        wait: float | None = None
        for attempt in range(self.max_attempts):
            if attempt:
                self._pause(attempt, wait, problem)
            timeout = self._timeout(problem, attempt, wait)
            with self._lock:
                self.calls += 1
            self.meter.record(calls=1)
            sent = (system, user, json.dumps(schema), schema_name)
            started = time.monotonic()
            try:
                answer = self.provider.complete(
                    system, user, schema, schema_name, max_tokens, timeout
                )
            except RetryableError as exc:
                if exc.billed:  # no counts came back: the attempt's bound is counted
                    self._meter(None, sent, max_tokens)
                problem, transient, wait = str(exc), True, exc.retry_after
                continue
            except InvalidAnswer as exc:
                LATENCY.record(self.name, time.monotonic() - started)
                self._meter(exc.tokens, sent, max_tokens)
                problem, transient, wait = f"unusable answer ({exc})", False, None
                continue
            LATENCY.record(self.name, time.monotonic() - started)
            self._meter(answer.tokens, sent, max_tokens)
            transient, wait = False, None
            problems = []
            for candidate in answer.values:
                try:
                    return accept(candidate)
                except InvalidAnswer as exc:
                    problems.append(str(exc))
            # The first (outermost) JSON value is the one the model meant as its answer.
            problem = f"unusable answer ({problems[0] if problems else 'no JSON object in it'})"
        raise LLMFailed(problem, self.max_attempts, transient=transient, retry_after=wait)


def configured_llm(deadline: Deadline | None = None) -> LLM | None:
    """The LLM that EVALSVC_LLM configures, asking before `deadline`; None when it is unset."""
    settings = get_settings()
    provider = provider_from_settings(settings)
    return LLM(provider, settings, deadline) if provider else None
