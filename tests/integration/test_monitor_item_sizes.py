"""A monitor (E8) and the record of its run stay under DynamoDB's 400 KB item limit with every
field at its limit, in 4-byte UTF-8 wherever text is allowed: the monitor as POST /monitors
stores it, and a run ended with the most metrics, the longest failure and its alert, through
each state of the alert. The items are measured as DynamoDB counts them, read back from moto
(which refuses an item over the limit too); the run is read back whole through GET
/monitors/{id}/history.

The tenant is as long as a tenant may be, and so are the ids the service makes (monitors,
metrics sets, results: made 128 characters long here, the longest id a client may name), so
that every key is at its longest too."""

from __future__ import annotations

import dataclasses
from typing import Any

import boto3
import pytest
from evalsvc.core.identifiers import new_id
from evalsvc.logic import api_keys, evaluations, metric_set_create, monitor_create
from evalsvc.logic.pairs_digest import definitions_sha256
from evalsvc.models.datasets import MAX_LABEL_CHARS, MAX_LABELS, MAX_LAST_N_SECONDS, MAX_PAIRS
from evalsvc.models.metric_sets import MAX_DEFINITION_CHARS, MAX_DEFINITIONS
from evalsvc.models.monitors import MAX_NAME_CHARS, MAX_SECRET_CHARS, Run, RunMetric
from evalsvc.monitoring.schedules import MAX_SCHEDULE_CHARS
from evalsvc.monitoring.webhook_targets import MAX_URL_CHARS
from evalsvc.storage import monitors as store
from evalsvc.storage.dynamo import item_size
from evalsvc.storage.writes import commit
from fastapi.testclient import TestClient

from tests.conftest import point_service_at
from tests.integration.conftest import Tenant, ok
from tests.integration.test_item_sizes import ITEM_LIMIT, send, wide

LONGEST_TENANT = "t" + "x" * 127
SCHEDULED_MS = 1_767_225_600_000


def longest_id(prefix: str = "") -> str:
    made = new_id(prefix)
    return made + "x" * (128 - len(made))


@pytest.fixture
def widest(http: TestClient, monkeypatch: pytest.MonkeyPatch) -> Tenant:
    """A client of the longest tenant, whose monitors, metrics sets and results get ids of 128
    characters, and whose webhooks may be local."""
    for module in (monitor_create, metric_set_create, evaluations):
        monkeypatch.setattr(module, "new_id", longest_id)
    point_service_at({"EVALSVC_ALLOW_LOCAL_WEBHOOKS": "1"}, monkeypatch)
    key, _ = api_keys.create_key(LONGEST_TENANT, "ann", "ann@acme.test")
    return Tenant(http, LONGEST_TENANT, key)


def schema_check(k: int) -> str:
    """A check of the longest definition, most of it 4-byte text: a JSON schema whose
    description is long."""
    head = 'check:json_schema:{"type":"object","description":"' + f"{k:02d}"
    return head + wide(MAX_DEFINITION_CHARS - len(head) - 2) + '"}'


def stored(tables: dict[str, str], sk: str) -> dict[str, Any]:
    """The item as moto keeps it."""
    client = boto3.client("dynamodb", region_name="us-east-1")
    found = client.get_item(
        TableName=tables["EVALSVC_MONITORS_TABLE"],
        Key={"pk": {"S": store.tenant_pk(LONGEST_TENANT)}, "sk": {"S": sk}},
        ConsistentRead=True,
    )
    item: dict[str, Any] = found["Item"]
    return item


def test_a_monitor_and_its_run_at_every_field_limit_stay_under_the_item_limit(
    widest: Tenant, tables: dict[str, str]
) -> None:
    # Given a dataset of the longest id whose pairs carry the most labels at their longest, a
    # metrics set of the most checks at their longest, and an evaluation of it
    dataset_id = "d" + "x" * 127
    labels = [f"{k:02d}" + wide(MAX_LABEL_CHARS - 2) for k in range(MAX_LABELS)]
    pairs = [{"id": f"p{k}", "input": "q", "output": "{}", "labels": labels} for k in range(3)]
    ok(send(widest, "POST", f"/data/seed/{dataset_id}", {"data": pairs}))
    definitions = [schema_check(k) for k in range(MAX_DEFINITIONS)]
    specified = ok(send(widest, "POST", "/specify_questions", {"metrics": definitions}))
    metrics_id = specified.json()["metrics_id"]
    evaluated = ok(
        send(widest, "POST", "/evaluate", {"seed_data_id": dataset_id, "metrics_id": metrics_id})
    )
    result_id = evaluated.json()["eval_results_id"]
    assert len(metrics_id) == len(result_id) == 128

    # When a monitor is created with every field at its limit
    schedule = "0 * * * *"
    body = {
        "name": wide(MAX_NAME_CHARS),
        "seed_data_id": dataset_id,
        "metrics_id": metrics_id,
        # Padded with U+3000, whitespace a cron takes, 3 bytes in UTF-8 and 6 in a JSON escape
        "schedule": schedule + "\u3000" * (MAX_SCHEDULE_CHARS - len(schedule)),
        "pair_query": {
            "latest_n_pairs": MAX_PAIRS,
            "pair_labels": labels,
            "last_n_seconds": MAX_LAST_N_SECONDS,
        },
        "baseline": result_id,
        "alpha": 0.012345678901234567,
        "regression_threshold": 1.2345678901234567e-05,
        "max_cost_usd": 0.12345678901234568,
        # a URL is ASCII (a path's other characters percent-encoded): its longest is 2,000
        "webhook_url": "http://127.0.0.1:9/" + "%F0" * ((MAX_URL_CHARS - 19) // 3),
        "webhook_secret": wide(MAX_SECRET_CHARS),
    }
    created = send(widest, "POST", "/monitors", body)
    assert created.status_code == 201, created.text[:300]
    monitor_id = created.json()["monitor_id"]
    assert len(monitor_id) == 128

    # Then the monitor item is under the limit, holds every field, and is read back whole
    monitor_item = stored(tables, store.monitor_sk(monitor_id))
    assert item_size(monitor_item) < ITEM_LIMIT
    assert item_size(monitor_item) > len("".join(labels).encode())  # the labels are kept
    read = ok(widest.get(f"/monitors/{monitor_id}")).json()
    secret = body.pop("webhook_secret")
    assert {name: read[name] for name in body} == body
    assert "webhook_secret" not in read and secret not in created.text

    # Given a run of it ended failed with the most metrics, the longest failure, the longest
    # result and baseline ids, its alert pending
    assert commit(store.claiming(LONGEST_TENANT, monitor_id, SCHEDULED_MS, None, None))
    run_sk = store.run_sk(monitor_id, SCHEDULED_MS)
    failure = wide(store.MAX_FAILURE_CHARS)
    baseline_id = longest_id("ev_")
    means = [(k + 1) / 11 for k in range(MAX_DEFINITIONS)]
    run = Run(
        LONGEST_TENANT,
        monitor_id,
        SCHEDULED_MS,
        "failed",
        manual=True,
        result_id=result_id,
        baseline_id=baseline_id,
        metrics=[
            RunMetric(k, mean, mean - 0.5, mean + 0.5, "no_significant_difference")
            for k, mean in enumerate(means)
        ],
        definitions_sha256=definitions_sha256(definitions),
        pairs_matched=MAX_PAIRS,
        cost_usd="0.12345678901234567890",
        failure=failure,
    )
    assert commit(store.ending(run, SCHEDULED_MS + 1, alert=True))

    # When its alert is leased, then fails after three attempts
    sizes = [item_size(stored(tables, run_sk))]
    lease_ends = SCHEDULED_MS + 300_000
    leased = store.lease_alert(
        LONGEST_TENANT, monitor_id, SCHEDULED_MS, SCHEDULED_MS + 1, lease_ends
    )
    assert leased is not None and leased.failure == failure
    sizes.append(item_size(stored(tables, run_sk)))
    store.alert_outcome(LONGEST_TENANT, monitor_id, SCHEDULED_MS, "failed", 3, 503)
    sizes.append(item_size(stored(tables, run_sk)))

    # Then the record is under the limit in every state, the failure kept whole
    assert all(len(failure.encode()) < size < ITEM_LIMIT for size in sizes), sizes

    # And the history gives the run back whole, each metric with its definition
    history = ok(widest.get(f"/monitors/{monitor_id}/history"))
    [listed] = history.json()["runs"]

    def metric(k: int) -> dict[str, Any]:
        return {
            "metric": definitions[k],
            "mean": means[k],
            "ci_low": means[k] - 0.5,
            "ci_high": means[k] + 0.5,
            "verdict": "no_significant_difference",
            "pairs_regressed": None,
        }

    assert listed == {
        "run_id": f"{monitor_id}.{SCHEDULED_MS}",
        "scheduled_for": "2026-01-01T00:00:00.000Z",
        "status": "failed",
        "manual": True,
        "result_id": result_id,
        "baseline_id": baseline_id,
        "metrics": [metric(k) for k in range(MAX_DEFINITIONS)],
        "pairs_matched": MAX_PAIRS,
        "cost_usd": 0.12345678901234568,
        "failure": failure,
        "webhook": {"status": "failed", "attempts": 3, "http_status": 503},
    }
    assert history.json()["next_cursor"] is None

    # And 24 more such runs: the default page (20) of them would be 10 MB of definitions;
    # each page holds what fits, and the pages together hold every run
    for k in range(1, 25):
        at = SCHEDULED_MS + k * 60_000
        last = at - 60_000
        assert commit(store.claiming(LONGEST_TENANT, monitor_id, at, None, last))
        copy = dataclasses.replace(run, scheduled_ms=at)
        assert commit(store.ending(copy, at + 1, alert=False))
    seen: list[str] = []
    cursor = ""
    while True:
        page = widest.get(f"/monitors/{monitor_id}/history{cursor}")
        assert page.status_code == 200, page.text[:300]
        assert len(page.content) < 6_000_000
        seen += [r["run_id"] for r in page.json()["runs"]]
        if page.json()["next_cursor"] is None:
            break
        cursor = f"?cursor={page.json()['next_cursor']}"
    assert len(seen) == len(set(seen)) == 25 and seen[-1] == f"{monitor_id}.{SCHEDULED_MS}"
