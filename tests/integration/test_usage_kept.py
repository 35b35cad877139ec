"""LLM usage kept as each call ends (usage.Meter, logic.spending, storage.ledger): a delivery
killed mid-chunk is charged what it kept and its calls in flight, the month sees each call
before the next, the ledger's writes count once across lost answers and give rooms back at the
limit, and work holds what its calls in flight can use, not its whole bound (moto tables, the
fake judge)."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest
from evalsvc.logic import spending
from evalsvc.spending.meter import Usage
from evalsvc.storage import ledger

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge
from tests.integration.conftest import Tenant
from tests.integration.test_spending_limits import HELD, chunked, month, queued
from tests.integration.test_usage import reported, seed
from tests.work_queue import Work

__all__ = ["chunked"]  # the fixture, used by name


class Killed(BaseException):
    """The worker's process stopped here: nothing after it runs (no finally block either)."""


def test_a_delivery_killed_mid_chunk_is_charged_what_it_kept_and_its_calls_in_flight(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.logic import jobs
    from evalsvc.storage import jobs as jobs_store

    # Given a chunk of 4 calls, one at a time, whose first delivery is killed once the judge
    # served its second call, before its usage was kept anywhere (the first call's was)
    point_service_at({"EVALSVC_JUDGE_CONCURRENCY": "1"}, monkeypatch)
    seed(acme, pairs=4)
    results_id = queued(acme, {"seed_data_id": "ds"})
    real_add, real_settle = jobs_store.add_spent, ledger.settle
    kept: list[int] = []

    def add_or_die(*args: Any, **kwargs: Any) -> None:
        if kept:
            raise Killed  # nothing after the kill runs: not the month's record either
        kept.append(len(priced_judge.requests))
        real_add(*args, **kwargs)

    monkeypatch.setattr(jobs_store, "add_spent", add_or_die)
    monkeypatch.setattr(ledger, "settle", lambda *args, **kwargs: None)
    with pytest.raises(Killed):
        chunked.deliver(1)
    assert kept == [1] and len(priced_judge.requests) == 2
    monkeypatch.setattr(jobs_store, "add_spent", real_add)
    monkeypatch.setattr(ledger, "settle", real_settle)
    # While it is not known to be dead, its room counts, held
    stored = ledger.read_month("acme", spending.this_month())
    assert stored.usage.llm_calls == 1 and len(stored.reservations) == 1
    (held,) = stored.reservations.values()
    assert held.most.llm_calls == 1

    # When its message comes back and the job completes
    chunked.client.purge_queue(QueueUrl=chunked.queue_url)
    jobs.sweep(restart=True)
    chunked.drain()

    # Then the result's usage is every call the judge served: the call kept, the one in flight
    # at the kill counted at the most it could use (the estimate, said as such), the next
    # delivery's as made (it found cached the one verdict the killed delivery kept: this
    # stand-in for a kill lets the exception reach the code that caches it)
    done = acme.get(f"/evaluation/{results_id}").json()
    assert done["status"] == "complete", done
    served = len(priced_judge.requests)
    assert served == 2 + 3
    assert done["usage"]["llm_calls"] == served
    lost = done["usage"]["lost_work"]
    assert lost["llm_calls"] == 1 and lost["input_tokens"] >= reported(priced_judge)[0] // served
    assert done["usage"]["input_tokens"] >= reported(priced_judge)[0]
    assert done["usage"]["output_tokens"] >= reported(priced_judge)[1]
    # and the month charged the killed delivery's room as soon as the job completed
    stored = ledger.read_month("acme", spending.this_month())
    assert stored.reservations == {}
    assert stored.usage.llm_calls == served
    assert month(acme)["llm_calls"] == served
    assert month(acme)["cost_usd"] == pytest.approx(done["usage"]["cost_usd"], rel=1e-9)


def test_usage_is_kept_as_calls_end_not_when_the_work_ends(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given one call at a time on a chunk of 4 calls
    point_service_at({"EVALSVC_JUDGE_CONCURRENCY": "1"}, monkeypatch)
    seed(acme, pairs=4)
    results_id = queued(acme, {"seed_data_id": "ds"})
    seen: list[tuple[int, int, int]] = []
    answer = priced_judge.answer

    def observing(request: dict[str, Any]) -> Any:
        # What the month holds when each call reaches the judge
        stored = ledger.read_month("acme", spending.this_month())
        rooms = sum(r.most.llm_calls for r in stored.reservations.values())
        seen.append((len(priced_judge.requests), stored.usage.llm_calls, rooms))
        return answer(request)

    priced_judge.answer = observing

    # When the chunk is delivered
    chunked.drain()

    # Then each call found every call before it already added to the month, and one room held
    assert seen == [(1, 0, 1), (2, 1, 1), (3, 2, 1), (4, 3, 1)]
    done = acme.get(f"/evaluation/{results_id}").json()
    assert done["usage"]["llm_calls"] == 4 and done["usage"]["lost_work"] is None
    assert month(acme)["reserved_usd"] == 0.0


def test_ledger_writes_retried_after_a_lost_answer_count_once(acme: Tenant) -> None:
    month = spending.this_month()
    until = int(time.time()) + 600
    spending.set_limit("acme", Decimal(1))
    used = Usage(1, 0, 100, 10, "openai:fake-judge")

    # The same reservation written twice (a retry whose first answer was lost)
    held = ledger.Reservation(Decimal("0.4"), until, HELD)
    assert ledger.reserve("acme", month, "rs_once", held, Decimal(1))
    assert ledger.reserve("acme", month, "rs_once", held, Decimal(1))
    assert ledger.read_month("acme", month).committed_usd == Decimal("0.4")

    # ... grown twice
    more = ledger.Reservation(Decimal("0.1"), until, Usage(1, 0, 100, 10))
    assert ledger.grow("acme", month, "rs_once", 0, more, Decimal(1)) is True
    assert ledger.grow("acme", month, "rs_once", 0, more, Decimal(1)) is True
    assert ledger.read_month("acme", month).committed_usd == Decimal("0.5")

    # ... a batch recorded twice, its rooms kept
    rooms = ledger.Reservation(Decimal("0.1"), until, Usage(1, 0, 100, 10))
    for _ in range(2):
        kept = ledger.record("acme", month, "rs_once", 1, used, Decimal("0.1"), rooms, Decimal(1))
        assert kept is ledger.Recorded.KEPT

    # ... and settled twice (the second finds it gone, and adds the nothing it has left)
    for _ in range(2):
        ledger.settle("acme", month, Usage(), Decimal(0), ("rs_once", 2, Decimal("0.5")))

    stored = ledger.read_month("acme", month)
    assert (stored.spent_usd, stored.committed_usd, stored.usage.llm_calls) == (
        Decimal("0.1"),
        Decimal("0.1"),
        1,
    )
    assert stored.reservations == {}


def test_a_batch_past_the_limit_is_recorded_and_its_rooms_given_back(acme: Tenant) -> None:
    # Given a reservation of 2 rooms of $0.3 under a limit of $1, with $0.3 spent already
    month = spending.this_month()
    until = int(time.time()) + 600
    spending.set_limit("acme", Decimal(1))
    ledger.settle("acme", month, Usage(1, 0, 1, 1, "openai:fake-judge"), Decimal("0.3"), None)
    held = ledger.Reservation(Decimal("0.6"), until, Usage(2, 0, 200, 20))
    assert ledger.reserve("acme", month, "rs_two", held, Decimal(1))
    one_room = ledger.Reservation(Decimal("0.3"), until, Usage(1, 0, 100, 10))
    used = Usage(1, 0, 100, 10, "openai:fake-judge")

    # When a batch that cost $0.2 is recorded: keeping its room would commit $1.1
    outcome = ledger.record("acme", month, "rs_two", 0, used, Decimal("0.2"), one_room, Decimal(1))

    # Then it is recorded all the same, and its room given back: the limit is never passed
    assert outcome is ledger.Recorded.RELEASED
    stored = ledger.read_month("acme", month)
    assert stored.spent_usd == Decimal("0.5") and stored.usage.llm_calls == 2
    (entry,) = stored.reservations.values()
    assert (entry.usd, entry.most.llm_calls, entry.writes) == (Decimal("0.3"), 1, 1)
    assert stored.committed_usd == Decimal("0.8") <= Decimal(1)
    # and a room more does not fit
    assert ledger.grow("acme", month, "rs_two", 1, one_room, Decimal(1)) is False


def test_a_batch_recorded_after_its_reservation_was_charged_is_added_without_it(
    acme: Tenant,
) -> None:
    # Given a reservation charged as dead while its work ran on (a duplicate delivery)
    month = spending.this_month()
    held = ledger.Reservation(Decimal("0.2"), int(time.time()) + 600, Usage(1, 0, 100, 10))
    assert ledger.reserve("acme", month, "rs_dup", held, None)
    ledger.charge_now("acme", month, ["rs_dup"])
    used = Usage(1, 0, 50, 5, "openai:fake-judge")

    # When the work records what it used, and settles
    outcome = ledger.record("acme", month, "rs_dup", 0, used, Decimal("0.1"), held, None)
    ledger.settle("acme", month, used, Decimal("0.1"), ("rs_dup", 1, Decimal("0.2")))

    # Then both are added (counted twice at worst, never missed)
    assert outcome is ledger.Recorded.UNRESERVED
    stored = ledger.read_month("acme", month)
    assert stored.usage.llm_calls == 3 and stored.spent_usd == Decimal("0.4")
    assert stored.reservations == {} and stored.committed_usd == stored.spent_usd


def test_a_write_whose_answer_was_lost_is_found_applied_and_not_added_twice(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.core.errors import StorageUnavailable

    # Given work holding 2 rooms, whose first batch's write was applied but never answered
    spending.set_limit("acme", Decimal(10))
    work = spending.Spending("acme", "test", 60)
    room = Usage(1, 0, 1_000, 100, "openai:fake-judge")
    work.hold(2, room)
    used = Usage(1, 0, 300, 20, "openai:fake-judge")
    real_record = ledger.record

    def applied_then_lost(*args: Any, **kwargs: Any) -> ledger.Recorded:
        real_record(*args, **kwargs)
        raise StorageUnavailable("the answer never came")

    monkeypatch.setattr(ledger, "record", applied_then_lost)
    with pytest.raises(StorageUnavailable):
        work.keep(used, 1)
    monkeypatch.setattr(ledger, "record", real_record)

    # When the work goes on (another batch, a room more) and settles
    assert work.keep(used, 1) == 2
    work.hold(3, room)
    work.settle()

    # Then each batch is in the month once, and every room was given back exactly
    stored = ledger.read_month("acme", spending.this_month())
    assert stored.usage.llm_calls == 2 and stored.usage.input_tokens == 600
    assert stored.reservations == {}
    assert stored.spent_usd == 2 * (used.cost() or 0)
    assert stored.committed_usd == stored.spent_usd
    assert month(acme)["reserved_usd"] == 0.0


@pytest.mark.parametrize("work", ["evaluation", "pairwise"])
def test_work_holds_at_most_three_times_what_it_is_expected_to_cost(
    acme: Tenant, priced_judge: FakeJudge, work: str
) -> None:
    from tests.fake_judge import fake_llm
    from tests.integration.test_pairwise import QUESTION as WHICH
    from tests.integration.test_pairwise import runs

    # Given work of 24 judge calls: 12 pairs on 2 questions, or two runs of 12 pairs compared
    # in both orders
    held: list[Decimal] = []

    def observing(request: dict[str, Any]) -> Any:
        # What the month holds for work in flight when each call reaches the judge
        held.append(ledger.read_month("acme", spending.this_month()).reserved_usd(time.time()))
        return fake_llm(request)

    if work == "evaluation":
        seed(acme, ["Is it polite?", "Is it clear?"], pairs=12)
        route, body = "/evaluate", {"seed_data_id": "ds"}
    else:
        route, body = "/pairwise", {"result_ids": runs(acme), "question": WHICH}
    expected = acme.post(f"{route}/estimate", body).json()["cost_usd_expected"]
    priced_judge.answer = observing

    # When it runs
    done = acme.post(route, body)

    # Then it never held more than three times what it was expected to cost: the calls in
    # flight, not every call's every attempt
    assert done.status_code == 200, done.text
    assert len(priced_judge.requests) == 24
    assert 0 < max(held) <= 3 * Decimal(str(expected))
