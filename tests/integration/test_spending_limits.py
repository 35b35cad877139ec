"""E3: queued results sum their chunks' usage, and a tenant's monthly limit holds every
request and chunk, reserved before any call and settled after; work that dies before it
settles is charged in full (moto tables, the fake judge)."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest
from evalsvc.logic import spending
from evalsvc.storage import ledger
from evalsvc.usage import Bound, Usage

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, sequence
from tests.integration.conftest import Tenant
from tests.integration.test_usage import VERDICT, reported, seed
from tests.work_queue import Work


def queued(tenant: Tenant, body: dict[str, Any]) -> str:
    response = tenant.http.post(
        "/v1/evaluate", json=body, headers={**tenant.headers, "Prefer": "respond-async"}
    )
    assert response.status_code == 202, response.text
    return str(response.json()["eval_results_id"])


def month(tenant: Tenant) -> dict[str, Any]:
    response = tenant.get("/usage")
    assert response.status_code == 200
    return dict(response.json())


@pytest.fixture
def chunked(work: Work, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch) -> Work:
    """Every evaluation queued, 4 judge calls a chunk."""
    point_service_at(
        {"EVALSVC_INLINE_MAX_JUDGE_CALLS": "0", "EVALSVC_CHUNK_JUDGE_CALLS": "4"}, monkeypatch
    )
    return work


def test_a_queued_result_sums_the_usage_of_every_chunk(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work
) -> None:
    seed(acme, pairs=10)
    results_id = queued(acme, {"seed_data_id": "ds"})
    running = acme.get(f"/evaluation/{results_id}").json()
    assert running["status"] == "running" and running["usage"]["llm_calls"] == 0

    assert chunked.drain() == 3

    done = acme.get(f"/evaluation/{results_id}").json()
    assert done["status"] == "complete"
    input_tokens, output_tokens = reported(priced_judge)
    assert done["usage"]["llm_calls"] == 10
    assert (done["usage"]["input_tokens"], done["usage"]["output_tokens"]) == (
        input_tokens,
        output_tokens,
    )
    figures = month(acme)
    assert figures["llm_calls"] == 10
    assert figures["cost_usd"] == pytest.approx(done["usage"]["cost_usd"], rel=1e-9)
    assert figures["reserved_usd"] == 0.0


def test_a_retried_delivery_counts_what_each_delivery_spent(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One call at a time, and a judge that fails the third pair's every attempt once: the
    # chunk's first delivery spends verdicts and 4 failed attempts, then is requeued; its next
    # delivery finds those verdicts cached.
    point_service_at({"JUDGE_CONCURRENCY": "1"}, monkeypatch)
    seed(acme, pairs=4)
    priced_judge.answer = sequence(
        (200, VERDICT), (200, VERDICT), (500, "{}"), (500, "{}"), (500, "{}"), (500, "{}"),
        (200, VERDICT),
    )  # fmt: skip
    results_id = queued(acme, {"seed_data_id": "ds"})

    chunked.drain()

    done = acme.get(f"/evaluation/{results_id}").json()
    assert done["status"] == "complete", done
    assert done["usage"]["llm_calls"] == len(priced_judge.requests) == 2 + 4 + 2
    # The first delivery asked the fourth pair too while the third failed (the pool's one
    # worker took it up): the second delivery found 3 verdicts cached and made 1 call.
    assert done["usage"]["cache_hits"] == 3
    assert (done["usage"]["input_tokens"], done["usage"]["output_tokens"]) == reported(priced_judge)


class Killed(BaseException):
    """The worker's process stopped here: nothing after it runs (no finally block either)."""


def test_a_delivery_killed_mid_chunk_is_charged_what_it_kept_and_its_calls_in_flight(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.logic import jobs
    from evalsvc.storage import jobs as jobs_store

    # Given a chunk of 4 calls, one at a time, whose first delivery is killed once the judge
    # served its second call, before its usage was kept anywhere (the first call's was)
    point_service_at({"JUDGE_CONCURRENCY": "1"}, monkeypatch)
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
    point_service_at({"JUDGE_CONCURRENCY": "1"}, monkeypatch)
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


# ---- monthly limits ----------------------------------------------------------------------------


def test_a_request_past_the_limit_is_429_before_any_call(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme)
    spending.set_limit("acme", Decimal("0.0001"))

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 429
    error = response.json()["error"]
    assert "monthly limit of $0.000100" in error and "spending is $0" in error
    assert priced_judge.requests == []
    assert month(acme)["reserved_usd"] == 0.0


def test_within_the_limit_the_bound_is_reserved_then_settled_at_the_actual_cost(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme)
    spending.set_limit("acme", Decimal(5))

    usage = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]

    figures = month(acme)
    assert figures["limit_usd"] == 5.0
    assert figures["reserved_usd"] == 0.0
    assert figures["cost_usd"] == pytest.approx(usage["cost_usd"], rel=1e-9)
    stored = ledger.read_month("acme", spending.this_month())
    assert stored.reservations == {}
    assert stored.committed_usd == stored.spent_usd > 0


def test_a_limit_set_after_spending_began_holds_from_the_next_request(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme, pairs=1)
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200
    spending.set_limit("acme", Decimal(100))
    assert acme.post("/data/seed/ds/pair", {"id": "new", "input": "x", "output": "y"}).is_success

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    figures = month(acme)
    assert figures["llm_calls"] == 2 and figures["reserved_usd"] == 0.0
    stored = ledger.read_month("acme", spending.this_month())
    assert stored.committed_usd == stored.spent_usd


def test_spending_up_to_the_limit_refuses_what_would_pass_it(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme, pairs=1)
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200
    spent = Decimal(str(month(acme)["cost_usd"]))
    # A new pair costs up to one bound more: with half a bound of room left, it cannot fit.
    assert acme.post("/data/seed/ds/pair", {"id": "new", "input": "x", "output": "y"}).is_success
    figures = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()
    bound = Decimal(str(figures["cost_usd_max"]))
    spending.set_limit("acme", spent + bound / 2)

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 429
    assert "raise the limit" in response.json()["error"]
    assert "Retry-After" not in response.headers


# What the held work could use at most: 4 attempts, their tokens.
HELD = Usage(4, 0, 1_000, 100, "openai:fake-judge")


def hold(reservation: str, seconds: int) -> None:
    """A limit of $1, and $0.9999 of it held by other work, for `seconds` from now (in the
    past: work that died)."""
    spending.set_limit("acme", Decimal(1))
    held = ledger.Reservation(Decimal("0.9999"), int(time.time()) + seconds, HELD)
    assert ledger.reserve("acme", spending.this_month(), reservation, held, Decimal(1))


def test_room_held_by_work_in_flight_is_a_429_to_retry(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme)
    hold("rs_other", 600)

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 429
    assert "held by work in flight" in response.json()["error"]
    assert response.headers["Retry-After"] == "30"
    assert month(acme)["reserved_usd"] == pytest.approx(0.9999)


def test_a_crashed_workers_reservation_is_charged_in_full_when_it_expires(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme)
    hold("rs_dead", -1)  # a reservation whose work died: it expired a second ago
    # Expired: no longer held, but spent, with the most calls and tokens it could have used
    figures = month(acme)
    assert figures["reserved_usd"] == 0.0
    assert figures["cost_usd"] == pytest.approx(0.9999)
    assert (figures["llm_calls"], figures["input_tokens"], figures["output_tokens"]) == (
        4,
        1_000,
        100,
    )

    # So no room is left for more work, and the refused reservation wrote the charge
    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 429, response.text
    assert "raise the limit" in response.json()["error"]
    stored = ledger.read_month("acme", spending.this_month())
    assert stored.reservations == {}
    assert stored.spent_usd == stored.committed_usd == Decimal("0.9999")
    assert stored.usage.llm_calls == 4
    assert priced_judge.requests == []


def test_work_killed_before_it_settles_is_charged_its_rooms_without_a_limit_too(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a tenant with no limit, and work that held the rooms of its first calls and was
    # killed mid-call: 2 calls planned, 4 attempts each, one room each
    bound = Bound(
        calls=2,
        input_tokens_max=2_000,
        output_tokens_max=300,
        model="openai:fake-judge",
        attempts_max=8,
        attempt_input_max=300,
        attempt_output_max=40,
    )
    killed = spending.Spending("acme", "POST /evaluate", 0.0)
    killed.guard(bound)  # held; nothing after it runs, so nothing settles
    assert month(acme)["llm_calls"] == 0 and month(acme)["reserved_usd"] > 0

    # When its reservation has expired (its work's time and the grace are over)
    later = time.time() + spending.RESERVATION_GRACE_SECONDS + 1
    figures = ledger.read_month("acme", spending.this_month()).charged(later)

    # Then it counts as spent at the most its calls in flight could have used: one attempt of
    # each of its 2 calls, not all 8 attempts the whole work could make
    assert figures.usage.llm_calls == 2
    assert (figures.usage.input_tokens, figures.usage.output_tokens) == (600, 80)
    room = Usage(1, 0, 300, 40, "openai:fake-judge").cost()
    assert room is not None and figures.spent_usd == 2 * room < bound.cost_max()  # type: ignore[operator]
    assert figures.reservations == {}


def test_a_limit_with_a_model_without_a_price_is_503_before_any_call(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_PRICES": ""}, monkeypatch)
    seed(acme)
    spending.set_limit("acme", Decimal(10))

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 503
    assert "EVALSVC_PRICES" in response.json()["error"]
    assert priced_judge.requests == []


def test_deterministic_work_needs_no_room(acme: Tenant) -> None:
    seed(acme, metrics=["check:non_empty"])
    spending.set_limit("acme", Decimal(0))

    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200


def test_the_limit_holds_questions_and_augmentation_too(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme)
    spending.set_limit("acme", Decimal("0.000001"))

    assert acme.post("/questions", {"system_prompt": "Always say please."}).status_code == 429
    assert acme.post("/augment", {"seed_data_id": "ds"}).status_code == 429
    assert priced_judge.requests == []


def test_a_chunk_past_the_limit_fails_its_job_saying_why(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work
) -> None:
    seed(acme, pairs=5)
    results_id = queued(acme, {"seed_data_id": "ds"})
    spending.set_limit("acme", Decimal("0.000001"))  # lowered once the job was queued

    chunked.drain()

    failed = acme.get(f"/evaluation/{results_id}").json()
    assert failed["status"] == "failed"
    assert "monthly limit" in failed["failure"]
    assert priced_judge.requests == []


def test_a_chunk_waiting_for_room_held_by_others_is_requeued_not_failed(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work
) -> None:
    from evalsvc.logic import chunks

    seed(acme, pairs=2)
    results_id = queued(acme, {"seed_data_id": "ds"})
    hold("rs_other", 600)  # other work took the room once this job was queued

    chunked.deliver(1)

    assert acme.get(f"/evaluation/{results_id}").json()["status"] == "running"
    delayed = chunked.client.get_queue_attributes(
        QueueUrl=chunked.queue_url, AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )["Attributes"]["ApproximateNumberOfMessagesDelayed"]
    assert int(delayed) == 1  # back on the queue, after a pause of at least a minute
    assert chunks.OVER_LIMIT_PAUSE_SECONDS >= 60
    assert priced_judge.requests == []


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


def test_a_queued_run_is_held_to_what_is_left_of_its_max_cost(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work
) -> None:
    from evalsvc.logic.kinds.evaluation import EVALUATION
    from evalsvc.storage import jobs as jobs_store

    seed(acme, pairs=8)
    bound = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()["cost_usd_max"]
    results_id = queued(acme, {"seed_data_id": "ds", "max_cost_usd": bound})
    # Deliveries done again already spent nearly all of it (as timeouts or throttling would).
    job = jobs_store.get("acme", EVALUATION, results_id, params=True)
    assert job is not None and job.params["max_cost_usd"] == str(Decimal(str(bound)))
    plan = jobs_store.plan(job)
    spent = int(bound * 0.99 * 1e6 / 1.5)  # input tokens at $1.5 a million
    jobs_store.add_spent(plan[0], Usage(3, 0, spent, 0, "openai:fake-judge"))

    chunked.drain()

    failed = acme.get(f"/evaluation/{results_id}").json()
    assert failed["status"] == "failed", failed
    assert "max_cost_usd" in failed["failure"] and "left" in failed["failure"]
    assert priced_judge.requests == []


def test_a_queued_run_within_its_max_cost_completes(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work
) -> None:
    seed(acme, pairs=8)
    bound = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()["cost_usd_max"]
    results_id = queued(acme, {"seed_data_id": "ds", "max_cost_usd": bound})

    chunked.drain()

    done = acme.get(f"/evaluation/{results_id}").json()
    assert done["status"] == "complete", done
    assert done["usage"]["llm_calls"] == 8 and done["usage"]["cost_usd"] <= bound


def test_a_queued_run_that_cannot_fit_the_month_is_429_before_it_is_queued(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work
) -> None:
    seed(acme, pairs=5)
    spending.set_limit("acme", Decimal("0.000001"))

    response = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "ds"},
        headers={**acme.headers, "Prefer": "respond-async"},
    )

    assert response.status_code == 429, response.text
    assert "monthly limit" in response.json()["error"]
    assert chunked.waiting() == 0
    assert priced_judge.requests == []


@pytest.mark.parametrize("texts_read", [True, False], ids=["from-texts", "from-sizes"])
def test_a_queued_augmentation_that_cannot_fit_the_month_is_429_before_it_is_queued(
    acme: Tenant,
    priced_judge: FakeJudge,
    work: Work,
    monkeypatch: pytest.MonkeyPatch,
    texts_read: bool,
) -> None:
    # Given an augmentation that is queued (no generation call inside a request), bounded from
    # the seeds' texts or, when they are too large to read in a request, from their sizes
    point_service_at(
        {
            "EVALSVC_INLINE_MAX_GENERATION_CALLS": "0",
            **({} if texts_read else {"EVALSVC_INLINE_MAX_BYTES": "1"}),
        },
        monkeypatch,
    )
    seed(acme, pairs=5)
    spending.set_limit("acme", Decimal("0.000001"))

    # When it is asked for, answered at once or waited for
    asked = acme.http.post(
        "/v1/augment",
        json={"seed_data_id": "ds", "multiple": 2},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    plain = acme.post("/augment", {"seed_data_id": "ds", "multiple": 2})

    # Then both are refused at once, as an evaluation is: nothing queued, no call made
    for response in (asked, plain):
        assert response.status_code == 429, response.text
        assert "monthly limit" in response.json()["error"]
    assert work.waiting() == 0
    assert priced_judge.requests == []


def test_a_queued_augmentation_within_the_month_is_queued(
    acme: Tenant, priced_judge: FakeJudge, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_INLINE_MAX_GENERATION_CALLS": "0"}, monkeypatch)
    seed(acme, pairs=5)
    spending.set_limit("acme", Decimal("100"))

    response = acme.http.post(
        "/v1/augment",
        json={"seed_data_id": "ds", "multiple": 2},
        headers={**acme.headers, "Prefer": "respond-async"},
    )

    assert response.status_code == 202, response.text
    assert work.waiting() > 0
    assert priced_judge.requests == []


# ---- the default limit -------------------------------------------------------------------------


def default_limit(monkeypatch: pytest.MonkeyPatch, usd: str) -> None:
    point_service_at({"EVALSVC_DEFAULT_MONTHLY_LIMIT_USD": usd}, monkeypatch)


def test_a_tenant_without_a_limit_of_its_own_is_held_to_the_default(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme)
    default_limit(monkeypatch, "0.0001")

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 429
    error = response.json()["error"]
    assert "monthly limit of $0.000100 (the default for a tenant without a limit of its own)" in (
        error
    )
    assert priced_judge.requests == []
    figures = month(acme)
    assert (figures["limit_usd"], figures["limit_is_default"]) == (0.0001, True)
    # Another month shows the limit in force too.
    other = acme.get("/usage", params={"month": "1999-01"}).json()
    assert (other["limit_usd"], other["limit_is_default"]) == (0.0001, True)


def test_the_default_holds_queued_work_questions_and_augmentation(
    acme: Tenant, priced_judge: FakeJudge, chunked: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme)
    default_limit(monkeypatch, "0.000001")

    assert acme.post("/questions", {"system_prompt": "Always say please."}).status_code == 429
    assert acme.post("/augment", {"seed_data_id": "ds"}).status_code == 429
    refused = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "ds"},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert refused.status_code == 429, refused.text
    assert chunked.drain() == 0
    assert priced_judge.requests == []


def test_a_tenants_own_limit_overrides_the_default(
    acme: Tenant, globex: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme)
    seed(globex)
    default_limit(monkeypatch, "0.000001")
    spending.set_limit("acme", Decimal(100))

    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200
    assert globex.post("/evaluate", {"seed_data_id": "ds"}).status_code == 429
    figures = month(acme)
    assert (figures["limit_usd"], figures["limit_is_default"]) == (100.0, False)
    stored = ledger.read_month("acme", spending.this_month())
    assert stored.committed_usd == stored.spent_usd > 0


def test_unlimited_is_an_explicit_choice_distinct_from_no_limit_of_its_own(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme)
    default_limit(monkeypatch, "0.000001")

    spending.set_unlimited("acme")
    unlimited = acme.post("/questions", {"system_prompt": "Always say please."})
    figures = month(acme)
    stored = ledger.limit_of("acme")
    spending.clear_limit("acme")
    cleared = acme.post("/questions", {"system_prompt": "Always say please."})

    assert unlimited.status_code == 200, unlimited.text
    assert (figures["limit_usd"], figures["limit_is_default"]) == (None, False)
    assert stored == ledger.OwnLimit(None)
    assert ledger.limit_of("acme") is None
    assert cleared.status_code == 429
    assert month(acme)["limit_is_default"] is True


def test_a_limit_set_then_cleared_returns_to_the_default(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    default_limit(monkeypatch, "25")
    spending.set_limit("acme", Decimal(5))
    assert ledger.limit_of("acme") == ledger.OwnLimit(Decimal(5))
    assert (month(acme)["limit_usd"], month(acme)["limit_is_default"]) == (5.0, False)

    spending.clear_limit("acme")

    assert ledger.limit_of("acme") is None
    assert (month(acme)["limit_usd"], month(acme)["limit_is_default"]) == (25.0, True)


def test_without_a_default_a_tenant_without_a_limit_has_none(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALSVC_DEFAULT_MONTHLY_LIMIT_USD", raising=False)
    default_limit(monkeypatch, "")
    seed(acme)

    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200
    assert (month(acme)["limit_usd"], month(acme)["limit_is_default"]) == (None, False)


def test_the_default_with_a_model_without_a_price_is_503_naming_it(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_PRICES": ""}, monkeypatch)
    default_limit(monkeypatch, "100")
    seed(acme)

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 503
    error = response.json()["error"]
    assert "EVALSVC_PRICES" in error and "the default" in error
    assert priced_judge.requests == []
    spending.set_unlimited("acme")
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200


@pytest.mark.parametrize("bad", ["-1", "ten", "nan", "Infinity", "1e99"])
def test_a_malformed_default_is_refused_naming_the_setting(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    from evalsvc.settings import Settings

    monkeypatch.setenv("EVALSVC_DEFAULT_MONTHLY_LIMIT_USD", bad)

    with pytest.raises(ValueError, match="default_monthly_limit_usd"):
        Settings.from_environ()


def test_a_write_whose_answer_was_lost_is_found_applied_and_not_added_twice(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.errors import StorageUnavailable

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
