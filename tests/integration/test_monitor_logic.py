"""Monitors (E8), their logic: what creating one checks beyond the body, and the dispatcher
claiming each due run once (a dispatch delivered twice, an outage not made up)."""

from __future__ import annotations

import pytest
from evalsvc.core.errors import InvalidInput, NotFound
from evalsvc.core.settings import reset_settings
from evalsvc.logic import monitor_create, monitors
from evalsvc.models.api_keys import Identity
from evalsvc.models.monitors import MonitorIn
from evalsvc.storage import monitors as monitor_store

from tests.conftest import point_service_at
from tests.integration.conftest import Tenant

MINUTE = 60_000
T0 = 1_795_000_000_000 // (60 * MINUTE) * (60 * MINUTE)  # on the hour
ACME = Identity(tenant="acme", user="ann", user_email="", key_id="k")


def body(**fields: object) -> MonitorIn:
    named = {"metrics_id": SETS.get(str(fields.get("metrics_id", "checks")), "nope")}
    return MonitorIn.model_validate(
        {"name": "n", "seed_data_id": "ds", "schedule": "rate(1 hour)"} | fields | named
    )


SETS: dict[str, str] = {}


@pytest.fixture
def metric_sets(acme: Tenant) -> None:
    """Seed dataset "ds", and two metrics sets: "checks" (checks only) and "asks" (a question
    for the judge)."""
    written = acme.post("/data/seed/ds", {"data": [{"id": "p1", "input": "q", "output": "a"}]})
    assert written.status_code == 200, written.text
    for name, metrics in (("checks", ["check:max_words:6"]), ("asks", ["Is it polite?"])):
        answer = acme.post("/specify_questions", {"metrics": metrics})
        assert answer.status_code == 200, answer.text
        SETS[name] = answer.json()["metrics_id"]


def test_a_monitor_is_scheduled_from_its_creation(metric_sets: None) -> None:
    created = monitor_create.create(ACME, body(schedule="rate(15 minutes)"), at_ms=T0 + 7 * MINUTE)
    assert created.next_run_ms == T0 + 22 * MINUTE
    asked, stored = monitors.get(ACME, created.monitor_id)
    assert asked.schedule == "rate(15 minutes)" and asked.pair_query.latest_n_pairs == 200
    assert stored.created_ms == T0 + 7 * MINUTE
    with pytest.raises(NotFound):
        monitors.get(Identity("other", "bo", "", "k"), created.monitor_id)


def test_a_judged_metrics_set_needs_a_cap_and_a_priced_judge(
    metric_sets: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(InvalidInput) as caught:
        monitor_create.create(ACME, body(metrics_id="asks"), at_ms=T0)
    assert "max_cost_usd is required" in caught.value.message
    capped = body(metrics_id="asks", max_cost_usd=0.5)
    point_service_at({"EVALSVC_LLM": ""}, monkeypatch)
    with pytest.raises(InvalidInput) as caught:
        monitor_create.create(ACME, capped, at_ms=T0)
    assert "no judge is configured" in caught.value.message
    point_service_at({"EVALSVC_LLM": "openai:unpriced-model"}, monkeypatch)
    with pytest.raises(InvalidInput) as caught:
        monitor_create.create(ACME, capped, at_ms=T0)
    assert "'openai:unpriced-model' has no price" in caught.value.message
    prices = '{"openai:unpriced-model": {"input": 1, "output": 2}}'
    point_service_at({"EVALSVC_PRICES": prices}, monkeypatch)
    assert monitor_create.create(ACME, capped, at_ms=T0)
    # checks alone need neither
    point_service_at({"EVALSVC_LLM": ""}, monkeypatch)
    assert monitor_create.create(ACME, body(metrics_id="checks"), at_ms=T0)


def test_a_fixed_baseline_must_be_a_result_of_the_tenant(metric_sets: None) -> None:
    with pytest.raises(NotFound):
        monitor_create.create(ACME, body(baseline="ev_missing"), at_ms=T0)
    with pytest.raises(NotFound):
        monitor_create.create(ACME, body(metrics_id="nope"), at_ms=T0)


def test_a_monitor_of_no_dataset_is_refused_and_of_the_latest_one_kept(
    metric_sets: None,
) -> None:
    with pytest.raises(NotFound) as caught:
        monitor_create.create(ACME, body(seed_data_id="ds_nope"), at_ms=T0)
    assert caught.value.message == "no seed dataset with id 'ds_nope'"
    assert monitor_store.list_monitors("acme") == []
    # "latest" names the tenant's newest seed dataset at each run: one exists
    assert monitor_create.create(ACME, body(seed_data_id="latest"), at_ms=T0)


def test_a_monitor_of_the_latest_dataset_needs_one(acme: Tenant) -> None:
    checks = acme.post("/specify_questions", {"metrics": ["check:max_words:6"]})
    assert checks.status_code == 200, checks.text
    sent = body(seed_data_id="latest").model_copy(
        update={"metrics_id": checks.json()["metrics_id"]}
    )
    with pytest.raises(NotFound) as caught:
        monitor_create.create(ACME, sent, at_ms=T0)
    assert caught.value.message == "there is no seed dataset yet"


def test_a_webhook_to_this_machine_needs_local_webhooks_allowed(
    metric_sets: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = {"webhook_url": "http://127.0.0.1:9/hook", "webhook_secret": "0123456789abcdef"}
    with pytest.raises(InvalidInput) as caught:
        monitor_create.create(ACME, body(**hook), at_ms=T0)
    assert "only https" in caught.value.message
    monkeypatch.setenv("EVALSVC_ALLOW_LOCAL_WEBHOOKS", "1")
    reset_settings()
    assert monitor_create.create(ACME, body(**hook), at_ms=T0)


class Starts:
    """A stand-in for starting a run's job: claims as the real start does, records the runs."""

    def __init__(self) -> None:
        self.runs: list[monitors.Claimed] = []

    def __call__(
        self, tenant: str, monitor_id: str, at: int, following: int | None, last: int | None
    ) -> bool:
        assert following is not None
        if not monitor_store.claim_run(tenant, monitor_id, at, following, last):
            return False
        self.runs.append(monitors.Claimed(tenant, monitor_id, at))
        return True


def test_a_dispatch_delivered_twice_starts_each_run_once(metric_sets: None) -> None:
    first = monitor_create.create(ACME, body(schedule="rate(1 hour)"), at_ms=T0)
    started = Starts()

    assert monitors.dispatch(T0 + 30 * MINUTE, started).claimed == []  # not due yet
    due = T0 + 60 * MINUTE
    claimed = monitors.dispatch(due, started).claimed
    again = monitors.dispatch(due, started).claimed

    assert claimed == [monitors.Claimed("acme", first.monitor_id, due)] and again == []
    assert started.runs == claimed


def test_runs_missed_in_an_outage_are_not_made_up(metric_sets: None) -> None:
    created = monitor_create.create(ACME, body(schedule="rate(1 hour)"), at_ms=T0)
    started = Starts()
    # Nothing dispatched for 5 hours: one run, for the time it was due, then the next hour
    monitors.dispatch(T0 + 5 * 60 * MINUTE + 30_000, started)
    monitors.dispatch(T0 + 5 * 60 * MINUTE + 90_000, started)
    assert [run.scheduled_ms for run in started.runs] == [T0 + 60 * MINUTE]
    _, stored = monitors.get(ACME, created.monitor_id)
    assert stored.next_run_ms == T0 + 6 * 60 * MINUTE
