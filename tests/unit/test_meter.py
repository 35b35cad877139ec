"""The Meter keeps usage as attempts end: every attempt holds a room until its usage is kept, so
the rooms held always cover the attempts in flight or not yet kept, and at most `rooms_most`
of them; attempts that end together are kept in one write."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from evalsvc.spending.meter import Meter, Usage
from hypothesis import given, settings
from hypothesis import strategies as st

ROOM = Usage(1, 0, 1_000, 100, "m")


class Refused(Exception):
    pass


class FakeKeeper:
    """A keeper that records what it is given, and checks the meter's promise as it goes: an
    attempt is only ever in flight or unkept inside a room held."""

    def __init__(self, *, release_after: int | None = None) -> None:
        self.lock = threading.Lock()
        self.holds: list[tuple[int, Usage]] = []
        self.kept = Usage()
        self.keeps = 0
        self.rooms = 0
        self.room = Usage()
        self.fail_next = 0
        self.refuse_holds = False
        # Give every freed room back once this many keeps were made (a limit reached).
        self.release_after = release_after
        # Attempts started and not yet kept, and the most seen at once.
        self.open = 0
        self.most_open = 0
        self.slow_keep = 0.0

    def hold(self, rooms: int, room: Usage) -> None:
        with self.lock:
            if self.refuse_holds:
                raise Refused("no room")
            assert rooms >= self.rooms or room.input_tokens > self.room.input_tokens
            self.holds.append((rooms, room))
            self.rooms, self.room = rooms, room

    def keep(self, used: Usage, rooms: int) -> int:
        if self.slow_keep:
            time.sleep(self.slow_keep)
        with self.lock:
            if self.fail_next:
                self.fail_next -= 1
                raise ConnectionError("the write failed")
            self.kept = self.kept + used
            self.keeps += 1
            self.open -= used.llm_calls
            if self.release_after is not None and self.keeps >= self.release_after:
                self.rooms -= min(rooms, self.rooms)
            return self.rooms

    def started(self) -> None:
        with self.lock:
            self.open += 1
            self.most_open = max(self.most_open, self.open)
            assert self.open <= self.rooms, "an attempt runs outside a room held"


def run_attempt(meter: Meter, keeper: FakeKeeper, tokens: tuple[int, int] = (10, 5)) -> None:
    with meter.attempt(Usage(1, 0, 500, 100, "m")) as attempt:
        keeper.started()
        time.sleep(random.random() / 1000)
        attempt.used(*tokens)


def test_without_a_keeper_an_attempt_is_a_call_and_its_tokens() -> None:
    meter = Meter("m")
    with meter.attempt(ROOM) as attempt:
        attempt.used(7, 3)
    with pytest.raises(ValueError), meter.attempt(ROOM):
        raise ValueError("the call failed")

    assert meter.usage() == Usage(2, 0, 7, 3, "m")
    assert meter.unkept() == Usage(2, 0, 7, 3, "m")


def test_rooms_are_held_once_for_a_batch_and_each_attempt_is_kept_before_it_returns() -> None:
    keeper = FakeKeeper()
    meter = Meter("m", keeper, rooms_most=4)

    meter.prepare(calls=10, room=ROOM)
    for _ in range(3):
        run_attempt(meter, keeper)
        assert keeper.kept.llm_calls == keeper.keeps  # kept before the attempt returned

    assert keeper.holds == [(4, ROOM)]
    assert keeper.kept == Usage(3, 0, 30, 15, "m")
    assert meter.unkept() == Usage(0, 0, 0, 0, "m")


def test_a_batch_smaller_than_the_concurrency_holds_a_room_a_call() -> None:
    keeper = FakeKeeper()
    meter = Meter("m", keeper, rooms_most=16)

    meter.prepare(calls=3, room=ROOM)

    assert keeper.holds == [(3, ROOM)]


def test_an_attempt_larger_than_the_rooms_grows_them_first() -> None:
    keeper = FakeKeeper()
    meter = Meter("m", keeper, rooms_most=2)
    meter.prepare(calls=2, room=ROOM)

    with meter.attempt(Usage(1, 0, 5_000, 100, "m")) as attempt:
        keeper.started()
        attempt.used(1, 1)

    assert keeper.holds[-1] == (2, Usage(1, 0, 5_000, 100, "m"))


def test_without_a_prepared_batch_rooms_are_held_as_attempts_need_them() -> None:
    keeper = FakeKeeper()
    meter = Meter("m", keeper, rooms_most=3)

    with ThreadPoolExecutor(6) as pool:
        list(pool.map(lambda _: run_attempt(meter, keeper), range(30)))

    assert 1 <= keeper.rooms <= 3
    assert keeper.most_open <= 3
    assert keeper.kept.llm_calls == 30


@settings(max_examples=25, deadline=None)
@given(
    threads=st.integers(1, 8),
    rooms_most=st.integers(1, 6),
    attempts=st.integers(1, 60),
    prepared=st.integers(0, 20),
)
def test_attempts_in_flight_or_unkept_never_outnumber_the_rooms_held(
    threads: int, rooms_most: int, attempts: int, prepared: int
) -> None:
    keeper = FakeKeeper()
    meter = Meter("m", keeper, rooms_most=rooms_most)
    meter.prepare(calls=prepared, room=ROOM)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda _: run_attempt(meter, keeper), range(attempts)))

    # every attempt's usage reached the keeper exactly once, none was ever outside a room,
    # and never more rooms than rooms_most
    assert keeper.kept == Usage(attempts, 0, 10 * attempts, 5 * attempts, "m")
    assert keeper.most_open <= keeper.rooms <= rooms_most
    assert keeper.keeps <= attempts
    assert meter.unkept() == Usage(0, 0, 0, 0, "m")


def test_attempts_that_end_together_are_kept_in_one_write() -> None:
    # Given keeps that take a while, and 8 attempts ending at once
    keeper = FakeKeeper()
    keeper.slow_keep = 0.05
    meter = Meter("m", keeper, rooms_most=8)
    meter.prepare(calls=8, room=ROOM)
    barrier = threading.Barrier(8)

    def attempt(_: int) -> None:
        with meter.attempt(ROOM) as a:
            keeper.started()
            barrier.wait()
            a.used(1, 1)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(attempt, range(8)))

    # Then they took far fewer writes than attempts: the first alone, the rest together
    assert keeper.kept.llm_calls == 8
    assert keeper.keeps <= 3


def test_a_failed_keep_fails_its_attempts_and_stops_new_ones_until_a_keep_succeeds() -> None:
    keeper = FakeKeeper()
    meter = Meter("m", keeper, rooms_most=1)
    meter.prepare(calls=5, room=ROOM)

    # When the keep of an attempt fails
    keeper.fail_next = 1
    with pytest.raises(ConnectionError):
        run_attempt(meter, keeper)
    # Then its room stays taken: no attempt starts (it would have no room to end in)
    with pytest.raises(ConnectionError):
        run_attempt(meter, keeper)
    assert keeper.kept == Usage()
    # and what it used is the keeper's to keep, not left with the meter
    assert meter.unkept() == Usage(0, 0, 0, 0, "m")


def test_a_keep_that_succeeds_after_a_failure_frees_the_rooms_it_left_taken() -> None:
    keeper = FakeKeeper()
    meter = Meter("m", keeper, rooms_most=2)
    meter.prepare(calls=5, room=ROOM)
    keeper.fail_next = 1
    with pytest.raises(ConnectionError):
        run_attempt(meter, keeper)

    # An attempt in flight while the keep failed ends and is kept
    entered = threading.Event()
    release = threading.Event()

    def in_flight() -> None:
        with meter.attempt(ROOM) as a:
            entered.set()
            release.wait()
            a.used(1, 1)

    # (started before the failure is known to new attempts: simulate by taking the room now)
    meter._broken = None  # type: ignore[attr-defined]
    worker = threading.Thread(target=in_flight)
    worker.start()
    entered.wait()
    release.set()
    worker.join()

    # Then both rooms are free again, and new attempts run
    run_attempt(meter, keeper)
    run_attempt(meter, keeper)
    assert keeper.keeps == 3


def test_rooms_given_back_at_the_limit_are_held_again_before_the_next_attempt() -> None:
    # Given a keeper that gives every freed room back (the month's limit reached)
    keeper = FakeKeeper(release_after=1)
    meter = Meter("m", keeper, rooms_most=2)
    meter.prepare(calls=5, room=ROOM)
    run_attempt(meter, keeper)
    assert keeper.rooms == 1

    # When the limit leaves no room for another
    keeper.refuse_holds = True
    run_attempt(meter, keeper)  # the room still held
    assert keeper.rooms == 0

    # Then the next attempt is refused before it starts
    with pytest.raises(Refused):
        run_attempt(meter, keeper)
    assert keeper.kept.llm_calls == 2


def test_cache_hits_and_calls_outside_attempts_are_left_for_the_end() -> None:
    keeper = FakeKeeper()
    meter = Meter("m", keeper, rooms_most=2)
    meter.record(cache_hits=3)
    meter.prepare(calls=1, room=ROOM)
    run_attempt(meter, keeper)

    assert keeper.kept == Usage(1, 0, 10, 5, "m")
    assert meter.unkept() == Usage(0, 3, 0, 0, "m")
    assert meter.usage() == Usage(1, 3, 10, 5, "m")
