"""Monitor runs (E8) through the job engine: a run evaluates, compares with its baseline (the
previous complete run, chained; or a fixed result), records what it found, and alerts its
webhook, signed, once, only on a regression or a failure. Runs claimed twice start once; an
alert whose worker died is delivered by the dispatcher; a run whose evaluation is queued waits
for it on the queue."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from evalsvc.logic import monitor_alerts, monitor_create, monitor_history, monitors
from evalsvc.logic.kinds import monitor_run
from evalsvc.logic.kinds.evaluation import EVALUATION
from evalsvc.models.api_keys import Identity
from evalsvc.models.monitors import Alert, MonitorIn, Run, run_id
from evalsvc.monitoring import webhooks
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage import monitors as store
from evalsvc.storage.writes import commit

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge
from tests.integration.conftest import Tenant
from tests.webhook_receiver import Receiver, receiver
from tests.work_queue import Work

ACME = Identity(tenant="acme", user="ann", user_email="", key_id="k")
SECRET = "a-secret-of-16-chars"
SHORT = "yes indeed"
# A pair_query no pair matches: every run of a monitor with it fails, saying why.
NO_PAIR = {"pair_labels": ["no-pair-has-this-label"]}
LONG = "this answer goes on for far more words than the check allows it to have"


@pytest.fixture
def hook(work: Work, monkeypatch: pytest.MonkeyPatch) -> Iterator[Receiver]:
    point_service_at(
        {"EVALSVC_ALLOW_LOCAL_WEBHOOKS": "1", "EVALSVC_MONITOR_POLL_SECONDS": "0"}, monkeypatch
    )
    with receiver() as server:
        yield server


def put_pairs(tenant: Tenant, outputs: list[str], dataset_id: str = "prod") -> None:
    data = [{"id": f"p{k:03d}", "input": f"q {k}", "output": o} for k, o in enumerate(outputs)]
    response = tenant.post(f"/data/seed/{dataset_id}", {"data": data})
    assert response.status_code == 200, response.text


def metrics_set(tenant: Tenant) -> str:
    answer = tenant.post("/specify_questions", {"metrics": ["check:max_words:6"]})
    assert answer.status_code == 200, answer.text
    metrics_id: str = answer.json()["metrics_id"]
    return metrics_id


def steady(count: int = 30) -> list[str]:
    """Mostly short outputs, a few long: a mean with some spread."""
    return [LONG if k % 10 == 0 else SHORT for k in range(count)]


def worse(count: int = 30) -> list[str]:
    """The same pairs, two thirds of them now too long."""
    return [LONG if k % 3 else SHORT for k in range(count)]


def create(tenant: Tenant, hook: Receiver | None, **fields: Any) -> str:
    body: dict[str, Any] = {
        "name": "prod quality",
        "seed_data_id": "prod",
        "metrics_id": metrics_set(tenant),
        "schedule": "rate(1 hour)",
    }
    if hook is not None:
        body |= {"webhook_url": hook.url, "webhook_secret": SECRET}
    return monitor_create.create(ACME, MonitorIn.model_validate(body | fields)).monitor_id


def run(monitor_id: str, work: Work) -> Run:
    run_id = monitors.run_now(ACME, monitor_id)
    work.drain()
    parsed = monitor_run.parse_run_id(run_id)
    assert parsed is not None
    found = store.get_run("acme", *parsed)
    assert found is not None
    return found


def test_a_regression_alerts_once_signed_and_a_steady_run_does_not(
    acme: Tenant, work: Work, hook: Receiver
) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, hook)

    first = run(monitor_id, work)
    assert first.status == "complete" and first.baseline_id is None
    assert [m.verdict for m in first.metrics] == [None]  # nothing to compare with
    assert first.alert is None and first.cost_usd == "0"

    second = run(monitor_id, work)  # the same pairs: steady
    assert second.baseline_id == first.result_id and second.result_id != first.result_id
    assert [m.verdict for m in second.metrics] == ["no_significant_difference"]
    assert second.pairs_matched == 30 and second.alert is None
    assert hook.posts == []

    put_pairs(acme, worse())  # the app's answers got longer
    third = run(monitor_id, work)
    assert third.baseline_id == second.result_id
    assert [m.verdict for m in third.metrics] == ["regressed"]
    # 18 pairs went from short to too long (a fall of 4 points, past the threshold of 1)
    assert [m.pairs_regressed for m in third.metrics] == [18]
    assert [m.pairs_regressed for m in first.metrics] == [None]
    assert third.metrics[0].mean < second.metrics[0].mean
    assert third.alert == Alert("delivered", 1, 200, 1, None)

    [post] = hook.posts
    assert post.signed_with(SECRET) and not post.signed_with(SECRET + "x")
    assert post.json() == {
        "monitor_id": monitor_id,
        "run_id": run_id(monitor_id, third.scheduled_ms),
        "result_id": third.result_id,
        "baseline_id": second.result_id,
        "regressed": ["check:max_words:6"],
        "failure": None,
    }


def test_a_fixed_baseline_is_every_runs_baseline(acme: Tenant, work: Work, hook: Receiver) -> None:
    put_pairs(acme, steady())
    evaluated = acme.post("/evaluate", {"seed_data_id": "prod", "metrics_id": metrics_set(acme)})
    assert evaluated.status_code == 200, evaluated.text
    fixed = evaluated.json()["eval_results_id"]
    monitor_id = create(acme, hook, baseline=fixed)
    runs = [run(monitor_id, work) for _ in range(2)]
    assert [r.baseline_id for r in runs] == [fixed, fixed]
    assert hook.posts == []


def test_a_failed_run_alerts_saying_why(acme: Tenant, work: Work, hook: Receiver) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, hook, pair_query=NO_PAIR)

    failed = run(monitor_id, work)

    assert failed.status == "failed" and failed.failure is not None
    assert "could not start" in failed.failure and "no pair matches" in failed.failure
    [post] = hook.posts
    assert post.signed_with(SECRET)
    assert post.json()["failure"] == failed.failure and post.json()["regressed"] == []
    assert failed.alert is not None and failed.alert.status == "delivered"


def test_a_run_without_a_webhook_records_its_regression_and_posts_nothing(
    acme: Tenant, work: Work, hook: Receiver
) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, None)
    run(monitor_id, work)
    put_pairs(acme, worse())
    regressed = run(monitor_id, work)
    assert regressed.regressed == [0] and regressed.alert is None
    assert hook.posts == []


def test_a_failed_run_is_not_the_previous_baseline(
    acme: Tenant, work: Work, hook: Receiver
) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, None)
    first = run(monitor_id, work)
    # A run after it that failed
    later = first.scheduled_ms + 1
    assert commit(store.claiming("acme", monitor_id, later, None, first.scheduled_ms))
    failed = Run("acme", monitor_id, later, "failed", failure="the judge was down")
    assert commit(store.ending(failed, later, alert=False))

    second = run(monitor_id, work)
    assert second.baseline_id == first.result_id


def test_an_alert_whose_worker_died_is_delivered_by_the_dispatcher(
    acme: Tenant, work: Work, hook: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, hook, pair_query=NO_PAIR)
    real = monitor_alerts.deliver_if_due
    monkeypatch.setattr(monitor_alerts, "deliver_if_due", lambda *args: None)  # died first

    failed = run(monitor_id, work)
    assert failed.alert is not None and failed.alert.status == "pending" and hook.posts == []

    monkeypatch.setattr(monitor_alerts, "deliver_if_due", real)
    at = (failed.finished_ms or 0) + 1
    first, again = monitors.dispatch(at), monitors.dispatch(at)
    assert (first.alerts, again.alerts) == (1, 0)
    assert len(hook.posts) == 1 and hook.posts[0].signed_with(SECRET)
    delivered = store.get_run("acme", monitor_id, failed.scheduled_ms)
    assert delivered is not None and delivered.alert is not None
    assert delivered.alert.status == "delivered"


def test_a_receiver_that_keeps_failing_is_recorded_failed(
    acme: Tenant, work: Work, hook: Receiver
) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, hook, pair_query=NO_PAIR)
    hook.answers = [500, 503, 500]
    failed = run(monitor_id, work)
    assert failed.alert is not None
    assert (failed.alert.status, failed.alert.attempts, failed.alert.http_status) == (
        "failed",
        3,
        500,
    )
    assert len(hook.posts) == 3


def test_a_run_whose_evaluation_is_queued_waits_for_it(
    acme: Tenant, work: Work, hook: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_INLINE_MAX_CHECKS": "10", "EVALSVC_CHUNK_CHECKS": "10"}, monkeypatch)
    put_pairs(acme, steady())
    monitor_id = create(acme, hook)
    first = run(monitor_id, work)
    put_pairs(acme, worse())
    second = run(monitor_id, work)
    assert first.status == second.status == "complete"
    assert second.regressed == [0] and len(hook.posts) == 1
    # Each evaluation was a job of its own, which the run waited on
    for ran in (first, second):
        assert ran.result_id is not None
        queued = jobs_store.get("acme", EVALUATION, ran.result_id)
        assert queued is not None and queued.chunk_count == 3


def test_a_run_claimed_twice_starts_once(acme: Tenant, work: Work, hook: Receiver) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, hook)
    _, stored = monitors.get(ACME, monitor_id)
    due = stored.next_run_ms
    first = monitors.dispatch(due)
    again = monitors.dispatch(due)  # the same dispatch, delivered again
    assert [c.monitor_id for c in first.claimed] == [monitor_id] and again.claimed == []
    work.drain()
    [ran] = list(store.runs("acme", monitor_id))
    assert ran.scheduled_ms == due and ran.status == "complete" and not ran.manual


def test_dispatchers_racing_start_each_run_once(acme: Tenant, work: Work, hook: Receiver) -> None:
    put_pairs(acme, steady())
    monitor_ids = [create(acme, hook) for _ in range(3)]
    due = max(monitors.get(ACME, m)[1].next_run_ms for m in monitor_ids)
    claimed: list[monitors.Claimed] = []
    lock = threading.Lock()
    gate = threading.Barrier(4)

    def dispatcher() -> None:
        gate.wait()
        report = monitors.dispatch(due)
        with lock:
            claimed.extend(report.claimed)

    threads = [threading.Thread(target=dispatcher) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(c.monitor_id for c in claimed) == sorted(monitor_ids)
    work.drain()
    for monitor_id in monitor_ids:
        [ran] = list(store.runs("acme", monitor_id))
        assert ran.status == "complete"
        job = jobs_store.get("acme", monitor_run.MONITOR_RUN, ran_id(ran))
        assert job is not None and job.chunks_done == 1


def ran_id(run: Run) -> str:
    return run_id(run.monitor_id, run.scheduled_ms)


def test_a_throttled_judge_delays_a_run_and_does_not_fail_it(
    acme: Tenant, work: Work, hook: Receiver, priced_judge: FakeJudge
) -> None:
    put_pairs(acme, steady(5))
    answer = acme.post("/specify_questions", {"metrics": ["Is the answer polite?"]})
    assert answer.status_code == 200, answer.text
    throttled = {"left": 6}  # more than one delivery's attempts (EVALSVC_JUDGE_MAX_ATTEMPTS: 4)
    real = priced_judge.answer

    def busy_then_real(request: dict[str, Any]) -> Any:
        if throttled["left"] > 0:
            throttled["left"] -= 1
            return (429, '{"error": "slow down"}')
        return real(request)

    priced_judge.answer = busy_then_real
    monitor_id = create(acme, hook, metrics_id=answer.json()["metrics_id"], max_cost_usd=1.0)

    ran = run(monitor_id, work)

    assert throttled["left"] == 0
    assert ran.status == "complete", ran.failure
    assert ran.cost_usd is not None and float(ran.cost_usd) > 0
    assert hook.posts == []


def test_an_alert_no_receiver_answered_is_kept_and_the_next_run_goes_on(
    acme: Tenant, work: Work, hook: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhooks, "RETRY_BASE_SECONDS", 0.01)
    put_pairs(acme, steady())
    nobody = "http://127.0.0.1:9/hook"  # nothing listens there
    monitor_id = create(acme, None, webhook_url=nobody, webhook_secret=SECRET)
    run(monitor_id, work)
    put_pairs(acme, worse())
    regressed = run(monitor_id, work)
    assert regressed.alert is not None
    assert (regressed.alert.status, regressed.alert.attempts, regressed.alert.http_status) == (
        "failed",
        3,
        None,
    )
    # its record reads back, in the history and as the next run's baseline
    page = monitor_history.history(ACME, monitor_id, 10, None)
    assert page.runs[0][0].scheduled_ms == regressed.scheduled_ms
    following = run(monitor_id, work)
    assert following.status == "complete" and following.baseline_id == regressed.result_id


def test_a_tenant_at_its_cap_has_its_other_due_runs_left_for_the_next_minute(
    acme: Tenant, work: Work, hook: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_MAX_RUNNING_JOBS_PER_TENANT": "1"}, monkeypatch)
    put_pairs(acme, steady())
    monitor_ids = [create(acme, hook) for _ in range(3)]
    due = max(monitors.get(ACME, m)[1].next_run_ms for m in monitor_ids)
    tried: list[str] = []

    def start(
        tenant: str, monitor_id: str, at: int, following: int | None, last: int | None
    ) -> bool:
        tried.append(monitor_id)
        return monitor_run.start(tenant, monitor_id, at, following, last)

    first = monitors.dispatch(due, start)
    # one claimed; the next refused (the tenant's one slot is taken); the third not tried
    assert (len(first.claimed), first.left, len(tried)) == (1, 2, 2)
    work.drain()
    second = monitors.dispatch(due + 1, start)
    assert (len(second.claimed), second.left) == (1, 1)
