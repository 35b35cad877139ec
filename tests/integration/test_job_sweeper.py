"""The job sweeper: a queued job whose work stopped moving (its request died between storing
the job and queueing its chunks, its messages were lost, its finisher died) is moved again
from its own state, or failed saying why. Nothing is left running forever."""

from __future__ import annotations

from typing import Any

import pytest
from evalsvc.core.identifiers import now_ms
from evalsvc.core.settings import get_settings
from evalsvc.logic import jobs
from evalsvc.logic.kinds.augmentation import AUGMENTATION
from evalsvc.logic.kinds.evaluation import EVALUATION
from evalsvc.models.jobs import Status
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage import work_queue

from tests.integration.conftest import Tenant
from tests.integration.test_queued_evaluations import (  # noqa: F401 (_small_limits: autouse)
    _small_limits,
    assert_same_statistics,
    inline_twin,
    queue_async,
    read,
    seed,
)
from tests.work_queue import Work


class Killed(Exception):
    """The request's process stopped here: nothing after it in the request runs (the job
    engine has no handler between storing a job and queueing its chunks)."""


def stalled_since_now() -> int:
    """A sweep's time at which every job running now counts as stalled."""
    return now_ms() + int(get_settings().job_stall_seconds * 1000) + 1


def sweeps_a_stall_apart() -> tuple[list[jobs.Sweep], int]:
    """MAX_SWEEPS + 1 sweeps, each a stall time after the last, every running job stalled at
    the first; and a time later than them all."""
    at = stalled_since_now()
    step = int(get_settings().job_stall_seconds * 1000) + 1
    count = jobs.MAX_SWEEPS + 1
    return [jobs.sweep(at_ms=at + k * step) for k in range(count)], at + 10 * step


def die_after_storing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The next job start stores its job and dies before queueing any chunk."""
    real = jobs_store.create

    def create_then_die(*args: Any, **kwargs: Any) -> bool:
        real(*args, **kwargs)
        monkeypatch.setattr(jobs_store, "create", real)
        raise Killed

    monkeypatch.setattr(jobs_store, "create", create_then_die)


def started_and_killed(tenant: Tenant, monkeypatch: pytest.MonkeyPatch, key: str) -> str:
    die_after_storing(monkeypatch)
    headers = {**tenant.headers, "Prefer": "respond-async", "Idempotency-Key": key}
    died = tenant.http.post("/v1/evaluate", json={"seed_data_id": "big"}, headers=headers)
    assert died.status_code == 500
    (stalled,) = list(jobs_store.stalled(stalled_since_now()))
    assert stalled[1] == EVALUATION
    return stalled[2]


def test_a_job_killed_between_stored_and_queued_is_queued_again_and_completes(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an evaluation whose request died after storing its job, before queueing a chunk
    seed(acme, 1200)
    results_id = started_and_killed(acme, monkeypatch, "killed-1")
    assert read(acme, results_id)["status"] == "running"
    assert work.waiting() == 0

    # A sweep before it has stalled leaves it alone
    assert jobs.sweep().resumed_jobs == 0

    # When the sweeper finds it stalled, then the workers drain the queue
    report = jobs.sweep(at_ms=stalled_since_now())
    assert (report.resumed_jobs, report.requeued_chunks) == (1, 3)
    work.drain()

    # Then it completed with the statistics of the same evaluation done inline, and the retry
    # of the request (same Idempotency-Key) finds that result
    done = read(acme, results_id, all_scores=True)
    assert (done["status"], done["pairs_done"]) == ("complete", 1200)
    retry = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "big"},
        headers={**acme.headers, "Prefer": "respond-async", "Idempotency-Key": "killed-1"},
    )
    assert retry.status_code == 200, retry.text
    assert retry.json()["eval_results_id"] == results_id
    assert retry.json()["status"] == "complete"
    assert_same_statistics(done, inline_twin(acme, monkeypatch))


def test_restarts_in_a_row_each_take_every_running_job_again(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a queued job, one of its chunks done, and then a local server killed and started
    # five times in a row, each time before any chunk finished (its queue is not kept)
    seed(acme, 1500)
    results_id = queue_async(acme)
    work.deliver(1)
    for _ in range(5):
        work.lose_visible()

        # When the server starts
        report = jobs.sweep(restart=True)

        # Then the job is taken again at once, its progress the time it was taken (never a
        # time to come), and a restart does not count as one of its sweeps
        assert (report.resumed_jobs, report.requeued_chunks) == (1, 2)
        job = jobs_store.get("acme", EVALUATION, results_id)
        assert job is not None and job.progress_ms <= now_ms() and job.sweeps == 0
        # and the periodic sweeper sees it as stalled one stall time later, not an hour
        assert jobs.sweep().resumed_jobs == 0

    stall_ms = int(get_settings().job_stall_seconds * 1000)
    work.lose_visible()
    assert jobs.sweep(at_ms=now_ms() + stall_ms + 1).resumed_jobs == 1

    # And after the last start, the workers finish it
    work.drain()
    done = read(acme, results_id)
    assert (done["status"], done["pairs_done"]) == ("complete", 1500)


def test_only_the_missing_chunks_are_queued_again(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme, 1500)
    results_id = queue_async(acme)
    work.deliver(2)  # two of three chunks done, the third message lost
    work.client.purge_queue(QueueUrl=work.queue_url)
    assert read(acme, results_id)["pairs_done"] == 1000

    report = jobs.sweep(at_ms=stalled_since_now())

    assert report.requeued_chunks == 1
    work.drain()
    assert read(acme, results_id)["status"] == "complete"


def test_a_job_that_never_moves_fails_saying_why_after_its_sweeps(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a job whose chunks are lost however often they are queued
    seed(acme, 600)
    results_id = queue_async(acme)
    work.client.purge_queue(QueueUrl=work.queue_url)
    monkeypatch.setattr(work_queue, "send", lambda *args, **kwargs: None)

    # When it is swept, stalled, again and again
    reports, later = sweeps_a_stall_apart()

    # Then it was queued again MAX_SWEEPS times, then failed with the reason
    assert [r.resumed_jobs for r in reports] == [1] * jobs.MAX_SWEEPS + [0]
    assert reports[-1].failed_jobs == 1
    failed = read(acme, results_id)
    assert failed["status"] == "failed"
    assert "no progress for 30 minutes" in failed["failure"]
    assert f"queued again {jobs.MAX_SWEEPS} times" in failed["failure"]
    # An ended job leaves the sweeper's index
    assert not [j for j in jobs_store.stalled(later) if j[2] == results_id]


def test_a_job_whose_finisher_died_is_finished_by_the_sweeper(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme, 1000)
    finishes: list[str] = []
    monkeypatch.setattr(jobs, "finish", lambda tenant, kind, job_id: finishes.append(job_id))
    results_id = queue_async(acme)
    work.drain()
    assert finishes and read(acme, results_id)["status"] == "running"
    monkeypatch.undo()

    report = jobs.sweep(at_ms=stalled_since_now())

    assert report.finished_jobs == 1
    assert read(acme, results_id)["status"] == "complete"


def test_a_job_whose_completion_keeps_failing_fails_after_its_sweeps_and_frees_its_slot(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a job whose every chunk is counted but whose completion never ends it
    seed(acme, 1000)
    monkeypatch.setattr(jobs, "finish", lambda tenant, kind, job_id: None)
    results_id = queue_async(acme)
    work.drain()
    assert read(acme, results_id)["status"] == "running"
    assert (EVALUATION, results_id) in jobs_store.running(acme.name)

    # When it is swept, stalled, again and again
    reports, _ = sweeps_a_stall_apart()

    # Then completing it was tried MAX_SWEEPS times, then it failed saying so
    assert [r.finished_jobs for r in reports] == [1] * jobs.MAX_SWEEPS + [0]
    assert reports[-1].failed_jobs == 1
    failed = read(acme, results_id)
    assert failed["status"] == "failed"
    assert f"could not be completed in {jobs.MAX_SWEEPS} tries" in failed["failure"]
    # and the tenant's slot among its running jobs is free again
    assert (EVALUATION, results_id) not in jobs_store.running(acme.name)


def test_an_augmentation_killed_between_stored_and_queued_completes_after_a_sweep(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = [{"id": f"s{i}", "input": f"question {i}", "output": "answer"} for i in range(10)]
    assert acme.post("/data/seed/seeds", {"data": data}).status_code == 200
    die_after_storing(monkeypatch)
    died = acme.http.post(
        "/v1/augment",
        json={"seed_data_id": "seeds", "multiple": 2},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert died.status_code == 500
    (stalled,) = list(jobs_store.stalled(stalled_since_now()))
    assert stalled[1] == AUGMENTATION
    assert acme.get(f"/data/synthetic/{stalled[2]}").status_code == 503

    jobs.sweep(at_ms=stalled_since_now())
    work.drain()

    done = acme.get(f"/data/synthetic/{stalled[2]}")
    assert done.status_code == 200, done.text
    assert len(done.json()["data"]) == 20
    job = jobs.get("acme", AUGMENTATION, stalled[2])
    assert job is not None and job.status is Status.COMPLETE
