"""The embeddings model: texts made vectors by the transport `EVALSVC_EMBEDDINGS` names
(`openai:<model>`: an OpenAI-compatible `/embeddings`, embeddings_openai.py; `bedrock:<model-id>`:
Titan Text Embeddings v2, embeddings_bedrock.py), asked with the judge's retry, deadline and
metering rules (client.Calls): throttling, 5xx, timeouts and unusable answers are asked again
after the same jittered pause, up to EVALSVC_JUDGE_MAX_ATTEMPTS in all, all before the deadline.

An answer is usable when it holds one vector per text sent, each of finite numbers (that float32
can hold), all of the same dimensions: those asked for (EVALSVC_EMBEDDINGS_DIMENSIONS), or else
those of the first vectors this embedder saw. A request the model refuses for what it carries
(a text too long for it: HTTP 400, Bedrock's ValidationException) is not asked again.

Every attempt is metered, as the LLM's are: a call, and the input tokens the provider says it
used; an answer that says nothing of them, or that timed out after it was sent, counts the
attempt's bound (every byte sent a token, with the overheads of spending.meter). Texts and keys
are never logged.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from evalsvc.core.deadlines import Deadline
from evalsvc.core.observability import logger
from evalsvc.core.settings import Settings, get_settings
from evalsvc.scoring.llm.client import Calls, LLMFailed
from evalsvc.scoring.llm.latency import LATENCY
from evalsvc.scoring.llm.provider import InvalidAnswer, RetryableError, model_spec
from evalsvc.spending.meter import (
    CALL_OVERHEAD_TOKENS,
    EMBEDDING_TEXT_OVERHEAD_TOKENS,
    Attempt,
    Bound,
    Usage,
    embeddings_bound,
    text_bytes,
)

# The largest magnitude a float32 holds: a vector is kept as float32 (embeddings.py).
FLOAT32_MAX = 3.4028234663852886e38
# The most dimensions a vector read from an answer may have (the largest models' have 8,192).
MAX_DIMENSIONS = 65_536


@dataclass(slots=True)
class Embedded:
    """What one call gave: a vector per text sent, in order, and the input tokens the provider
    said it used (None: it did not say)."""

    vectors: list[list[float]]
    input_tokens: int | None


class EmbeddingRefused(Exception):
    """The model refused the request for what it carries (a text too long for it): asking it
    again would be refused again."""


class EmbeddingProvider(Protocol):
    """A transport of an embeddings model: `batch` texts at most a call."""

    name: str
    batch: int

    def embed(self, texts: Sequence[str], timeout: float) -> Embedded:
        """The vectors of `texts` (at most `batch`), within `timeout` seconds; RetryableError,
        InvalidAnswer, EmbeddingRefused or ProviderUnavailable otherwise."""
        ...


def read_vectors(values: Any, count: int) -> list[list[float]]:
    """`values` as `count` vectors of finite numbers, all of one length; InvalidAnswer saying
    what is wrong otherwise."""
    if not isinstance(values, list) or len(values) != count:
        given = len(values) if isinstance(values, list) else "no list of"
        raise InvalidAnswer(f"{given} vectors for {count} texts")
    vectors: list[list[float]] = []
    for vector in values:
        if isinstance(vector, list) and vector and isinstance(vector[0], list):
            # llama.cpp's servers answer so for a model without pooling (a chat model).
            raise InvalidAnswer(
                "a vector for each token of a text, not one for the text: the model pools "
                "nothing (an embeddings model, or llama-server's --pooling mean, gives one)"
            )
        if not isinstance(vector, list) or not vector or len(vector) > MAX_DIMENSIONS:
            raise InvalidAnswer("an embedding is not a list of at most 65,536 numbers")
        if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector):
            raise InvalidAnswer("an embedding holds something other than numbers")
        floats = [float(x) for x in vector]
        if not all(math.isfinite(x) and abs(x) <= FLOAT32_MAX for x in floats):
            raise InvalidAnswer("an embedding holds a number that is not finite")
        vectors.append(floats)
    if len({len(vector) for vector in vectors}) > 1:
        raise InvalidAnswer("the embeddings are not all of the same dimensions")
    return vectors


class Embedder(Calls):
    """An embeddings provider with the judge's retry, deadline and metering rules."""

    def __init__(
        self, provider: EmbeddingProvider, settings: Settings, deadline: Deadline | None = None
    ) -> None:
        super().__init__(provider.name, settings, deadline)
        self.provider = provider
        self.batch = max(1, provider.batch)
        # Its calls take their own time, apart from a chat model of the same name.
        self.latency_key = f"{provider.name} embeddings"
        # The dimensions asked of the model (None: its own); those every vector has: asked
        # for, or those of the first seen.
        self.asked_dimensions = settings.embeddings_dimensions
        self.dimensions: int | None = settings.embeddings_dimensions

    def expect_dimensions(self, dimensions: int) -> bool:
        """Whether vectors of `dimensions` are this embedder's (the first seen sets them when
        none were asked for)."""
        with self._lock:
            if self.dimensions is None:
                self.dimensions = dimensions
            return self.dimensions == dimensions

    def bound(self, calls: Sequence[Sequence[str]]) -> Bound:
        """At most what embedding these calls' texts can use, every attempt made."""
        sizes = [text_bytes(*texts) for texts in calls]
        largest = max(
            (
                size + len(texts) * EMBEDDING_TEXT_OVERHEAD_TOKENS
                for size, texts in zip(sizes, calls, strict=True)
            ),
            default=0,
        )
        bound = embeddings_bound(
            sum(len(texts) for texts in calls), len(calls), sum(sizes), self.max_attempts, largest
        )
        bound.model = self.name
        return bound

    def bound_unread(self, texts: int, sent_bytes: int) -> Bound:
        """At most what embedding `texts` texts of `sent_bytes` in all can use, unread: in
        calls of `batch` texts, every one perhaps as large as all of them."""
        largest = sent_bytes + min(texts, self.batch) * EMBEDDING_TEXT_OVERHEAD_TOKENS
        bound = embeddings_bound(
            texts, -(-texts // self.batch), sent_bytes, self.max_attempts, largest
        )
        bound.model = self.name
        return bound

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """The vectors of `texts` (at most `batch`), in order: LLMFailed after the last attempt,
        or at once when the model refused them; LLMOutOfTime when the deadline came first."""
        most = Usage(
            1,
            0,
            text_bytes(*texts) + len(texts) * EMBEDDING_TEXT_OVERHEAD_TOKENS + CALL_OVERHEAD_TOKENS,
            0,
            self.name,
        )
        problem = ""
        transient = False
        wait: float | None = None
        started = time.monotonic()
        attempts = 0
        try:
            for attempt in range(self.max_attempts):
                if attempt:
                    self._pause(attempt, wait, problem)
                timeout = self._timeout(problem, attempt, wait)
                with self._lock:
                    self.calls += 1
                attempts += 1
                with self.meter.attempt(most) as metered:
                    outcome = self._call(texts, timeout, most, metered)
                if isinstance(outcome, EmbeddingRefused):
                    problem = f"it refused the texts ({outcome})"
                    raise LLMFailed(problem, attempts)
                if isinstance(outcome, RetryableError):
                    problem, transient, wait = str(outcome), True, outcome.retry_after
                    continue
                if isinstance(outcome, InvalidAnswer):
                    problem, transient, wait = f"unusable answer ({outcome})", False, None
                    continue
                self._log(len(texts), attempts, started, None)
                return outcome
        except LLMFailed as exc:
            self._log(len(texts), attempts, started, exc.problem)
            raise
        self._log(len(texts), attempts, started, problem)
        raise LLMFailed(problem, self.max_attempts, transient=transient, retry_after=wait)

    def _call(
        self, texts: Sequence[str], timeout: float, most: Usage, metered: Attempt
    ) -> list[list[float]] | RetryableError | InvalidAnswer | EmbeddingRefused:
        """One attempt: the vectors, or why there are none; what it used goes to `metered`."""
        started = time.monotonic()
        try:
            embedded = self.provider.embed(texts, timeout)
        except RetryableError as exc:
            if exc.billed:
                metered.used(most.input_tokens, 0)
            return exc
        except EmbeddingRefused as exc:
            return exc
        except InvalidAnswer as exc:
            LATENCY.record(self.latency_key, time.monotonic() - started)
            metered.used(exc.tokens[0] if exc.tokens else most.input_tokens, 0)
            return exc
        LATENCY.record(self.latency_key, time.monotonic() - started)
        tokens = embedded.input_tokens
        metered.used(most.input_tokens if tokens is None else tokens, 0)
        try:
            vectors = read_vectors(embedded.vectors, len(texts))
        except InvalidAnswer as exc:
            return exc
        if vectors and not self.expect_dimensions(len(vectors[0])):
            return InvalidAnswer(
                f"vectors of {len(vectors[0])} dimensions, where this model's have "
                f"{self.dimensions}"
            )
        return vectors

    def _log(self, texts: int, attempts: int, started: float, problem: str | None) -> None:
        logger.debug(
            "embeddings asked",
            extra={
                "model": self.name,
                "texts": texts,
                "attempts": attempts,
                "seconds": round(time.monotonic() - started, 3),
                "problem": problem,
            },
        )


def provider_from_settings(settings: Settings) -> EmbeddingProvider | None:
    """The transport EVALSVC_EMBEDDINGS names (its module imported only then); None when it
    is unset."""
    parsed = model_spec("EVALSVC_EMBEDDINGS", settings.embeddings)
    if parsed is None:
        return None
    kind, model = parsed
    if kind == "openai":
        from evalsvc.scoring.llm.credentials import key_source
        from evalsvc.scoring.llm.embeddings_openai import OpenAIEmbeddings

        return OpenAIEmbeddings(
            model,
            settings.openai_base_url,
            key_source(settings),
            settings.embeddings_batch,
            settings.embeddings_dimensions,
        )
    from evalsvc.scoring.llm.embeddings_bedrock import BedrockEmbeddings

    return BedrockEmbeddings.for_region(model, settings.region, settings.embeddings_dimensions)


def configured_embedder(deadline: Deadline | None = None) -> Embedder | None:
    """The embeddings model EVALSVC_EMBEDDINGS configures, asking before `deadline`; None when
    it is unset."""
    settings = get_settings()
    provider = provider_from_settings(settings)
    return Embedder(provider, settings, deadline) if provider else None
