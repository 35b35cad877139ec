"""Counts of LLM work (Usage) and bounds of planned calls (Bound), and what they cost.

One request's or chunk's work may be done by more than one model: the judge (EVALSVC_LLM) and
the embeddings model (EVALSVC_EMBEDDINGS), each with its own price. Each model's counts are then
kept apart (`shares`, in the order the models first came), so that each is priced at its own
price; the top-level counts are their sums, and `model` is the first's. Work of one model has no
shares: `model` did it all, as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from evalsvc.spending.prices import price_of

# What a provider may add to what is sent, in tokens, on every call: chat template markers, and
# the system prompt a provider writes for a forced tool (Anthropic's is about 350 tokens).
CALL_OVERHEAD_TOKENS = 512
# What a judge's verdict is expected to take, in tokens (its bound is the call's max_tokens).
EXPECTED_VERDICT_TOKENS = 150
# Bytes of text a token is expected to cover (a token covers at least one: the bound).
EXPECTED_BYTES_PER_TOKEN = 4
# What an embeddings model may add to each text it embeds, in tokens (its start and end
# markers, a task's prefix), besides CALL_OVERHEAD_TOKENS a call.
EMBEDDING_TEXT_OVERHEAD_TOKENS = 16

# A usage's counts, in order: calls, cache hits, input and output tokens, and the lost ones.
_COUNTS = 7


def _counts(u: Usage) -> list[int]:
    return [
        u.llm_calls,
        u.cache_hits,
        u.input_tokens,
        u.output_tokens,
        u.lost_calls,
        u.lost_input_tokens,
        u.lost_output_tokens,
    ]


def _single(model: str, c: list[int]) -> Usage:
    return Usage(c[0], c[1], c[2], c[3], model, c[4], c[5], c[6])


@dataclass(slots=True)
class Usage:
    """Counts of LLM work. `model` is the provider and model (EVALSVC_LLM, EVALSVC_EMBEDDINGS)
    that did it, the first of them when several did (`shares`: each one's counts).

    `lost_*`: of the counts, the part that is an estimate of work lost with a killed process
    (the calls that may have been in flight at the kill, each counted at the most it could
    use), not a count of calls known to have been made."""

    llm_calls: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model: str = ""
    lost_calls: int = 0
    lost_input_tokens: int = 0
    lost_output_tokens: int = 0
    # When more than one model did the work: each one's counts (without shares of its own).
    shares: tuple[Usage, ...] = ()

    def parts(self) -> tuple[Usage, ...]:
        """Each model's counts: the shares, or the whole (one model's)."""
        return self.shares or (replace(self, shares=()),)

    @classmethod
    def of_parts(cls, parts: Iterable[Usage]) -> Usage:
        """The usage of these parts: a model's parts added up, an unnamed part's counts given to
        the first model named, parts that count nothing left out (unless all are such: then
        the first model named is the usage's)."""
        by: dict[str, list[int]] = {}
        for part in parts:
            counts = by.setdefault(part.model, [0] * _COUNTS)
            for k, value in enumerate(_counts(part)):
                counts[k] += value
        if "" in by and len(by) > 1:
            unnamed = by.pop("")
            first = by[next(iter(by))]
            for k in range(_COUNTS):
                first[k] += unnamed[k]
        counted = [(model, counts) for model, counts in by.items() if any(counts)]
        if not counted:
            return cls(model=next(iter(by), ""))
        if len(counted) == 1:
            return _single(*counted[0])
        total = [sum(counts[k] for _, counts in counted) for k in range(_COUNTS)]
        whole = _single(counted[0][0], total)
        whole.shares = tuple(_single(model, counts) for model, counts in counted)
        return whole

    def __add__(self, other: Usage) -> Usage:
        if not (self.shares or other.shares) and other.model in (self.model, ""):
            return _single(
                self.model, [a + b for a, b in zip(_counts(self), _counts(other), strict=True)]
            )
        return Usage.of_parts(self.parts() + other.parts())

    def minus(self, other: Usage) -> Usage:
        """These counts less `other`'s (a part of them), model by model."""
        negated = [_single(part.model, [-c for c in _counts(part)]) for part in other.parts()]
        return Usage.of_parts(self.parts() + tuple(negated))

    def times(self, k: int) -> Usage:
        """`k` times these counts (the rooms of k attempts alike)."""
        return Usage.of_parts(
            _single(part.model, [k * c for c in _counts(part)]) for part in self.parts()
        )

    def as_lost(self) -> Usage:
        """These counts, every one of them an estimate of lost work."""
        return Usage.of_parts(
            Usage(
                p.llm_calls,
                p.cache_hits,
                p.input_tokens,
                p.output_tokens,
                p.model,
                p.llm_calls,
                p.input_tokens,
                p.output_tokens,
            )
            for p in self.parts()
        )

    def lost(self) -> Usage | None:
        """The part of these counts that is an estimate of lost work; None when there is none."""
        if not (self.lost_calls or self.lost_input_tokens or self.lost_output_tokens):
            return None
        return Usage.of_parts(
            Usage(p.lost_calls, 0, p.lost_input_tokens, p.lost_output_tokens, p.model)
            for p in self.parts()
        )

    @property
    def empty(self) -> bool:
        return not (self.llm_calls or self.cache_hits or self.input_tokens or self.output_tokens)

    def cost(self) -> Decimal | None:
        """USD; 0 when no token was used (deterministic work, cache hits), None when a model
        that used tokens has no price."""
        if not (self.input_tokens or self.output_tokens):
            return Decimal(0)
        if self.shares:
            return _sum([share.cost() for share in self.shares])
        price = price_of(self.model)
        return None if price is None else price.cost(self.input_tokens, self.output_tokens)

    def as_dict(self) -> dict[str, Any]:
        """The counts, to store (the cost is worked out when read, from the same table); the
        lost part only when there is one; each model's, when there are several."""
        stored: dict[str, Any] = {
            "llm_calls": self.llm_calls,
            "cache_hits": self.cache_hits,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "model": self.model,
        }
        if self.lost() is not None:
            stored["lost_calls"] = self.lost_calls
            stored["lost_input_tokens"] = self.lost_input_tokens
            stored["lost_output_tokens"] = self.lost_output_tokens
        if self.shares:
            stored["by_model"] = [share.as_dict() for share in self.shares]
        return stored

    @classmethod
    def from_dict(cls, value: Any) -> Usage:
        if not isinstance(value, dict):
            return cls()
        shares = value.get("by_model")
        if isinstance(shares, list) and shares and all(isinstance(s, dict) for s in shares):
            return cls.of_parts(replace(cls.from_dict(s), shares=()) for s in shares)
        return cls(
            int(value.get("llm_calls", 0)),
            int(value.get("cache_hits", 0)),
            int(value.get("input_tokens", 0)),
            int(value.get("output_tokens", 0)),
            str(value.get("model", "")),
            int(value.get("lost_calls", 0)),
            int(value.get("lost_input_tokens", 0)),
            int(value.get("lost_output_tokens", 0)),
        )


def _sum(costs: list[Decimal | None]) -> Decimal | None:
    """The sum of costs; None when one is None (a model with no price)."""
    total = Decimal(0)
    for cost in costs:
        if cost is None:
            return None
        total += cost
    return total


def larger_room(a: Usage, b: Usage) -> Usage:
    """The room of one attempt that holds either `a`'s or `b`'s (each one attempt's most, of
    one model): the larger tokens of each, priced as the dearer model would price them (a model
    with no price the dearest), so that it costs at least what either attempt can."""
    room = Usage(
        1, 0, max(a.input_tokens, b.input_tokens), max(a.output_tokens, b.output_tokens), a.model
    )
    if not a.model or a.model == b.model:
        return replace(room, model=b.model or a.model)
    mine, theirs = room.cost(), replace(room, model=b.model).cost()
    dearer = theirs is None or (mine is not None and theirs > mine)
    return replace(room, model=b.model) if dearer else room


def room_holds(room: Usage, most: Usage) -> bool:
    """Whether `room` holds an attempt that can use at most `most` (one model's): its tokens,
    and what they can cost."""
    if most.input_tokens > room.input_tokens or most.output_tokens > room.output_tokens:
        return False
    if most.model in (room.model, "") or not (most.input_tokens or most.output_tokens):
        return True
    costs = room.cost(), most.cost()
    return costs[0] is None or (costs[1] is not None and costs[1] <= costs[0])


@dataclass(slots=True)
class Bound:
    """At most what planned LLM calls can use: `calls` calls (each perhaps retried up to
    `attempts` times in all), `cached` more answered by the judge cache. Calls of more than one
    model: each one's bound in `shares` (the fields are their sums, `model` the first's)."""

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
    # The room to hold for one attempt of the calls (usage.Meter), before any is made: the
    # most any one can use, or what the first ones can (a larger one grows the rooms as it
    # comes); 0: not known, the whole bound's instead.
    attempt_input_max: int = 0
    attempt_output_max: int = 0
    # The most calls made at once (0: as many as are planned).
    at_once: int = 0
    shares: tuple[Bound, ...] = ()

    def _plus(self, other: Bound) -> Bound:
        """The sum of two bounds of one model (or of calls without one)."""
        return Bound(
            self.calls + other.calls,
            self.cached + other.cached,
            self.input_tokens_max + other.input_tokens_max,
            self.output_tokens_max + other.output_tokens_max,
            self.input_tokens_expected + other.input_tokens_expected,
            self.output_tokens_expected + other.output_tokens_expected,
            self.model or other.model,
            self.attempts_max + other.attempts_max,
            max(self.attempt_input_max, other.attempt_input_max),
            max(self.attempt_output_max, other.attempt_output_max),
            self.concurrent() + other.concurrent() if self.at_once or other.at_once else 0,
        )

    def parts(self) -> tuple[Bound, ...]:
        return self.shares or (replace(self, shares=()),)

    def __add__(self, other: Bound) -> Bound:
        if not (self.shares or other.shares) and other.model in (self.model, ""):
            return self._plus(other)
        by: dict[str, Bound] = {}
        for part in self.parts() + other.parts():
            by[part.model] = by[part.model]._plus(part) if part.model in by else part
        if "" in by and len(by) > 1:
            unnamed = by.pop("")
            first = next(iter(by))
            by[first] = by[first]._plus(unnamed)
        if len(by) == 1:
            return next(iter(by.values()))
        parts = list(by.values())
        whole = parts[0]
        for part in parts[1:]:
            whole = whole._plus(part)
        whole.shares = tuple(parts)
        return whole

    def concurrent(self) -> int:
        """The most calls made at once."""
        return self.at_once or self.calls

    def most(self) -> Usage:
        """The most the calls can use, as usage: every attempt made, every token asked for."""
        return Usage.of_parts(
            Usage(p.attempts_max, 0, p.input_tokens_max, p.output_tokens_max, p.model)
            for p in self.parts()
        )

    def attempt_most(self) -> Usage:
        """The room to hold for one attempt of the calls (an embeddings model's attempt asks
        for no output: its room's is 0); of calls of several models, one that holds an
        attempt of any of them."""
        rooms = [p._attempt_most() for p in self.parts()]
        room = rooms[0]
        for other in rooms[1:]:
            room = larger_room(room, other)
        return room

    def _attempt_most(self) -> Usage:
        known = self.attempt_input_max > 0
        return Usage(
            1,
            0,
            self.attempt_input_max if known else self.input_tokens_max,
            self.attempt_output_max if known else self.output_tokens_max,
            self.model,
        )

    def _cost(self, expected: bool) -> Decimal | None:
        costs = [
            Usage(
                p.calls,
                0,
                p.input_tokens_expected if expected else p.input_tokens_max,
                p.output_tokens_expected if expected else p.output_tokens_max,
                p.model,
            ).cost()
            for p in self.parts()
        ]
        return _sum(costs)

    def cost_max(self) -> Decimal | None:
        return self._cost(expected=False)

    def cost_expected(self) -> Decimal | None:
        return self._cost(expected=True)

    def unpriced(self) -> str:
        """The model whose calls have no price ("" when every one has one)."""
        for part in self.parts():
            if part._cost(expected=False) is None:
                return part.model
        return ""


def text_bytes(*texts: str) -> int:
    """UTF-8 bytes of `texts` (a lone surrogate counted as the 3 bytes it is stored as)."""
    return sum(len(text.encode("utf-8", "surrogatepass")) for text in texts)


def calls_bound(
    calls: int,
    sent_bytes: int,
    max_tokens: int,
    attempts: int,
    expected_output: int,
    largest_call_bytes: int | None = None,
) -> Bound:
    """The bound of `calls` planned calls that send `sent_bytes` of text in all (the largest
    one `largest_call_bytes`, when known) and each ask for at most `max_tokens`, each perhaps
    made `attempts` times."""
    input_max = sent_bytes + calls * CALL_OVERHEAD_TOKENS
    largest = sent_bytes if largest_call_bytes is None else min(largest_call_bytes, sent_bytes)
    return Bound(
        calls=calls,
        input_tokens_max=attempts * input_max,
        output_tokens_max=attempts * calls * max_tokens,
        input_tokens_expected=-(-sent_bytes // EXPECTED_BYTES_PER_TOKEN),
        output_tokens_expected=calls * min(max_tokens, expected_output),
        attempts_max=attempts * calls,
        attempt_input_max=largest + CALL_OVERHEAD_TOKENS if calls else 0,
        attempt_output_max=max_tokens if calls else 0,
    )


def embeddings_bound(
    texts: int,
    calls: int,
    sent_bytes: int,
    attempts: int,
    largest_call_bytes: int | None = None,
) -> Bound:
    """The bound of `calls` planned calls of an embeddings model that embed `texts` texts of
    `sent_bytes` in all, each call perhaps made `attempts` times: input tokens only, one token
    a byte, with each text's markers (EMBEDDING_TEXT_OVERHEAD_TOKENS) and each call's overhead
    on top. `largest_call_bytes`, when known: the largest call's bytes and its texts' markers."""
    sent = sent_bytes + texts * EMBEDDING_TEXT_OVERHEAD_TOKENS
    return calls_bound(calls, sent, 0, attempts, 0, largest_call_bytes)
