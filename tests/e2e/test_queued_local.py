"""Queued evaluations on the local server: the same work queue and worker handlers as on AWS,
with the workers running in the server process against the embedded SQS."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from plum_sdk import IOPair, PlumClient

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.fake_judge import FakeJudge

HEADERS = {"Authorization": DEV_KEY}
PAIRS = 1000


@pytest.fixture(scope="module")
def queued_server(
    tmp_path_factory: pytest.TempPathFactory, judge: FakeJudge
) -> Iterator[LocalServer]:
    local = LocalServer(
        Path(tmp_path_factory.mktemp("queued")),
        judge_url=judge.base_url,
        extra_env={
            # Small limits, so a 1,000-pair evaluation is 10 chunks of 100 pairs.
            "EVALSVC_INLINE_MAX_CHECKS": "50",
            "EVALSVC_CHUNK_CHECKS": "200",
            "EVALSVC_INLINE_MAX_JUDGE_CALLS": "10",
            "EVALSVC_CHUNK_JUDGE_CALLS": "25",
            # The plain POST below waits for 1,000 judge calls through moto: about 25 s alone
            # on a 2-core machine, more beside the rest of the suite. Its wait is bounded by
            # the request's deadline too (29 s, the gateway's, which this server has not got).
            "EVALSVC_SYNC_WAIT_SECONDS": "240",
            "EVALSVC_REQUEST_SECONDS": "300",
        },
    )
    local.start()
    yield local
    local.stop()


@pytest.fixture(scope="module")
def plum(queued_server: LocalServer) -> PlumClient:
    client = PlumClient(api_key=DEV_KEY, base_url=queued_server.base_url)
    data = [
        IOPair(input=f"question {i}", output="please wait" if i % 3 else "no") for i in range(PAIRS)
    ]
    client.upload_data(data, system_prompt="Be polite.", dataset_id="big")
    return client


def poll(server: LocalServer, results_id: str) -> list[dict[str, object]]:
    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        url = f"{server.base_url}/evaluation/{results_id}"
        body = requests.get(url, headers=HEADERS, timeout=30).json()
        seen.append(body)
        if body["status"] != "running":
            return seen
        time.sleep(0.05)
    raise AssertionError(f"still running after 120 s: {seen[-1]}")


def test_a_queued_evaluation_shows_progress_and_completes(
    queued_server: LocalServer, plum: PlumClient
) -> None:
    metrics = plum.define_metric_questions(["check:contains:please", "check:max_words:1"])

    response = requests.post(
        f"{queued_server.base_url}/evaluate",
        json={"seed_data_id": "big", "metrics_id": metrics.metrics_id},
        headers={**HEADERS, "Prefer": "respond-async"},
        timeout=60,
    )

    assert response.status_code == 202, response.text
    seen = poll(queued_server, response.json()["eval_results_id"])
    done = [int(str(s["pairs_done"])) for s in seen]
    assert done == sorted(done)  # progress only grows
    assert any(s["status"] == "running" and 0 <= int(str(s["pairs_done"])) < PAIRS for s in seen)
    final = seen[-1]
    assert (final["status"], final["pairs_done"], final["pairs_total"]) == (
        "complete",
        PAIRS,
        PAIRS,
    )
    # Two pairs in three say please; only "no" is one word.
    means = final["score_means"]
    assert isinstance(means, list) and means[0] == pytest.approx(1 + 4 * 666 / 1000)


def test_plum_sdk_evaluate_waits_for_a_queued_evaluation(plum: PlumClient) -> None:
    metrics = plum.define_metric_questions(["Does the output say please?", "check:contains:please"])

    # 1,000 judge calls: 40 chunks of 25 pairs, queued; the plain POST waits for them
    result = plum.evaluate("big", metrics.metrics_id)

    assert result.pair_count == PAIRS
    judged, contains = result.scores
    assert judged.mean_score == pytest.approx((666 * 5 + 334 * 2) / 1000)
    assert contains.mean_score == pytest.approx(1 + 4 * 666 / 1000)
    assert judged.lowest_scoring_pairs[0].score_reason == "The output never says please."
