"""What LLM work used: calls (every attempt, retries included), judge cache hits, and tokens
as the provider counted them; what that cost (evalsvc.spending.prices); and upper bounds of what
planned calls can use.

A Meter adds up the usage of one request or one chunk of queued work; the LLM made while it is
current (`metering`) records into it, from whatever thread its calls run on. The guard current
with it is shown the bound of every batch of calls before they are made (`guard`): it may refuse
them (a per-request cap, a monthly limit).

A Meter with a Keeper (logic.spending's) keeps what is used as the calls end, so that work
killed mid-way has lost at most the calls in flight: every attempt takes a room before it is
sent (the most one attempt can use, held by the keeper: the month's reservation), and gives it
back only once its usage is kept. Attempts that end together are kept together, in one write
(a group commit: whoever ends while no write is under way writes for everyone waiting). So at
any moment the rooms held cover every attempt in flight or not yet kept, and there are at most
`rooms_most` of them (the LLM's concurrency): what a kill can leave charged but unserved.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

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


@dataclass(slots=True)
class Usage:
    """Counts of LLM work. `model` is the provider and model (EVALSVC_LLM) that did it.

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

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.llm_calls + other.llm_calls,
            self.cache_hits + other.cache_hits,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.model or other.model,
            self.lost_calls + other.lost_calls,
            self.lost_input_tokens + other.lost_input_tokens,
            self.lost_output_tokens + other.lost_output_tokens,
        )

    def times(self, k: int) -> Usage:
        """`k` times these counts (the rooms of k attempts alike)."""
        return Usage(
            k * self.llm_calls,
            k * self.cache_hits,
            k * self.input_tokens,
            k * self.output_tokens,
            self.model,
            k * self.lost_calls,
            k * self.lost_input_tokens,
            k * self.lost_output_tokens,
        )

    def as_lost(self) -> Usage:
        """These counts, every one of them an estimate of lost work."""
        return Usage(
            self.llm_calls,
            self.cache_hits,
            self.input_tokens,
            self.output_tokens,
            self.model,
            self.llm_calls,
            self.input_tokens,
            self.output_tokens,
        )

    def lost(self) -> Usage | None:
        """The part of these counts that is an estimate of lost work; None when there is none."""
        if not (self.lost_calls or self.lost_input_tokens or self.lost_output_tokens):
            return None
        return Usage(
            self.lost_calls, 0, self.lost_input_tokens, self.lost_output_tokens, self.model
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
        """The counts, to store (the cost is worked out when read, from the same table); the
        lost part only when there is one."""
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
        return stored

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
            int(value.get("lost_calls", 0)),
            int(value.get("lost_input_tokens", 0)),
            int(value.get("lost_output_tokens", 0)),
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
    # The room to hold for one attempt of the calls (usage.Meter), before any is made: the
    # most any one can use, or what the first ones can (a larger one grows the rooms as it
    # comes); 0: not known, the whole bound's instead.
    attempt_input_max: int = 0
    attempt_output_max: int = 0
    # The most calls made at once (0: as many as are planned).
    at_once: int = 0

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
            max(self.attempt_input_max, other.attempt_input_max),
            max(self.attempt_output_max, other.attempt_output_max),
            self.concurrent() + other.concurrent() if self.at_once or other.at_once else 0,
        )

    def concurrent(self) -> int:
        """The most calls made at once."""
        return self.at_once or self.calls

    def most(self) -> Usage:
        """The most the calls can use, as usage: every attempt made, every token asked for."""
        return Usage(
            self.attempts_max, 0, self.input_tokens_max, self.output_tokens_max, self.model
        )

    def attempt_most(self) -> Usage:
        """The room to hold for one attempt of the calls (an embeddings model's attempt
        asks for no output: its room's is 0)."""
        known = self.attempt_input_max > 0
        return Usage(
            1,
            0,
            self.attempt_input_max if known else self.input_tokens_max,
            self.attempt_output_max if known else self.output_tokens_max,
            self.model,
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


class Keeper(Protocol):
    """Where a Meter keeps usage as calls end (logic.spending: the month, and a job's chunk),
    and who holds the rooms of the attempts in flight."""

    def hold(self, rooms: int, room: Usage) -> None:
        """Hold `rooms` rooms of `room` each, more or larger than those held so far; raises
        (e.g. OverLimit) when they cannot be held."""
        ...

    def keep(self, used: Usage, rooms: int) -> int:
        """Keep `used` (with whatever was given before and not kept yet), the usage of
        attempts that ended, whose rooms (`rooms` of them) it frees: how many rooms it holds
        now, in all (fewer when some were given back). Raises when it could not be kept: the
        rooms stay taken until a later call succeeds."""
        ...


class Attempt:
    """What one attempt used, as its caller learns it (the tokens, or the attempt's bound)."""

    __slots__ = ("input_tokens", "output_tokens")

    def __init__(self) -> None:
        self.input_tokens = 0
        self.output_tokens = 0

    def used(self, input_tokens: int, output_tokens: int) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens


class Meter:
    """Usage added up from any thread; kept by its keeper, if it has one, as attempts end."""

    def __init__(self, model: str = "", keeper: Keeper | None = None, rooms_most: int = 1) -> None:
        self._cond = threading.Condition()
        self._usage = Usage(model=model)
        self._keeper = keeper
        self._rooms_most = max(1, rooms_most)
        # Serialises the keeper's holds (each a write), outside the condition's lock.
        self._holding = threading.Lock()
        self._held = 0
        self._room = Usage()
        # Rooms taken by an attempt in flight, or by one that ended and is not kept yet.
        self._busy = 0
        # Ended attempts' usage and rooms, waiting for the next keep; and rooms whose keep
        # failed (their usage is the keeper's, still to be kept).
        self._pending = Usage()
        self._pending_rooms = 0
        self._stuck_rooms = 0
        self._keeping = False
        # Keeps started and ended, in order; the failure of the last one, if it failed.
        self._started = 0
        self._ended = 0
        self._failed: dict[int, BaseException] = {}
        # The last keep failed: attempts are not started (none would end kept) until one
        # succeeds.
        self._broken: BaseException | None = None
        # What was handed to the keeper (kept, or the keeper's to keep).
        self._given = Usage()

    def record(
        self, *, calls: int = 0, cache_hits: int = 0, input_tokens: int = 0, output_tokens: int = 0
    ) -> None:
        """Usage to keep with the rest when the work ends (cache hits; calls made outside
        `attempt`)."""
        with self._cond:
            self._usage.llm_calls += calls
            self._usage.cache_hits += cache_hits
            self._usage.input_tokens += input_tokens
            self._usage.output_tokens += output_tokens

    def name_model(self, model: str) -> None:
        with self._cond:
            self._usage.model = self._usage.model or model

    def usage(self) -> Usage:
        with self._cond:
            u = self._usage
            return Usage(u.llm_calls, u.cache_hits, u.input_tokens, u.output_tokens, u.model)

    def prepare(self, calls: int, room: Usage) -> None:
        """Hold, before they start, rooms for the first `calls` calls of a batch (at most
        `rooms_most` in all), each as large as `room`: one hold instead of one per attempt."""
        if self._keeper is None or calls <= 0:
            return
        with self._holding:
            with self._cond:
                rooms = max(self._held, min(self._rooms_most, calls))
                size = _larger(self._room, room)
                if rooms == self._held and size == self._room:
                    return
            self._hold(rooms, size)

    def _hold(self, rooms: int, size: Usage) -> None:
        """With self._holding: have the keeper hold `rooms` rooms of `size`."""
        assert self._keeper is not None
        self._keeper.hold(rooms, size)
        with self._cond:
            self._held, self._room = rooms, size
            self._cond.notify_all()

    @contextmanager
    def attempt(self, most: Usage) -> Iterator[Attempt]:
        """One attempt of a call, which can use at most `most`: it takes a room first (waiting
        for one, or having one more held), and, once it ended (however), its usage is a call
        and what it `used`, kept before the room is given back. Raises before the attempt
        when no room can be held (OverLimit), or after it when its usage could not be kept."""
        attempt = Attempt()
        if self._keeper is None:
            try:
                yield attempt
            finally:
                self.record(
                    calls=1, input_tokens=attempt.input_tokens, output_tokens=attempt.output_tokens
                )
            return
        self._take_room(most)
        try:
            yield attempt
        finally:
            used = Usage(1, 0, attempt.input_tokens, attempt.output_tokens, self._usage.model)
            self._end(used)

    def _take_room(self, most: Usage) -> None:
        while True:
            with self._cond:
                while True:
                    if self._broken is not None:
                        raise self._broken
                    fits = _fits(most, self._room)
                    if fits and self._busy < self._held:
                        self._busy += 1
                        return
                    if not (fits and self._held >= self._rooms_most):
                        break  # a hold is needed: one more room, or larger ones
                    self._cond.wait()
            with self._holding:
                with self._cond:
                    fits = _fits(most, self._room)
                    if fits and (self._busy < self._held or self._held >= self._rooms_most):
                        continue  # changed meanwhile: from the top
                    rooms = self._held + 1 if self._busy >= self._held else self._held
                    rooms = max(1, min(rooms, self._rooms_most))
                    size = _larger(self._room, most)
                self._hold(rooms, size)

    def _end(self, used: Usage) -> None:
        """Add an ended attempt's usage and wait until a keep that started after it ends; the
        first to find no keep under way makes it, for every attempt waiting."""
        with self._cond:
            self._usage = self._usage + used
            self._pending = self._pending + used
            self._pending_rooms += 1
            mine = self._started + 1
            while self._ended < mine:
                if self._keeping:
                    self._cond.wait()
                else:
                    self._keep_pending()
            failure = self._failed.get(mine)
        if failure is not None:
            raise failure

    def _keep_pending(self) -> None:
        """With self._cond held: hand what is pending to the keeper (the lock released while it
        writes), then free the rooms it kept, or leave them taken if it failed."""
        assert self._keeper is not None
        self._keeping = True
        self._started += 1
        number = self._started
        batch, rooms = self._pending, self._pending_rooms + self._stuck_rooms
        self._pending, self._pending_rooms, self._stuck_rooms = Usage(), 0, 0
        self._given = self._given + batch
        still, failure = 0, None
        self._cond.release()
        try:
            still = self._keeper.keep(batch, rooms)
        except BaseException as exc:
            failure = exc
        finally:
            self._cond.acquire()
        self._keeping = False
        self._ended = number
        if failure is None:
            self._busy -= rooms
            self._held = max(0, still)
            self._broken = None
        else:
            self._broken = failure
            self._stuck_rooms += rooms
            self._failed[number] = failure
            for old in [k for k in self._failed if k < number - 64]:
                del self._failed[old]
        self._cond.notify_all()

    def unkept(self) -> Usage:
        """What was used and not handed to the keeper (cache hits, calls outside `attempt`,
        attempts still waiting): with the keeper's own unkept part, what the work's end adds."""
        with self._cond:
            given, u = self._given, self._usage
            return Usage(
                u.llm_calls - given.llm_calls,
                u.cache_hits - given.cache_hits,
                u.input_tokens - given.input_tokens,
                u.output_tokens - given.output_tokens,
                u.model,
            )


def _fits(most: Usage, room: Usage) -> bool:
    return most.input_tokens <= room.input_tokens and most.output_tokens <= room.output_tokens


def _larger(a: Usage, b: Usage) -> Usage:
    return Usage(
        1,
        0,
        max(a.input_tokens, b.input_tokens),
        max(a.output_tokens, b.output_tokens),
        a.model or b.model,
    )


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
