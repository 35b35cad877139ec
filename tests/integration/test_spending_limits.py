"""E3: queued results sum their chunks' usage, and a tenant's monthly limit holds every
request and chunk, reserved before any call and settled after; work that dies before it
settles is charged in full (moto tables, the fake judge)."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

import pytest
from evalsvc.logic import spending
from evalsvc.spending.meter import Bound, Usage
from evalsvc.storage import ledger

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
    point_service_at({"EVALSVC_JUDGE_CONCURRENCY": "1"}, monkeypatch)
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
    from evalsvc.core.settings import Settings

    monkeypatch.setenv("EVALSVC_DEFAULT_MONTHLY_LIMIT_USD", bad)

    with pytest.raises(ValueError, match="default_monthly_limit_usd"):
        Settings.from_environ()
