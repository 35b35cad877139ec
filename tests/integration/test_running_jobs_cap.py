"""At most EVALSVC_MAX_RUNNING_JOBS_PER_TENANT queued jobs running per tenant: past it, a request
that would queue is a 429 with Retry-After before anything is stored, while another tenant's
request goes through; a job frees its slot when it ends, however it ends."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from evalsvc.core.errors import TooManyJobs
from evalsvc.core.identifiers import now_ms
from evalsvc.core.settings import get_settings
from evalsvc.logic import jobs
from evalsvc.logic.kinds.evaluation import EVALUATION
from evalsvc.models.jobs import Job
from evalsvc.storage import dynamo
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage.writes import NONE
from evalsvc_tools.local.tables import table_env_vars

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, service_env
from tests.integration.conftest import Tenant
from tests.integration.test_queued_augmentation import augment_async
from tests.integration.test_queued_augmentation import seed as seed_seeds
from tests.integration.test_queued_evaluations import queue_async, read, seed
from tests.work_queue import Work

CAP = 2


@pytest.fixture(autouse=True)
def _cap(work: Work, monkeypatch: pytest.MonkeyPatch) -> None:
    point_service_at(
        {
            "EVALSVC_MAX_RUNNING_JOBS_PER_TENANT": str(CAP),
            "EVALSVC_CHUNK_CHECKS": "1500",  # 3 check metrics: 500 pairs a chunk
            "EVALSVC_INLINE_MAX_CHECKS": "300",
        },
        monkeypatch,
    )


def evaluate_async(tenant: Tenant, headers: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    return tenant.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "big"},
        headers={**tenant.headers, "Prefer": "respond-async", **(headers or {})},
    )


def stored_jobs(tenant: str) -> int:
    """Job items (and running results) of the tenant in storage."""
    names = table_env_vars()
    jobs_table, results_table = (
        f"test-{names['EVALSVC_JOBS_TABLE']}",
        f"test-{names['EVALSVC_RESULTS_TABLE']}",
    )
    found = sum(
        1
        for item in dynamo.scan_all(jobs_table)
        if item["pk"]["S"].startswith(f"T#{tenant}#J#") and item["sk"]["S"] == "job"
    )
    return found + sum(
        1 for item in dynamo.scan_all(results_table) if item["pk"]["S"].startswith(f"T#{tenant}#")
    )


def test_past_its_running_jobs_a_tenant_is_429_while_another_tenant_goes_on(
    acme: Tenant, globex: Tenant, work: Work
) -> None:
    # Given acme running as many queued evaluations as it may
    seed(acme, 1200)
    seed(globex, 1200)
    running = [queue_async(acme) for _ in range(CAP)]
    stored = stored_jobs("acme")

    # When acme asks for one more
    refused = evaluate_async(acme)

    # Then it is a 429 naming how many run, which, and what to do, with Retry-After
    assert refused.status_code == 429, refused.text
    message = refused.json()["error"]
    assert f"has {CAP} queued jobs running" in message
    assert all(results_id in message for results_id in running)
    assert "retry once one of them has ended" in message
    assert "EVALSVC_MAX_RUNNING_JOBS_PER_TENANT" in message
    assert int(refused.headers["Retry-After"]) > 0
    # and nothing was stored for it
    assert stored_jobs("acme") == stored
    # while globex's evaluation is queued all the same
    assert evaluate_async(globex).status_code == 202

    # Once acme's jobs are done, it may queue again
    work.drain()
    assert [read(acme, r)["status"] for r in running] == ["complete"] * CAP
    assert jobs_store.running("acme") == []
    assert evaluate_async(acme).status_code == 202


def test_a_plain_request_past_the_cap_is_refused_too(acme: Tenant, work: Work) -> None:
    seed(acme, 1200)
    for _ in range(CAP):
        queue_async(acme)
    waiting = work.waiting()

    refused = acme.post("/evaluate", {"seed_data_id": "big"})

    assert refused.status_code == 429, refused.text
    assert "Retry-After" in refused.headers
    assert work.waiting() == waiting  # no chunk of its own was queued


def test_an_augmentation_counts_and_is_refused_like_an_evaluation(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an LLM, so that augmenting 10 seeds is queued, and a tenant running one
    # evaluation and one augmentation
    fake = FakeJudge()
    with fake.running():
        point_service_at(
            {
                **service_env(fake),
                "EVALSVC_INLINE_MAX_GENERATION_CALLS": "4",
                "EVALSVC_CHUNK_GENERATION_CALLS": "3",
            },
            monkeypatch,
        )
        seed(acme, 1200)
        seed_seeds(acme)
        queue_async(acme)
        dataset_id = augment_async(acme)
        assert (EVALUATION, dataset_id) not in jobs_store.running("acme")
        assert ("augmentation", dataset_id) in jobs_store.running("acme")

        # When it asks for another augmentation, Then it is refused before any LLM call
        calls = len(fake.requests)
        refused = acme.http.post(
            "/v1/augment",
            json={"seed_data_id": "seeds", "multiple": 2, "target_metric": "Is it kind?"},
            headers={**acme.headers, "Prefer": "respond-async"},
        )
        assert refused.status_code == 429, refused.text
        assert f"augmentation {dataset_id!r}" in refused.json()["error"]
        assert len(fake.requests) == calls


def test_the_retry_of_a_request_finds_its_job_and_does_not_take_a_second_slot(
    acme: Tenant, work: Work
) -> None:
    # Given a tenant at its cap, one of whose jobs was started with an Idempotency-Key
    seed(acme, 1200)
    first = evaluate_async(acme, {"Idempotency-Key": "once"})
    assert first.status_code == 202, first.text
    queue_async(acme)

    # When the same request is sent again (its answer was lost, say)
    again = evaluate_async(acme, {"Idempotency-Key": "once"})

    # Then it finds its job: not refused, and counted once
    assert again.status_code == 202, again.text
    assert again.json()["eval_results_id"] == first.json()["eval_results_id"]
    assert len(jobs_store.running("acme")) == CAP


def test_a_stalled_job_frees_its_slot_when_the_sweeper_fails_it(acme: Tenant, work: Work) -> None:
    # Given a tenant at its cap, one of whose jobs lost its chunks for good
    seed(acme, 1200)
    stuck = queue_async(acme)
    work.lose_visible()
    queue_async(acme)
    assert evaluate_async(acme).status_code == 429

    # When the sweeper has queued its chunks again MAX_SWEEPS times, each lost, and fails it
    step = int(get_settings().job_stall_seconds * 1000) + 1
    for sweep in range(1, jobs.MAX_SWEEPS + 2):
        work.lose_visible()
        jobs.sweep(now_ms() + sweep * step)
    assert read(acme, stuck)["status"] == "failed"

    # Then the slots are free again (the other job's chunks were lost with them: it failed too)
    assert jobs_store.running("acme") == []
    assert evaluate_async(acme).status_code == 202


def test_a_job_failed_from_the_dead_letter_queue_frees_its_slot(acme: Tenant, work: Work) -> None:
    seed(acme, 600)
    results_id = queue_async(acme)
    job = jobs_store.get("acme", EVALUATION, results_id)
    assert job is not None and jobs_store.running("acme") == [(EVALUATION, results_id)]

    # When a chunk of it reaches the dead-letter queue
    jobs.give_up(jobs_store.plan(job)[0])

    assert read(acme, results_id)["status"] == "failed"
    assert jobs_store.running("acme") == []


def _job(job_id: str) -> Job:
    return Job(
        kind=EVALUATION,
        tenant="acme",
        job_id=job_id,
        chunk_count=1,
        pairs_total=1,
        created_ms=now_ms(),
        params={},
    )


@pytest.fixture
def no_sending(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(jobs.work_queue, "send", lambda *args, **kwargs: None)
    yield


def test_two_starts_racing_for_the_last_slot_cannot_both_take_it(acme: Tenant) -> None:
    # Given one slot left (both requests read the running set before either stored its job)
    pieces = jobs.cut(EVALUATION, "acme", "ev_a", ["0001"], 1)
    assert jobs_store.create(_job("ev_a"), pieces, NONE, room=CAP)

    # When two jobs are created against that room
    first = jobs_store.create(_job("ev_b"), pieces, NONE, room=CAP)
    second = jobs_store.create(_job("ev_c"), pieces, NONE, room=CAP)

    # Then only the first is stored
    assert (first, second) == (True, False)
    assert jobs_store.get("acme", EVALUATION, "ev_c") is None
    assert jobs_store.running("acme") == [(EVALUATION, "ev_a"), (EVALUATION, "ev_b")]


def test_work_handed_over_mid_request_may_pass_the_cap(acme: Tenant, no_sending: None) -> None:
    # Given a tenant at its cap
    for name in ("ev_a", "ev_b"):
        jobs.start(_job(name), jobs.cut(EVALUATION, "acme", name, ["0001"], 1), NONE, "again")
    with pytest.raises(TooManyJobs):
        jobs.start(_job("ev_c"), jobs.cut(EVALUATION, "acme", "ev_c", ["0001"], 1), NONE, "x")

    # When work begun inside a request is handed over, Then its job starts all the same
    with jobs.handing_over():
        started = jobs.start(
            _job("ev_d"), jobs.cut(EVALUATION, "acme", "ev_d", ["0001"], 1), NONE, "again"
        )
    assert started.job_id == "ev_d"
    assert len(jobs_store.running("acme")) == CAP + 1
    # and the cap holds for the next request
    with pytest.raises(TooManyJobs):
        jobs.start(_job("ev_e"), jobs.cut(EVALUATION, "acme", "ev_e", ["0001"], 1), NONE, "x")


def test_an_evaluation_handed_over_mid_request_is_not_refused_at_the_cap(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a tenant at its cap, and a judge too slow for 10 pairs x 1 question to be judged
    # within a 6 s request (1 s a call, 2 at a time, 3 s kept back to store the result)
    for name in ("ev_a", "ev_b"):
        jobs.start(_job(name), jobs.cut(EVALUATION, "acme", name, ["0001"], 1), NONE, "again")
    fake = FakeJudge(latency=1.0)
    with fake.running():
        point_service_at(
            {**service_env(fake), "EVALSVC_JUDGE_CONCURRENCY": "2", "EVALSVC_REQUEST_SECONDS": "6"},
            monkeypatch,
        )
        data = [{"id": f"p{i}", "input": f"q{i}", "output": f"please {i}"} for i in range(10)]
        assert acme.post("/data/seed/ds", {"data": data}).status_code == 200
        assert acme.post("/specify_questions", {"metrics": ["Is it kind?"]}).status_code == 200

        # When the evaluation, begun inside the request, does not fit it
        response = acme.post("/evaluate", {"seed_data_id": "ds"})

    # Then its work goes on in the queue (the calls made are not wasted), past the cap
    assert response.status_code == 503, response.text
    assert "goes on in the background" in response.json()["error"]
    results_id = response.headers["Location"].removeprefix("evaluation/")
    assert (EVALUATION, results_id) in jobs_store.running("acme")
    assert len(jobs_store.running("acme")) == CAP + 1
