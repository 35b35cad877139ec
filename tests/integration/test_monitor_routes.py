"""The monitor routes (E8) over HTTP: a monitor created, read (never its secret), listed, run
now, its history paged, deleted; every bad field of its body a 400 naming it, what needs a read
a 404 or 409, and nothing stored by a refused request."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from evalsvc.core.settings import get_settings
from evalsvc.logic import monitors

from tests.conftest import point_service_at
from tests.integration.conftest import Tenant, ok
from tests.integration.test_bad_input_catalogue import snapshot
from tests.unit.test_monitor_models import BAD_FIELDS
from tests.work_queue import Work

SECRET = "a-secret-of-16-chars"


@pytest.fixture
def checks(acme: Tenant) -> str:
    ok(
        acme.post(
            "/data/seed/prod",
            {"data": [{"id": f"p{k}", "input": "q", "output": "a b"} for k in range(5)]},
        )
    )
    answer = ok(acme.post("/specify_questions", {"metrics": ["check:max_words:6"]}))
    metrics_id: str = answer.json()["metrics_id"]
    return metrics_id


def create(acme: Tenant, sent: dict[str, Any]) -> str:
    response = acme.post("/monitors", sent)
    assert response.status_code == 201, response.text
    monitor_id: str = response.json()["monitor_id"]
    return monitor_id


def body(metrics_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": "prod answers",
        "seed_data_id": "prod",
        "metrics_id": metrics_id,
        "schedule": "rate(1 hour)",
    } | fields


def test_a_monitor_is_created_read_listed_run_and_deleted(
    acme: Tenant, work: Work, checks: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_ALLOW_LOCAL_WEBHOOKS": "1"}, monkeypatch)
    hook = {"webhook_url": "http://127.0.0.1:9/hook", "webhook_secret": SECRET}
    created = acme.post("/monitors", body(checks, **hook))
    assert created.status_code == 201, created.text
    monitor_id = created.json()["monitor_id"]
    assert created.headers["Location"] == f"monitors/{monitor_id}"
    assert created.json()["next_run_at"].endswith("Z")

    read = ok(acme.get(f"/monitors/{monitor_id}"))
    assert SECRET not in read.text and "webhook_secret" not in read.json()
    assert read.json() | {"created_at": "", "next_run_at": ""} == {
        "monitor_id": monitor_id,
        "name": "prod answers",
        "seed_data_id": "prod",
        "metrics_id": checks,
        "schedule": "rate(1 hour)",
        "pair_query": read.json()["pair_query"],
        "baseline": "previous",
        "alpha": 0.05,
        "regression_threshold": 1.0,
        "max_cost_usd": None,
        "webhook_url": "http://127.0.0.1:9/hook",
        "created_at": "",
        "next_run_at": "",
    }
    assert read.json()["pair_query"]["latest_n_pairs"] == 200
    assert [m["monitor_id"] for m in ok(acme.get("/monitors")).json()["monitors"]] == [monitor_id]

    runs = []
    for _ in range(3):
        started = acme.post(f"/monitors/{monitor_id}/run")
        assert started.status_code == 202, started.text
        assert started.headers["Location"] == "history"
        runs.append(started.json()["run_id"])
        work.drain()
    first = ok(acme.get(f"/monitors/{monitor_id}/history?limit=2")).json()
    rest = ok(acme.get(f"/monitors/{monitor_id}/history?limit=2&cursor={first['next_cursor']}"))
    listed = first["runs"] + rest.json()["runs"]
    assert [r["run_id"] for r in listed] == runs[::-1] and rest.json()["next_cursor"] is None
    newest, _, oldest = listed
    assert oldest["baseline_id"] is None and newest["baseline_id"] == listed[1]["result_id"]
    assert newest["metrics"] == [
        {
            "metric": "check:max_words:6",
            "mean": newest["metrics"][0]["mean"],
            "ci_low": newest["metrics"][0]["ci_low"],
            "ci_high": newest["metrics"][0]["ci_high"],
            "verdict": "no_significant_difference",
            "pairs_regressed": 0,
        }
    ]
    assert (newest["status"], newest["manual"], newest["cost_usd"], newest["webhook"]) == (
        "complete",
        True,
        0.0,
        None,
    )
    assert newest["pairs_matched"] == 5 and newest["failure"] is None

    deleted = ok(acme.http.delete(f"/v1/monitors/{monitor_id}", headers=acme.headers))
    assert deleted.json() == {"monitor_id": monitor_id, "deleted": True, "runs_removed": 3}
    for path in (f"/monitors/{monitor_id}", f"/monitors/{monitor_id}/history"):
        assert acme.get(path).status_code == 404
    gone = acme.http.delete(f"/v1/monitors/{monitor_id}", headers=acme.headers)
    assert gone.status_code == 404 and "no monitor" in gone.json()["error"]
    assert ok(acme.get("/monitors")).json() == {"monitors": [], "next_cursor": None}


def refused(acme: Tenant, tables: dict[str, str], content: bytes, status: int) -> str:
    before = snapshot(tables)
    response = acme.http.post(
        "/v1/monitors",
        content=content,
        headers={**acme.headers, "Content-Type": "application/json"},
    )
    assert response.status_code == status, response.text
    assert list(response.json()) == ["error"]
    assert snapshot(tables) == before
    error: str = response.json()["error"]
    return error


@pytest.mark.parametrize(("field", "value", "says"), BAD_FIELDS)
def test_every_bad_field_is_refused_naming_it(
    acme: Tenant, tables: dict[str, str], checks: str, field: str, value: Any, says: str
) -> None:
    content = json.dumps(body(checks) | {field: value}).encode()
    # A text over its limit is a 413, as everywhere in the API; any other bad field a 400.
    error = refused(acme, tables, content, 413 if "at most" in says else 400)
    if value != float("inf"):  # not JSON: refused as such
        assert field in error and says in error


@pytest.mark.parametrize("name", ["nul\x00here", "abc\u202ecba", "faq \x1b[2J", "\x9b2J"])
def test_a_name_with_a_control_character_is_refused_naming_it_without_echoing_it(
    acme: Tenant, tables: dict[str, str], checks: str, name: str
) -> None:
    control = next(ch for ch in name if ch in "\x00\u202e\x1b\x9b")
    content = json.dumps(body(checks, name=name)).encode()
    error = refused(acme, tables, content, 400)
    place = name.index(control) + 1
    assert error.startswith(f"name: character {place} is U+{ord(control):04X} ")
    assert control not in error and f"\\u{ord(control):04x}" not in error.lower()


def test_a_name_stored_before_names_refused_controls_reads_back(acme: Tenant, checks: str) -> None:
    # Given a monitor stored with a control character in its name (before they were refused)
    monitor_id = create(acme, body(checks))
    item = boto3.client("dynamodb").get_item(
        TableName=get_settings().monitors_table,
        Key={"pk": {"S": "T#acme"}, "sk": {"S": f"M#{monitor_id}"}},
    )["Item"]
    stored = json.loads(item["body"]["S"]) | {"name": "old \x1b[2J\u202ename"}
    item["body"] = {"S": json.dumps(stored, ensure_ascii=False)}
    boto3.client("dynamodb").put_item(TableName=get_settings().monitors_table, Item=item)

    # Then it is read, listed and reported as it was stored, its report neutralising the name
    assert ok(acme.get(f"/monitors/{monitor_id}")).json()["name"] == "old \x1b[2J\u202ename"
    assert [m["name"] for m in ok(acme.get("/monitors")).json()["monitors"]] == [
        "old \x1b[2J\u202ename"
    ]
    page = ok(acme.get(f"/monitors/{monitor_id}/report")).text
    assert "old \ufffd[2J\ufffdname" in page and "\x1b" not in page and "\u202e" not in page


@pytest.mark.parametrize("missing", ["name", "seed_data_id", "metrics_id", "schedule"])
def test_a_missing_field_is_a_400(
    acme: Tenant, tables: dict[str, str], checks: str, missing: str
) -> None:
    content = json.dumps({k: v for k, v in body(checks).items() if k != missing}).encode()
    assert missing in refused(acme, tables, content, 400)


def test_what_needs_a_read_is_checked_before_anything_is_stored(
    acme: Tenant, tables: dict[str, str], checks: str
) -> None:
    judged = ok(acme.post("/specify_questions", {"metrics": ["Is it polite?"]})).json()
    cases: list[tuple[dict[str, Any], int, str]] = [
        (body(judged["metrics_id"]), 400, "max_cost_usd is required"),
        (body("m_nope"), 404, "m_nope"),
        (body(checks, seed_data_id="ds_nope"), 404, "no seed dataset with id 'ds_nope'"),
        (body(checks, baseline="ev_nope"), 404, "ev_nope"),
        (
            body(checks, webhook_url="https://10.0.0.7/hook", webhook_secret=SECRET),
            400,
            "not a public address",
        ),
        (
            body(checks, webhook_url="http://127.0.0.1:9/hook", webhook_secret=SECRET),
            400,
            "only https",
        ),
        (
            body(checks, webhook_url="https://169.254.169.254/latest", webhook_secret=SECRET),
            400,
            "not a public address",
        ),
    ]
    for sent, status, says in cases:
        assert says in refused(acme, tables, json.dumps(sent).encode(), status)


def test_a_running_result_cannot_be_the_baseline(
    acme: Tenant, tables: dict[str, str], checks: str, work: Work
) -> None:
    queued = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "prod", "metrics_id": checks},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert queued.status_code == 202, queued.text
    running = queued.json()["eval_results_id"]
    error = refused(acme, tables, json.dumps(body(checks, baseline=running)).encode(), 409)
    assert "must be complete" in error


def test_ids_cursors_and_limits_are_checked(acme: Tenant, checks: str) -> None:
    monitor_id = create(acme, body(checks))
    for path, says in [
        ("/monitors/a%20b", "monitor id"),
        ("/monitors/a%20b/history", "monitor id"),
        (f"/monitors/{monitor_id}/history?limit=0", "limit"),
        (f"/monitors/{monitor_id}/history?limit=101", "limit"),
        (f"/monitors/{monitor_id}/history?cursor=x", "cursor"),
        ("/monitors?limit=0", "limit"),
        ("/monitors?limit=101", "limit"),
        ("/monitors?limit=x", "limit"),
        ("/monitors?cursor=x", "cursor"),
        (f"/monitors?cursor=1.{monitor_id}%20", "cursor"),
    ]:
        response = acme.get(path)
        assert response.status_code == 400, (path, response.text)
        assert says in response.json()["error"], path
    too_long = acme.get(f"/monitors?cursor={'0' * 1025}")
    assert too_long.status_code == 413 and "cursor" in too_long.json()["error"]
    assert acme.post("/monitors/a%20b/run").status_code == 400
    assert acme.post("/monitors/mon_nope/run").status_code == 404


def test_the_list_of_monitors_pages_oldest_first_with_all_of_them_by_default(
    acme: Tenant, globex: Tenant, checks: str
) -> None:
    # Given three monitors
    made = [create(acme, body(checks, name=f"m{k}")) for k in range(3)]

    # When they are listed two at a time, and with no limit
    first = ok(acme.get("/monitors?limit=2")).json()
    rest = ok(acme.get(f"/monitors?limit=2&cursor={first['next_cursor']}")).json()
    whole = ok(acme.get("/monitors")).json()

    # Then the pages hold them all once, oldest first, and the whole list is one page
    assert [m["monitor_id"] for m in first["monitors"] + rest["monitors"]] == made
    assert first["next_cursor"] is not None and rest["next_cursor"] is None
    assert [m["monitor_id"] for m in whole["monitors"]] == made and whole["next_cursor"] is None
    assert ok(acme.get("/monitors?limit=3")).json()["next_cursor"] is None
    # …and another tenant's cursor pages its own (empty) list
    assert ok(globex.get(f"/monitors?cursor={first['next_cursor']}")).json()["monitors"] == []


def test_a_tenant_keeps_at_most_its_share_of_monitors(
    acme: Tenant, tables: dict[str, str], checks: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(monitors, "MAX_MONITORS", 2)
    for _ in range(2):
        create(acme, body(checks))
    error = refused(acme, tables, json.dumps(body(checks)).encode(), 409)
    assert "2 monitors" in error
