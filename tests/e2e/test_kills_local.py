"""Queued work on the local server survives the server being killed again and again in the
middle of its work: it is taken again at every start, completes with exact counts, and every
judge call the provider served is charged (the result's usage, the tenant's month), and at most
the calls that could have been in flight at each kill more; the result's usage says which part
is that estimate, and the month counts it as soon as the work completes."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.conftest import point_service_at
from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.fake_judge import FakeJudge, fake_llm

HEADERS = {"Authorization": DEV_KEY}
PAIRS = 400
KILLS = 5


@pytest.fixture
def slow_judge() -> Iterator[FakeJudge]:
    """A judge that takes 200 ms a call, so kills land in the middle of its calls."""
    fake = FakeJudge(fake_llm, latency=0.2)
    with fake.running():
        yield fake


def call(server: LocalServer, method: str, path: str, body: Any = None, **headers: str) -> Any:
    response = requests.request(
        method,
        f"{server.base_url}{path}",
        json=body,
        headers={**HEADERS, **headers},
        timeout=120,
    )
    assert response.status_code in (200, 202), response.text
    return response.json()


def test_a_queued_evaluation_killed_five_times_completes_and_counts_every_call(
    tmp_path: Path, slow_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = LocalServer(
        tmp_path / "data",
        judge_url=slow_judge.base_url,
        extra_env={
            # Every evaluation queued, in chunks of 20 judge calls, one call at a time on each
            # of 2 workers: 400 calls take about 40 s, so every kill lands mid-chunk.
            "EVALSVC_INLINE_MAX_JUDGE_CALLS": "0",
            "EVALSVC_CHUNK_JUDGE_CALLS": "20",
            "EVALSVC_JUDGE_CONCURRENCY": "1",
            "EVALSVC_LOCAL_WORKERS": "2",
            # No periodic sweep within the test: only a start can take the job again.
            "EVALSVC_SWEEP_SECONDS": "3600",
        },
    )
    server.start()
    try:
        pairs = [
            {"id": f"p{i:04d}", "input": f"q {i}", "output": "please" if i % 4 else "no"}
            for i in range(PAIRS)
        ]
        call(server, "POST", "/data/seed/big", {"data": pairs})
        metrics = call(server, "POST", "/specify_questions", {"metrics": ["Is it polite?"]})
        body = {"seed_data_id": "big", "metrics_id": metrics["metrics_id"]}
        queued = call(server, "POST", "/evaluate", body, Prefer="respond-async")
        results_id = queued["eval_results_id"]

        # When the server is killed (the whole process group, SIGKILL) and started again, five
        # times, a second after each start
        progress = []
        for _ in range(KILLS):
            time.sleep(1)
            progress.append(call(server, "GET", f"/evaluation/{results_id}")["pairs_done"])
            server.kill_group()
            server.start()
        assert len(slow_judge.requests) < PAIRS, "the work was done before the last kill"

        # Then, taken again at the last start (there is no periodic sweep), it completes
        deadline = time.monotonic() + 240
        while True:
            result = call(server, "GET", f"/evaluation/{results_id}")
            if result["status"] != "running" or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert result["status"] == "complete", (result, progress)
        assert result["pairs_done"] == result["pairs_total"] == result["pair_count"] == PAIRS
        # exact statistics: every pair scored once (5 when it says please, else 2)
        assert result["score_means"] == [pytest.approx((3 * 5 + 2) / 4)]
        # and every call the judge served is in the result's usage (a delivery killed mid-chunk
        # counts at the most it could have used)
        served = len(slow_judge.requests)
        assert served >= PAIRS
        assert result["usage"]["llm_calls"] >= served
    finally:
        server.stop()

    # And in the tenant's month, once the killed deliveries' reservations are charged
    from evalsvc.logic import spending
    from evalsvc.storage import ledger
    from evalsvc_tools.local.store import EmbeddedDynamoDB

    with EmbeddedDynamoDB(tmp_path / "data", port=0) as store:
        point_service_at(store.env, monkeypatch)
        month = ledger.read_month("local", spending.this_month())
    later = time.time() + spending.MAX_WORK_SECONDS + spending.RESERVATION_GRACE_SECONDS + 1
    assert month.charged(later).usage.llm_calls >= served


# ---- what killed work is charged -------------------------------------------------------------

CHARGE_KILLS = 6
WORKERS = 2
CONCURRENCY = 4
# Each kill can leave at most this many calls charged but never served: every delivery running
# at the kill (one per worker) had at most its concurrency of calls in flight.
MOST_LOST_PER_KILL = WORKERS * CONCURRENCY


def killing(server: LocalServer, progress: Any) -> list[Any]:
    """Kill the server (its whole process group, SIGKILL) and start it again, CHARGE_KILLS
    times, a second and a half after each start; what `progress()` said before each kill."""
    seen = []
    for _ in range(CHARGE_KILLS):
        time.sleep(1.5)
        seen.append(progress())
        server.kill_group()
        server.start()
    return seen


def until_ended(server: LocalServer, path: str) -> Any:
    deadline = time.monotonic() + 300
    while True:
        state = call(server, "GET", path)
        if state["status"] != "running" or time.monotonic() > deadline:
            return state
        time.sleep(0.5)


def killed_server(tmp_path: Path, judge: FakeJudge) -> LocalServer:
    return LocalServer(
        tmp_path / "data",
        judge_url=judge.base_url,
        extra_env={
            # Every evaluation and pairwise run queued, in the service's own chunk size
            "EVALSVC_INLINE_MAX_JUDGE_CALLS": "0",
            "EVALSVC_JUDGE_CONCURRENCY": str(CONCURRENCY),
            "EVALSVC_LOCAL_WORKERS": str(WORKERS),
            # No periodic sweep within the test: only a start takes the work again
            "EVALSVC_SWEEP_SECONDS": "3600",
            "EVALSVC_PRICES": '{"openai:fake-judge": {"input": 2.5, "output": 10}}',
        },
    )


def assert_charged_close_to_served(
    usage: dict[str, Any], month_calls: int, served: int, what: str
) -> None:
    charged = usage["llm_calls"]
    lost = usage["lost_work"]
    print(
        f"\n{what}: served {served}, charged {charged} (lost-work estimate "
        f"{lost}), month {month_calls}, cost {usage['cost_usd']}"
    )
    # every call the judge served is charged, on the result and in the month at once
    assert charged >= served
    assert month_calls >= served
    # and at most the calls that could have been in flight at the kills more
    assert charged <= served + MOST_LOST_PER_KILL * CHARGE_KILLS
    assert month_calls <= served + MOST_LOST_PER_KILL * CHARGE_KILLS
    # the part that is an estimate is said
    assert lost is not None and 0 < lost["llm_calls"] <= MOST_LOST_PER_KILL * CHARGE_KILLS
    assert charged - lost["llm_calls"] <= served


def test_a_queued_evaluation_killed_six_times_is_charged_what_was_served(
    tmp_path: Path, slow_judge: FakeJudge
) -> None:
    # Given 600 pairs judged on one question: two chunks (500 and 100 calls), each with 4 calls
    # at a time, on a server with two workers, and a judge taking 300 ms a call
    slow_judge.latency = 0.3
    server = killed_server(tmp_path, slow_judge)
    server.start()
    try:
        pairs = [
            {"id": f"p{i:04d}", "input": f"q {i}", "output": "please" if i % 4 else "no"}
            for i in range(600)
        ]
        call(server, "POST", "/data/seed/big", {"data": pairs})
        metrics = call(server, "POST", "/specify_questions", {"metrics": ["Is it polite?"]})
        body = {"seed_data_id": "big", "metrics_id": metrics["metrics_id"]}
        queued = call(server, "POST", "/evaluate", body, Prefer="respond-async")
        path = f"/evaluation/{queued['eval_results_id']}"

        # When the server is killed six times in the middle of the calls
        progress = killing(server, lambda: call(server, "GET", path)["pairs_done"])
        assert len(slow_judge.requests) < 600, "the work was done before the last kill"

        # Then the evaluation completes, exactly
        result = until_ended(server, path)
        assert result["status"] == "complete", (result, progress)
        assert result["pairs_done"] == result["pair_count"] == 600
        assert result["score_means"] == [pytest.approx((3 * 5 + 2) / 4)]
        # charged what the judge served, within what the kills can have left in flight
        month = call(server, "GET", "/usage")
        assert_charged_close_to_served(
            result["usage"], month["llm_calls"], len(slow_judge.requests), "evaluation"
        )
    finally:
        server.stop()


def test_a_queued_pairwise_run_killed_six_times_is_charged_what_was_served(
    tmp_path: Path, slow_judge: FakeJudge
) -> None:
    # Given two runs of 300 pairs scored by a check (no judge call), compared by the judge in
    # both orders: 600 calls, 300 ms each
    slow_judge.latency = 0.3
    server = killed_server(tmp_path, slow_judge)
    server.start()
    try:
        metrics = call(server, "POST", "/specify_questions", {"metrics": ["check:non_empty"]})
        runs = []
        for name, text in (("curt", "Hold it ({k})."), ("polite", "Please hold it ({k}).")):
            data = [
                {"id": f"p{k:03d}", "input": f"How? ({k})", "output": text.format(k=k)}
                for k in range(300)
            ]
            call(server, "POST", f"/data/seed/{name}", {"data": data})
            body = {"seed_data_id": name, "metrics_id": metrics["metrics_id"]}
            runs.append(call(server, "POST", "/evaluate", body)["eval_results_id"])
        assert not slow_judge.requests
        queued = call(
            server,
            "POST",
            "/pairwise",
            {"result_ids": runs, "question": "Which is more polite?"},
            Prefer="respond-async",
        )
        path = f"/pairwise/{queued['pairwise_id']}"

        # When the server is killed six times in the middle of the calls
        progress = killing(server, lambda: call(server, "GET", path)["progress"]["done"])
        assert len(slow_judge.requests) < 600, "the work was done before the last kill"

        # Then the run completes
        result = until_ended(server, path)
        assert result["status"] == "complete", (result, progress)
        assert result["pairs_used"] == 300
        # charged what the judge served, within what the kills can have left in flight
        month = call(server, "GET", "/usage")
        assert_charged_close_to_served(
            result["usage"], month["llm_calls"], len(slow_judge.requests), "pairwise"
        )
    finally:
        server.stop()
