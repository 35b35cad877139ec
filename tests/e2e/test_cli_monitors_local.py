"""`evalsvc monitors create|list|run|history|delete` end to end: the CLI in a subprocess against
the local server (`evalsvc serve`), whose workers run the monitors' runs, with a webhook
receiver on 127.0.0.1 for their alerts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import LocalServer
from tests.e2e.test_cli_local import HEADERS, evalsvc, jsonl, metrics
from tests.webhook_receiver import receiver

SECRET = "monitor-hook-secret-7f3a9c2e"
ANSI = re.compile(r"\x1b")


@pytest.fixture(scope="module")
def monitor_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    local = LocalServer(
        Path(tmp_path_factory.mktemp("monitors")),
        extra_env={
            # Alerts to the receiver on 127.0.0.1; a run waiting on its evaluation looks again
            # after a second.
            "EVALSVC_ALLOW_LOCAL_WEBHOOKS": "1",
            "EVALSVC_MONITOR_POLL_SECONDS": "1",
        },
    )
    local.start()
    yield local
    local.stop()


def push(server: LocalServer, folder: Path, seed: str, outputs: list[str]) -> None:
    rows = [{"id": f"q{k}", "input": f"question {k}", "output": o} for k, o in enumerate(outputs)]
    done = evalsvc(server, "push", str(jsonl(folder / f"{seed}.jsonl", rows)), "--seed", seed)
    assert done.returncode == 0, done.stderr


def create(server: LocalServer, *args: str, **env: str) -> str:
    done = evalsvc(server, "monitors", "create", *args, **env)
    assert done.returncode == 0, done.stderr
    monitor_id = done.stdout.strip()
    assert re.fullmatch(r"mon_\w+", monitor_id)
    return monitor_id


def listed(server: LocalServer) -> list[dict[str, Any]]:
    done = evalsvc(server, "monitors", "list", "--json")
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout)["monitors"])


SHORT = ["Open Settings." for _ in range(10)]
LONG = ["Please open Settings, then Security, then follow every step shown there."] * 10


def test_create_and_list_and_what_the_service_refuses(
    monitor_server: LocalServer, tmp_path: Path
) -> None:
    push(monitor_server, tmp_path, "mon-faq", SHORT)
    checks = metrics(monitor_server, "check:max_words:6")
    judged = metrics(monitor_server, "Is the answer polite?")
    common = ["--dataset", "mon-faq", "--metrics", checks]

    made = evalsvc(
        monitor_server,
        "monitors",
        "create",
        "--name",
        "faq weekly",
        *common,
        "--schedule",
        "0 6 * * MON",
        "--pairs",
        "5",
    )
    hostile_name = evalsvc(
        monitor_server,
        "monitors",
        "create",
        "--name",
        "faq \x1b[2J\u202eweekly",
        *common,
        "--schedule",
        "0 6 * * MON",
    )
    bad_schedule = evalsvc(
        monitor_server,
        "monitors",
        "create",
        "--name",
        "x",
        *common,
        "--schedule",
        "rate(1 minutes)",
    )
    too_often = evalsvc(
        monitor_server, "monitors", "create", "--name", "x", *common, "--schedule", "*/2 * * * *"
    )
    no_cap = evalsvc(
        monitor_server,
        "monitors",
        "create",
        "--name",
        "x",
        "--dataset",
        "mon-faq",
        "--metrics",
        judged,
        "--schedule",
        "rate(1 hour)",
    )
    table = evalsvc(monitor_server, "monitors", "list")

    assert made.returncode == 0, made.stderr
    monitor_id = made.stdout.strip()
    assert re.fullmatch(r"mon_\w+", monitor_id)
    assert made.stderr.startswith(
        f"created monitor {monitor_id} (faq weekly): 0 6 * * MON in UTC, first run at "
    )
    # A name with control characters is refused, naming the first, never echoing it
    assert hostile_name.returncode == 1
    assert hostile_name.stderr.startswith(
        "evalsvc: HTTP 400: name: character 5 is U+001B (a control character): "
    )
    assert not ANSI.search(hostile_name.stderr) and "\u202e" not in hostile_name.stderr
    assert bad_schedule.returncode == 1
    assert bad_schedule.stderr.startswith(
        "evalsvc: HTTP 400: schedule: schedule 'rate(1 minutes)' is not valid: say "
        "rate(1 minute) or rate(2 minutes)"
    )
    assert too_often.returncode == 1
    assert too_often.stderr.startswith("evalsvc: HTTP 400: schedule: ")
    assert "5 minutes" in too_often.stderr
    assert no_cap.returncode == 1
    assert no_cap.stderr.startswith("evalsvc: HTTP 400: max_cost_usd is required")
    for refused in (bad_schedule, too_often, no_cap, hostile_name):
        assert refused.stdout == "" and len(refused.stderr.splitlines()) == 1
    # Refused ones were not kept; the one made is listed as asked for
    (kept,) = [m for m in listed(monitor_server) if m["seed_data_id"] == "mon-faq"]
    assert kept["monitor_id"] == monitor_id
    assert (kept["name"], kept["schedule"], kept["metrics_id"]) == (
        "faq weekly",
        "0 6 * * MON",
        checks,
    )
    assert kept["pair_query"]["latest_n_pairs"] == 5 and kept["baseline"] == "previous"
    assert table.returncode == 0, table.stderr
    assert monitor_id in table.stdout and "0 6 * * MON" in table.stdout
    assert "faq weekly" in table.stdout and not ANSI.search(table.stdout)


def test_run_wait_passes_while_steady_and_fails_on_a_regression_alerting_the_webhook(
    monitor_server: LocalServer, tmp_path: Path
) -> None:
    push(monitor_server, tmp_path, "mon-gate", SHORT)
    checks = metrics(monitor_server, "check:max_words:6")
    with receiver() as hook:
        # Given a monitor whose webhook's secret is read from the environment
        made = evalsvc(
            monitor_server,
            "monitors",
            "create",
            "--name",
            "gate",
            "--dataset",
            "mon-gate",
            "--metrics",
            checks,
            "--schedule",
            "rate(1 day)",
            "--webhook-url",
            hook.url,
            "--webhook-secret-env",
            "GATE_HOOK_SECRET",
            GATE_HOOK_SECRET=SECRET,
        )
        assert made.returncode == 0, made.stderr
        monitor_id = made.stdout.strip()

        # When it runs twice on the same answers, then once on longer ones
        first = evalsvc(monitor_server, "monitors", "run", monitor_id, "--wait")
        steady = evalsvc(monitor_server, "monitors", "run", monitor_id, "--wait")
        push(monitor_server, tmp_path, "mon-gate", LONG)
        worse = evalsvc(monitor_server, "monitors", "run", monitor_id, "--wait")
        posts = list(hook.posts)
    history = evalsvc(monitor_server, "monitors", "history", monitor_id, "--json")
    table = evalsvc(monitor_server, "monitors", "history", monitor_id)

    # Then the first has no baseline and the second no significant difference: both pass
    assert first.returncode == 0, first.stderr
    assert "no baseline (nothing to compare with yet)" in first.stdout
    assert "alert none" in first.stdout
    assert steady.returncode == 0, steady.stderr
    assert "not significant" in steady.stdout and "(10 pairs matched)" in steady.stdout
    assert re.search(
        r"check:max_words:6\s+│\s+5\.00 \[5\.00, 5\.00\] │ not significant", steady.stdout
    )
    # And the third regressed: exit 1, the metric named, the alert delivered and signed
    assert worse.returncode == 1, worse.stderr
    assert re.search(r"check:max_words:6\s+│\s+1\.00 \[1\.00, 1\.00\] │ regressed", worse.stdout)
    assert "alert delivered (HTTP 200, 1 attempt)" in worse.stdout
    lines = worse.stderr.splitlines()
    assert lines[-2].startswith("evalsvc: regressed: check:max_words:6: mean 1.00 [1.00, 1.00]")
    assert re.fullmatch(
        rf"evalsvc: monitor run {monitor_id}\.\d+ regressed on 1 of 1 metrics against "
        r"baseline ev_\w+",
        lines[-1],
    )
    (post,) = posts
    assert post.signed_with(SECRET)
    assert post.json()["regressed"] == ["check:max_words:6"]

    # The history, newest first, as JSON and as a table
    assert history.returncode == 0, history.stderr
    runs = json.loads(history.stdout)["runs"]
    assert [[m["verdict"] for m in r["metrics"]] for r in runs] == [
        ["regressed"],
        ["no_significant_difference"],
        [None],
    ]
    assert [r["status"] for r in runs] == ["complete"] * 3 and all(r["manual"] for r in runs)
    assert [r["webhook"] and r["webhook"]["status"] for r in runs] == ["delivered", None, None]
    assert runs[0]["baseline_id"] == runs[1]["result_id"] != runs[0]["result_id"]
    assert post.json()["run_id"] == runs[0]["run_id"]
    assert runs == sorted(runs, key=lambda r: r["scheduled_for"], reverse=True)
    assert table.returncode == 0, table.stderr
    assert table.stdout.count("complete (by hand)") == 3
    assert "regressed" in table.stdout and "delivered 200" in table.stdout

    # The secret was sent, and is shown by nothing
    stored = requests.get(
        f"{monitor_server.base_url}/monitors/{monitor_id}", headers=HEADERS, timeout=30
    )
    for done in (made, first, steady, worse, history, table):
        assert SECRET not in done.stdout + done.stderr
        assert "Traceback" not in done.stderr
    assert SECRET not in stored.text and stored.json()["webhook_url"] == hook.url


def test_run_without_wait_then_history_and_delete(
    monitor_server: LocalServer, tmp_path: Path
) -> None:
    push(monitor_server, tmp_path, "mon-once", SHORT)
    monitor_id = create(
        monitor_server,
        "--name",
        "once",
        "--dataset",
        "mon-once",
        "--metrics",
        metrics(monitor_server, "check:non_empty"),
        "--schedule",
        "rate(6 hours)",
    )

    started = evalsvc(monitor_server, "monitors", "run", monitor_id)
    latest = evalsvc(monitor_server, "monitors", "history", monitor_id, "--limit", "1", "--json")
    every = evalsvc(monitor_server, "monitors", "history", monitor_id, "--all", "--json")

    assert started.returncode == 0, started.stderr
    run_id = started.stdout.strip()
    assert re.fullmatch(rf"{monitor_id}\.\d+", run_id)
    assert f"see it with evalsvc monitors history {monitor_id}" in started.stderr
    assert latest.returncode == every.returncode == 0
    assert [r["run_id"] for r in json.loads(latest.stdout)["runs"]] == [run_id]
    assert json.loads(every.stdout)["next_cursor"] is None

    deleted = evalsvc(monitor_server, "monitors", "delete", monitor_id)
    again = evalsvc(monitor_server, "monitors", "run", monitor_id, "--wait")

    assert deleted.returncode == 0, deleted.stderr
    assert re.fullmatch(rf"deleted monitor {monitor_id} and 1 run records?\n", deleted.stdout)
    assert monitor_id not in [m["monitor_id"] for m in listed(monitor_server)]
    assert again.returncode == 1
    assert again.stderr == f"evalsvc: HTTP 404: no monitor with id '{monitor_id}'\n"
