"""Monitors (E8) end to end: `evalsvc serve` in a subprocess, with a fake judge and a webhook
receiver on 127.0.0.1 (EVALSVC_ALLOW_LOCAL_WEBHOOKS=1), talked to over HTTP. Runs asked for now
chain their baselines and post one signed alert on a regression and none when steady; a failed
run alerts; the server's own clock runs a due monitor once, and moves it on."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.fake_judge import FakeJudge
from tests.webhook_receiver import Receiver, receiver

HEADERS = {"Authorization": DEV_KEY}
SECRET = "e2e-webhook-secret-0001"
SHORT = "yes indeed"
LONG = "this answer goes on for far more words than the check allows it to have"
METRICS = ["Is the answer polite?", "check:max_words:6"]


@pytest.fixture(scope="module")
def hook() -> Iterator[Receiver]:
    with receiver() as server:
        yield server


@pytest.fixture(scope="module")
def monitoring_server(
    tmp_path_factory: pytest.TempPathFactory, judge: FakeJudge
) -> Iterator[LocalServer]:
    local = LocalServer(
        Path(tmp_path_factory.mktemp("monitors")),
        judge_url=judge.base_url,
        extra_env={
            "EVALSVC_ALLOW_LOCAL_WEBHOOKS": "1",
            # The clock dispatches every second; a run waiting on its queued evaluation looks
            # again every second.
            "EVALSVC_DISPATCH_SECONDS": "1",
            "EVALSVC_MONITOR_POLL_SECONDS": "1",
            # A monitor of the judge's questions needs its runs priced, to hold them to a cap.
            "EVALSVC_PRICES": json.dumps({"openai:fake-judge": {"input": 2.5, "output": 10}}),
        },
    )
    local.start()
    yield local
    local.stop()


def call(server: LocalServer, method: str, path: str, body: Any = None) -> requests.Response:
    return requests.request(method, server.base_url + path, json=body, headers=HEADERS, timeout=30)


def ok(response: requests.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def put_pairs(server: LocalServer, dataset_id: str, outputs: list[str]) -> None:
    data = [{"id": f"p{k:03d}", "input": f"q {k}", "output": o} for k, o in enumerate(outputs)]
    ok(call(server, "POST", f"/data/seed/{dataset_id}", {"data": data}))


def create(server: LocalServer, hook: Receiver, dataset_id: str, **fields: Any) -> str:
    metrics_id = ok(call(server, "POST", "/specify_questions", {"metrics": METRICS}))["metrics_id"]
    body = {
        "name": f"watching {dataset_id}",
        "seed_data_id": dataset_id,
        "metrics_id": metrics_id,
        # Not due while a test runs (a run asked for while a scheduled one runs is a 409);
        # the clock's test makes it due.
        "schedule": "rate(1 day)",
        "max_cost_usd": 5.0,
        "webhook_url": hook.url,
        "webhook_secret": SECRET,
    } | fields
    monitor_id: str = ok(call(server, "POST", "/monitors", body), 201)["monitor_id"]
    return monitor_id


def history(server: LocalServer, monitor_id: str) -> list[dict[str, Any]]:
    runs: list[dict[str, Any]] = ok(call(server, "GET", f"/monitors/{monitor_id}/history"))["runs"]
    return runs


def ended(server: LocalServer, monitor_id: str, run_id: str, seconds: float = 60) -> dict[str, Any]:
    """The run once it is complete or failed, its alert (if any) no longer pending."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for run in history(server, monitor_id):
            alert = run["webhook"]
            settled = alert is None or alert["status"] != "pending"
            if run["run_id"] == run_id and run["status"] in ("complete", "failed") and settled:
                return run
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not end: {history(server, monitor_id)}")


def run_now(server: LocalServer, monitor_id: str) -> dict[str, Any]:
    started = ok(call(server, "POST", f"/monitors/{monitor_id}/run"), 202)
    return ended(server, monitor_id, started["run_id"])


def test_runs_chain_their_baselines_and_only_a_regression_alerts(
    monitoring_server: LocalServer, hook: Receiver
) -> None:
    server = monitoring_server
    steady = [LONG if k % 10 == 0 else SHORT for k in range(30)]
    put_pairs(server, "prod", steady)
    monitor_id = create(server, hook, "prod")
    posts_before = len(hook.posts)

    first = run_now(server, monitor_id)
    second = run_now(server, monitor_id)
    assert (first["status"], second["status"]) == ("complete", "complete"), (
        first["failure"],
        second["failure"],
    )
    assert first["baseline_id"] is None and second["baseline_id"] == first["result_id"]
    assert [m["verdict"] for m in second["metrics"]] == ["no_significant_difference"] * 2
    # the judge was asked, and priced; the same pairs again are answered from its cache
    assert first["cost_usd"] > 0 and second["cost_usd"] == 0
    assert len(hook.posts) == posts_before  # steady: nothing posted

    put_pairs(server, "prod", [LONG if k % 3 else SHORT for k in range(30)])
    third = run_now(server, monitor_id)
    assert third["baseline_id"] == second["result_id"]
    verdicts = {m["metric"]: m["verdict"] for m in third["metrics"]}
    assert verdicts["check:max_words:6"] == "regressed"
    assert third["webhook"] == {"status": "delivered", "attempts": 1, "http_status": 200}

    [post] = hook.posts[posts_before:]
    assert post.signed_with(SECRET)
    assert post.json() == {
        "monitor_id": monitor_id,
        "run_id": third["run_id"],
        "result_id": third["result_id"],
        "baseline_id": second["result_id"],
        "regressed": ["check:max_words:6"],
        "failure": None,
    }
    report = call(server, "GET", f"/monitors/{monitor_id}/report")
    assert report.status_code == 200 and "text/html" in report.headers["content-type"]


def test_a_failed_run_alerts_saying_why(monitoring_server: LocalServer, hook: Receiver) -> None:
    server = monitoring_server
    put_pairs(server, "unlabelled", [SHORT] * 3)
    # Of pairs labelled so, there are none: every run fails, saying so
    monitor_id = create(server, hook, "unlabelled", pair_query={"pair_labels": ["never-written"]})
    posts_before = len(hook.posts)

    failed = run_now(server, monitor_id)

    assert failed["status"] == "failed" and "no pair matches" in failed["failure"]
    assert failed["webhook"] == {"status": "delivered", "attempts": 1, "http_status": 200}
    [post] = hook.posts[posts_before:]
    assert post.signed_with(SECRET)
    assert post.json()["failure"] == failed["failure"] and post.json()["regressed"] == []


def monitors_table(server: LocalServer) -> Any:
    dynamodb = boto3.resource(
        "dynamodb",
        endpoint_url=f"http://127.0.0.1:{server.dynamodb_port}",
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    (name,) = [t.name for t in dynamodb.tables.all() if t.name.endswith("-MonitorsTable")]
    return dynamodb.Table(name)


def test_the_servers_clock_runs_a_due_monitor_once(
    monitoring_server: LocalServer, hook: Receiver
) -> None:
    server = monitoring_server
    put_pairs(server, "clocked", [SHORT] * 10)
    monitor_id = create(server, hook, "clocked")
    # Make it due now (its first run is up to 5 minutes away), as if that time had come
    table = monitors_table(server)
    key = {"pk": "T#local", "sk": f"M#{monitor_id}"}
    due = int(time.time() * 1000) - 1_000
    table.update_item(
        Key=key, UpdateExpression="SET next_run_ms = :due", ExpressionAttributeValues={":due": due}
    )

    deadline = time.monotonic() + 60
    while not history(server, monitor_id) and time.monotonic() < deadline:
        time.sleep(0.2)
    [run] = history(server, monitor_id)
    assert run["run_id"] == f"{monitor_id}.{due}" and run["manual"] is False
    assert ended(server, monitor_id, run["run_id"])["status"] == "complete"
    time.sleep(3)  # three more ticks of the clock: the run is not claimed again
    assert [r["run_id"] for r in history(server, monitor_id)] == [run["run_id"]]
    moved = ok(call(server, "GET", f"/monitors/{monitor_id}"))["next_run_at"]
    assert moved > run["scheduled_for"]
