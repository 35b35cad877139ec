"""What LLM work used: calls (every attempt, retries included), judge cache hits, and tokens as
the provider counted them; what that cost (evalsvc.pricing); and upper bounds of what planned
calls can use.

A Meter adds up the usage of one request or one chunk of queued work; the LLM made while it is
current (`metering`) records into it, from whatever thread its calls run on. The guard current
with it is shown the bound of every batch of calls before they are made (`guard`): it may refuse
them (a per-request cap, a monthly limit) or reserve their cost.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from evalsvc.pricing import price_of

# What a provider may add to what is sent, in tokens, on every call: chat template markers, and
# the system prompt a provider writes for a forced tool (Anthropic's is about 350 tokens).
CALL_OVERHEAD_TOKENS = 512
# What a judge's verdict is expected to take, in tokens (its bound is the call's max_tokens).
EXPECTED_VERDICT_TOKENS = 150
# Bytes of text a token is expected to cover (a token covers at least one: the bound).
EXPECTED_BYTES_PER_TOKEN = 4


@dataclass(slots=True)
class Usage:
    """Counts of LLM work. `model` is the provider and model (EVALSVC_LLM) that did it."""

    llm_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.llm_calls + other.llm_calls,
            self.cache_hits + other.cache_hits,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.model or other.model,
        )

    @property
    def empty(self) -> bool:
        return not (self.llm_calls or self.cache_hits or self.input_tokens or self.output_tokens)

    def cost(self) -> Decimal | None:
        """USD; 0 when no token was used (deterministic work, cache hits), None when the
        model has no price."""
        if not (self.input_tokens or self.output_tokens):
            return Decimal(0)
        price = price_of(self.model)
        return None if price is None else price.cost(self.input_tokens, self.output_tokens)

    def as_dict(self) -> dict[str, Any]:
        """The counts, to store (the cost is worked out when read, from the same table)."""
        return {
            "llm_calls": self.llm_calls,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "model": self.model,
        }

    @classmethod
    def from_dict(cls, value: Any) -> Usage:
        if not isinstance(value, dict):
            return cls()
        return cls(
            int(value.get("llm_calls", 0)),
            int(value.get("cache_hits", 0)),
            int(value.get("input_tokens", 0)),
            int(value.get("output_tokens", 0)),
            str(value.get("model", "")),
        )


@dataclass(slots=True)
class Bound:
    """At most what planned LLM calls can use: `calls` calls (each perhaps retried up to
    `attempts` times in all), `cached` more answered by the judge cache."""

    calls: int = 0
    cached: int = 0
    input_tokens_max: int = 0
    output_tokens_max: int = 0
    # What the calls are expected to use, on one attempt each.
    input_tokens_expected: int = 0
    output_tokens_expected: int = 0
    model: str = ""
    # The most attempts the calls can make (each one a billed call), retries included.
    attempts_max: int = 0

    def __add__(self, other: Bound) -> Bound:
        return Bound(
            self.calls + other.calls,
            self.cached + other.cached,
            self.input_tokens_max + other.input_tokens_max,
            self.output_tokens_max + other.output_tokens_max,
            self.input_tokens_expected + other.input_tokens_expected,
            self.output_tokens_expected + other.output_tokens_expected,
            self.model or other.model,
            self.attempts_max + other.attempts_max,
        )

    def most(self) -> Usage:
        """The most the calls can use, as usage: every attempt made, every token asked for."""
        return Usage(
            self.attempts_max, 0, self.input_tokens_max, self.output_tokens_max, self.model
        )

    def cost_max(self) -> Decimal | None:
        return Usage(
            self.calls, 0, self.input_tokens_max, self.output_tokens_max, self.model
        ).cost()

    def cost_expected(self) -> Decimal | None:
        return Usage(
            self.calls, 0, self.input_tokens_expected, self.output_tokens_expected, self.model
        ).cost()


def text_bytes(*texts: str) -> int:
    """UTF-8 bytes of `texts` (a lone surrogate counted as the 3 bytes it is stored as)."""
    return sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)


def calls_bound(
    calls: int, sent_bytes: int, max_tokens: int, attempts: int, expected_output: int
) -> Bound:
    """The bound of `calls` planned calls that send `sent_bytes` of text in all and each ask
    for at most `max_tokens`, each perhaps made `attempts` times."""
    input_max = sent_bytes + calls * CALL_OVERHEAD_TOKENS
    return Bound(
        calls=calls,
        input_tokens_max=attempts * input_max,
        output_tokens_max=attempts * calls * max_tokens,
        input_tokens_expected=-(-sent_bytes // EXPECTED_BYTES_PER_TOKEN),
        output_tokens_expected=calls * min(max_tokens, expected_output),
        attempts_max=attempts * calls,
    )


class Meter:
    """Usage added up from any thread."""

    def __init__(self, model: str = "") -> None:
        self._lock = threading.Lock()
        self._usage = Usage(model=model)

    def record(
        self, *, calls: int = 0, cache_hits: int = 0, input_tokens: int = 0, output_tokens: int = 0
    ) -> None:
        with self._lock:
            self._usage.llm_calls += calls
            self._usage.cache_hits += cache_hits
            self._usage.input_tokens += input_tokens
            self._usage.output_tokens += output_tokens

    def name_model(self, model: str) -> None:
        with self._lock:
            self._usage.model = self._usage.model or model

    def usage(self) -> Usage:
        with self._lock:
            u = self._usage
            return Usage(u.llm_calls, u.cache_hits, u.input_tokens, u.output_tokens, u.model)


Guard = Callable[[Bound], None]

_CURRENT: ContextVar[tuple[Meter, Guard | None] | None] = ContextVar(
    "evalsvc_usage_meter", default=None
)


def current_meter() -> Meter | None:
    current = _CURRENT.get()
    return None if current is None else current[0]


def guard(bound: Bound) -> None:
    """Show the bound of calls about to be made to the current guard (which may refuse them
    by raising); nothing when there is none."""
    current = _CURRENT.get()
    if current is not None and current[1] is not None:
        current[1](bound)


@contextmanager
def metering(meter: Meter, guard: Guard | None = None) -> Iterator[Meter]:
    """Make `meter` the one LLMs made inside the block record into, and `guard` the one shown
    their planned calls."""
    token = _CURRENT.set((meter, guard))
    try:
        yield meter
    finally:
        _CURRENT.reset(token)
