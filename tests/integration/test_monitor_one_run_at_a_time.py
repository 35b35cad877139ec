"""A monitor (E8) runs one run at a time: runs asked for at once start one, the others a 409
naming it; a run asked for while any run of the monitor runs is a 409 naming that run; a
scheduled run due meanwhile is skipped, its schedule moved on. What holds the monitor is the
run's record: its own end, or the job engine failing it, frees the monitor; so does a run
whose end was lost, once it is past models.monitors.HOLD_MS."""

from __future__ import annotations

import threading
from typing import Any

import boto3
import pytest
from evalsvc.core.errors import AlreadyRunning, Failure, StorageUnavailable
from evalsvc.core.identifiers import now_ms
from evalsvc.core.settings import get_settings
from evalsvc.logic import jobs, monitors
from evalsvc.logic.kinds import monitor_run
from evalsvc.models.monitors import HOLD_MS, Run
from evalsvc.models.monitors import run_id as run_id_of
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage import monitors as store

from tests.integration.conftest import Tenant, ok
from tests.integration.test_monitor_runs import ACME, create, hook, put_pairs, steady
from tests.work_queue import Work

__all__ = ["hook"]  # the fixture, for the tests that run their runs

ASKING = 10


def ask_run(tenant: Tenant, monitor_id: str) -> Any:
    return tenant.post(f"/monitors/{monitor_id}/run")


def assert_refused_naming(answer: Any, run_id: str) -> None:
    """A 409 that names the running run in its message and in run_id."""
    assert answer.status_code == 409, answer.text
    body = answer.json()
    assert set(body) == {"error", "run_id"} and body["run_id"] == run_id
    assert f"is running its run {run_id!r}" in body["error"]
    assert "runs one run at a time" in body["error"]


def runs_of(monitor_id: str) -> list[Run]:
    return list(store.runs("acme", monitor_id))


# ---- at once -------------------------------------------------------------------------------------


def test_runs_asked_for_at_once_start_one_and_the_others_are_409s_naming_it(
    served_tables: dict[str, str], acme: Tenant
) -> None:
    # Given a monitor (its storage a server, safe under concurrent requests)
    put_pairs(acme, steady())
    metrics_id = ok(acme.post("/specify_questions", {"metrics": ["check:max_words:6"]}))
    body = {
        "name": "prod",
        "seed_data_id": "prod",
        "metrics_id": metrics_id.json()["metrics_id"],
        "schedule": "rate(1 hour)",
    }
    monitor_id = ok(acme.post("/monitors", body), 201).json()["monitor_id"]
    answers: list[Any] = []
    lock = threading.Lock()
    gate = threading.Barrier(ASKING)

    def asker() -> None:
        gate.wait()
        answer = ask_run(acme, monitor_id)
        with lock:
            answers.append(answer)

    # When ten runs are asked for at once
    threads = [threading.Thread(target=asker) for _ in range(ASKING)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    # Then one started, and each other answer is a 409 naming it
    started = [a for a in answers if a.status_code == 202]
    assert len(started) == 1, [a.text for a in answers]
    run_id = started[0].json()["run_id"]
    for answer in answers:
        if answer is not started[0]:
            assert_refused_naming(answer, run_id)
    # …and one run, with one job, is all there is
    [only] = runs_of(monitor_id)
    assert run_id_of(monitor_id, only.scheduled_ms) == run_id and only.manual
    running = [job for kind, job in jobs_store.running("acme") if kind == monitor_run.MONITOR_RUN]
    assert running == [run_id]


def test_a_claim_made_on_a_stale_read_of_the_monitor_claims_nothing(
    acme: Tenant, work: Work
) -> None:
    # Given a monitor read (no run yet), then run by another request meanwhile
    put_pairs(acme, steady())
    monitor_id = create(acme, None)
    _, read = monitors.get(ACME, monitor_id)
    first = monitors.run_now(ACME, monitor_id)

    # When a run is claimed on what was read, the claim fails and writes nothing
    with pytest.raises(StorageUnavailable):
        monitor_run.start("acme", monitor_id, now_ms() + 5, None, read.last_run_ms)
    assert [run_id_of(monitor_id, r.scheduled_ms) for r in runs_of(monitor_id)] == [first]


# ---- while a run runs ----------------------------------------------------------------------------


def test_a_run_asked_for_while_a_scheduled_one_runs_is_a_409_until_it_ends(
    acme: Tenant, work: Work, hook: Any
) -> None:
    # Given a monitor whose scheduled run is running (claimed, not yet done by a worker)
    put_pairs(acme, steady())
    monitor_id = create(acme, hook)
    _, stored = monitors.get(ACME, monitor_id)
    assert len(monitors.dispatch(stored.next_run_ms).claimed) == 1
    scheduled = run_id_of(monitor_id, stored.next_run_ms)

    # When a run is asked for, it is refused naming the scheduled run, and nothing is stored
    refused = ask_run(acme, monitor_id)
    assert_refused_naming(refused, scheduled)
    assert "(scheduled, for " in refused.json()["error"]
    assert len(runs_of(monitor_id)) == 1

    # Then once that run has ended, one asked for starts
    work.drain()
    assert [r.status for r in runs_of(monitor_id)] == ["complete"]
    started = ask_run(acme, monitor_id)
    assert started.status_code == 202, started.text
    # …and one asked for while that one runs names it, as manual
    again = ask_run(acme, monitor_id)
    assert_refused_naming(again, started.json()["run_id"])
    assert "(asked for, for " in again.json()["error"]


def test_a_scheduled_run_due_while_another_runs_is_skipped_and_the_next_one_runs(
    acme: Tenant, work: Work, hook: Any
) -> None:
    # Given a run asked for, still running when the monitor's scheduled run comes due
    put_pairs(acme, steady())
    monitor_id = create(acme, hook)
    manual = monitors.run_now(ACME, monitor_id)
    _, stored = monitors.get(ACME, monitor_id)
    due = stored.next_run_ms

    # When the dispatcher runs then (and again: a second delivery)
    first, again = monitors.dispatch(due), monitors.dispatch(due)

    # Then the due run is skipped, once: no run of that time, the schedule moved an hour on
    assert first.claimed == [] and first.skipped == [monitors.Claimed("acme", monitor_id, due)]
    assert again.claimed == again.skipped == []
    assert [run_id_of(monitor_id, r.scheduled_ms) for r in runs_of(monitor_id)] == [manual]
    _, moved = monitors.get(ACME, monitor_id)
    assert moved.next_run_ms == due + 3_600_000
    # …and once the run asked for has ended, the next scheduled run is claimed
    work.drain()
    assert [c.scheduled_ms for c in monitors.dispatch(moved.next_run_ms).claimed] == [
        moved.next_run_ms
    ]


def test_a_run_asked_for_at_the_very_time_one_is_due_is_that_times_run(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a run asked for at the millisecond the monitor's scheduled run is due, ended
    put_pairs(acme, steady())
    monitor_id = create(acme, None)
    _, stored = monitors.get(ACME, monitor_id)
    due = stored.next_run_ms
    monkeypatch.setattr(monitors, "now_ms", lambda: due)
    assert monitors.run_now(ACME, monitor_id) == run_id_of(monitor_id, due)
    work.drain()

    # When the dispatcher comes to that time, it skips it (the run of that time was made),
    # and the schedule moves on: it is not left due
    report = monitors.dispatch(due)
    assert report.claimed == [] and [s.scheduled_ms for s in report.skipped] == [due]
    _, moved = monitors.get(ACME, monitor_id)
    assert moved.next_run_ms == due + 3_600_000
    assert [(r.scheduled_ms, r.manual) for r in runs_of(monitor_id)] == [(due, True)]


# ---- what ends a run's hold ----------------------------------------------------------------------


def test_a_run_the_job_engine_failed_no_longer_holds_its_monitor(
    acme: Tenant, work: Work, hook: Any
) -> None:
    # Given a run whose worker died (its message lost), then failed by the engine (the sweeper
    # or the dead-letter queue)
    put_pairs(acme, steady())
    monitor_id = create(acme, None)
    dead = monitors.run_now(ACME, monitor_id)
    assert work.lose_visible() == 1
    assert_refused_naming(ask_run(acme, monitor_id), dead)
    assert jobs.fail("acme", monitor_run.MONITOR_RUN, dead, Failure("the worker died"))
    [failed] = runs_of(monitor_id)
    assert (failed.status, failed.failure) == ("failed", "the worker died")

    # When a run is asked for, it starts, and runs
    started = ask_run(acme, monitor_id)
    assert started.status_code == 202, started.text
    work.drain()
    assert runs_of(monitor_id)[0].status == "complete"


def test_a_run_whose_end_was_lost_holds_its_monitor_no_longer_than_hold_ms(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a run that never ended (its job and its record left running)
    put_pairs(acme, steady())
    monitor_id = create(acme, None)
    lost = monitors.run_now(ACME, monitor_id)
    assert work.lose_visible() == 1
    parsed = monitor_run.parse_run_id(lost)
    assert parsed is not None
    held_until = parsed[1] + HOLD_MS

    # When a run is asked for before HOLD_MS has passed, it is refused
    monkeypatch.setattr(monitors, "now_ms", lambda: held_until)
    with pytest.raises(AlreadyRunning):
        monitors.run_now(ACME, monitor_id)
    # …and after, it starts
    monkeypatch.setattr(monitors, "now_ms", lambda: held_until + 1)
    later = monitors.run_now(ACME, monitor_id)
    assert later == run_id_of(monitor_id, held_until + 1)
    assert [r.status for r in runs_of(monitor_id)] == ["claimed", "claimed"]


def test_a_monitor_that_named_no_last_run_is_held_by_its_newest_running_run(
    acme: Tenant, work: Work
) -> None:
    # Given a run claimed before monitors named their last run (the mark removed)
    put_pairs(acme, steady())
    monitor_id = create(acme, None)
    running = monitors.run_now(ACME, monitor_id)
    boto3.client("dynamodb").update_item(
        TableName=get_settings().monitors_table,
        Key={"pk": {"S": "T#acme"}, "sk": {"S": store.monitor_sk(monitor_id)}},
        UpdateExpression="REMOVE last_run_ms",
    )
    _, stored = monitors.get(ACME, monitor_id)
    assert stored.last_run_ms is None

    # When a run is asked for, it is refused naming that run; once it ended, one starts
    assert_refused_naming(ask_run(acme, monitor_id), running)
    work.drain()
    assert ask_run(acme, monitor_id).status_code == 202
