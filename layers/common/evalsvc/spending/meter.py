"""What LLM work used: calls (every attempt, retries included), judge cache hits, and tokens
as the provider counted them, model by model; what that cost (evalsvc.spending.prices); and upper
bounds of what planned calls can use (the counts and bounds themselves: spending.usage).

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
`rooms_most` of them (the LLM's concurrency): what a kill can leave charged but unserved. The
rooms are alike: when attempts of two models (a judge and an embeddings model) share them, each
room holds the larger tokens of either, priced as the dearer model would price them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from evalsvc.spending.usage import (
    CALL_OVERHEAD_TOKENS,
    EMBEDDING_TEXT_OVERHEAD_TOKENS,
    EXPECTED_BYTES_PER_TOKEN,
    EXPECTED_VERDICT_TOKENS,
    Bound,
    Usage,
    calls_bound,
    embeddings_bound,
    larger_room,
    room_holds,
    text_bytes,
)

__all__ = [
    "CALL_OVERHEAD_TOKENS",
    "EMBEDDING_TEXT_OVERHEAD_TOKENS",
    "EXPECTED_BYTES_PER_TOKEN",
    "EXPECTED_VERDICT_TOKENS",
    "Attempt",
    "Bound",
    "Guard",
    "Keeper",
    "Meter",
    "Usage",
    "calls_bound",
    "current_meter",
    "embeddings_bound",
    "guard",
    "metering",
    "text_bytes",
]


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
        self,
        *,
        calls: int = 0,
        cache_hits: int = 0,
        input_tokens: int = 0,
        output_tokens: int = 0,
        model: str = "",
    ) -> None:
        """Usage to keep with the rest when the work ends (cache hits; calls made outside
        `attempt`), by `model` (unnamed: the meter's)."""
        with self._cond:
            recorded = Usage(calls, cache_hits, input_tokens, output_tokens, model)
            self._usage = self._usage + recorded

    def allow_rooms(self, rooms: int) -> None:
        """Let up to `rooms` attempts be in flight at once (no fewer than before): a jury's
        judges each have their own pool of calls (scoring.jury)."""
        with self._cond:
            self._rooms_most = max(self._rooms_most, rooms)
            self._cond.notify_all()

    def name_model(self, model: str) -> None:
        with self._cond:
            self._usage.model = self._usage.model or model

    def usage(self) -> Usage:
        with self._cond:
            u = self._usage
            parts = u.parts()
        return Usage.of_parts(
            Usage(p.llm_calls, p.cache_hits, p.input_tokens, p.output_tokens, p.model)
            for p in parts
        )

    def prepare(self, calls: int, room: Usage) -> None:
        """Hold, before they start, rooms for the first `calls` calls of a batch (at most
        `rooms_most` in all), each as large as `room`: one hold instead of one per attempt."""
        if self._keeper is None or calls <= 0:
            return
        with self._holding:
            with self._cond:
                rooms = max(self._held, min(self._rooms_most, calls))
                size = larger_room(self._room, room)
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
                    calls=1,
                    input_tokens=attempt.input_tokens,
                    output_tokens=attempt.output_tokens,
                    model=most.model,
                )
            return
        self._take_room(most)
        try:
            yield attempt
        finally:
            model = most.model or self._usage.model
            self._end(Usage(1, 0, attempt.input_tokens, attempt.output_tokens, model))

    def _take_room(self, most: Usage) -> None:
        while True:
            with self._cond:
                while True:
                    if self._broken is not None:
                        raise self._broken
                    fits = room_holds(self._room, most)
                    if fits and self._busy < self._held:
                        self._busy += 1
                        return
                    if not (fits and self._held >= self._rooms_most):
                        break  # a hold is needed: one more room, or larger ones
                    self._cond.wait()
            with self._holding:
                with self._cond:
                    fits = room_holds(self._room, most)
                    if fits and (self._busy < self._held or self._held >= self._rooms_most):
                        continue  # changed meanwhile: from the top
                    rooms = self._held + 1 if self._busy >= self._held else self._held
                    rooms = max(1, min(rooms, self._rooms_most))
                    size = larger_room(self._room, most)
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
            return self._usage.minus(self._given)


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
