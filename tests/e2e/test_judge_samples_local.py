"""Repeated judging (E6 judge_samples) end to end: `evalsvc serve` in a subprocess with a fake
judge that answers the same prompt differently each time it is asked, and `evalsvc evaluate
--judge-samples 3` against it over HTTP: the evaluation is queued in chunks of judge calls, its
progress counted in calls, each pair scored by the mean of three answers, and the judge's noise
is numpy's figure from the answers the judge gave."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import requests

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.e2e.test_cli_local import evalsvc
from tests.fake_judge import FakeJudge, VaryingJudge

HEADERS = {"Authorization": DEV_KEY}
QUESTION = "Is the answer polite?"
PAIRS = 12


@pytest.fixture(scope="module")
def varying() -> Iterator[tuple[FakeJudge, VaryingJudge]]:
    answers = VaryingJudge()
    fake = FakeJudge(answer=answers)
    with fake.running():
        yield fake, answers


@pytest.fixture(scope="module")
def sampled_server(
    tmp_path_factory: pytest.TempPathFactory, varying: tuple[FakeJudge, VaryingJudge]
) -> Iterator[LocalServer]:
    fake, _ = varying
    local = LocalServer(
        Path(tmp_path_factory.mktemp("samples")),
        judge_url=fake.base_url,
        # One question asked 3 times: 3 pairs a chunk, so 12 pairs are 4 chunks.
        extra_env={"EVALSVC_CHUNK_JUDGE_CALLS": "9"},
    )
    local.start()
    yield local
    local.stop()


def test_three_samples_measure_the_judges_noise(
    sampled_server: LocalServer, varying: tuple[FakeJudge, VaryingJudge]
) -> None:
    fake, answers = varying
    base = sampled_server.base_url
    outputs = [f"Reset it with the button ({k})." for k in range(PAIRS)]
    data = [{"id": f"p{k:02d}", "input": f"How? ({k})", "output": o} for k, o in enumerate(outputs)]
    assert requests.post(
        f"{base}/data/seed/sampled", json={"data": data}, headers=HEADERS, timeout=30
    ).ok
    metrics_id = requests.post(
        f"{base}/specify_questions",
        json={"metrics": [QUESTION, "check:non_empty"]},
        headers=HEADERS,
        timeout=30,
    ).json()["metrics_id"]

    # When the user evaluates with three judge samples
    done = evalsvc(
        sampled_server,
        "evaluate",
        "--seed",
        "sampled",
        "--metrics",
        metrics_id,
        "--judge-samples",
        "3",
        "--json",
    )

    # Then the progress counted judge calls, three for each pair
    assert done.returncode == 0, done.stderr
    assert re.search(
        rf"evaluation ev_\w+: {3 * PAIRS}/{3 * PAIRS} judge calls \(100%\)", done.stderr
    )
    body = json.loads(done.stdout)
    assert body["status"] == "complete" and body["judge_samples"] == 3
    # Every call the judge received was metered, and so is an attempt that never reached it
    # (a connection a loaded machine dropped, asked again): a call is never a lost sample
    asked = len(fake.verdicts_asked())
    assert body["usage"]["llm_calls"] >= asked >= 3 * PAIRS
    assert all(request["temperature"] > 0 for request in fake.requests)
    scored = requests.get(
        f"{base}/evaluation/{body['results_id']}?includeAllScores=true", headers=HEADERS, timeout=30
    ).json()["all_scored_pairs"]
    # each pair's score is the mean of the three answers kept for it, which are answers the
    # judge gave to that pair's prompt (all it gave, unless a call was asked again)
    kept = {s["pair_id"]: s["samples"] for s in scored[0]}
    assert all("samples" not in s for s in scored[1])  # the check: one score, no samples
    samples = []
    for k, output in enumerate(outputs):
        given, mine = answers.scores_for(output), kept[f"p{k:02d}"]
        assert len(mine) == 3 and not Counter(mine) - Counter(given), (mine, given)
        samples.append(mine)
    assert asked > 3 * PAIRS or all(
        sorted(kept[f"p{k:02d}"]) == sorted(answers.scores_for(o)) for k, o in enumerate(outputs)
    )
    by_id = {s["pair_id"]: s["score"] for s in scored[0]}
    for k, mine in enumerate(samples):
        assert by_id[f"p{k:02d}"] == pytest.approx(np.mean(mine), abs=1e-12)
    # and the judge's noise is the spread of those answers (none for the check)
    expected = float(np.sqrt(np.mean(np.var(np.array(samples, dtype=float), ddof=1, axis=1))))
    noise = body["score_judge_noise_sds"]
    assert expected > 0
    assert noise[0] == pytest.approx(expected, abs=1e-6) and noise[1] is None
    assert body["score_means"][0] == pytest.approx(np.mean(samples), abs=1e-9)

    # The same evaluation again, inside a plain request: every sample cached, no call
    calls = len(fake.requests)
    again = requests.post(
        f"{base}/evaluate",
        json={"seed_data_id": "sampled", "metrics_id": metrics_id, "judge_samples": 3},
        headers=HEADERS,
        timeout=60,
    )
    assert again.status_code == 200, again.text
    assert len(fake.requests) == calls
    scores = again.json()["scores"]
    assert scores[0]["judge_noise_sd"] == pytest.approx(expected, abs=1e-6)
    assert scores[1]["judge_noise_sd"] is None
