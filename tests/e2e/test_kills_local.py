"""A queued evaluation on the local server survives the server being killed again and again in
the middle of its work: it is taken again at every start, completes with exact counts, and
every judge call the provider served is recorded (the result's usage, the tenant's month)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.conftest import point_service_at
from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.fake_judge import FakeJudge, polite_judge

HEADERS = {"Authorization": DEV_KEY}
PAIRS = 400
KILLS = 5


@pytest.fixture
def slow_judge() -> Iterator[FakeJudge]:
    """A judge that takes 200 ms a verdict, so kills land in the middle of its calls."""
    fake = FakeJudge(polite_judge, latency=0.2)
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
            "JUDGE_CONCURRENCY": "1",
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
