"""Pairwise judging (E5) end to end: `evalsvc serve` in a subprocess with a fake judge that
prefers whatever it is shown first, the user's `evalsvc pairwise` against it over HTTP: the
bias shows in the position figures and cancels in the ranking."""

from __future__ import annotations

import json
import re

import requests

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.e2e.test_cli_local import evalsvc

HEADERS = {"Authorization": DEV_KEY}
QUESTION = "Which answer is more polite?"
PAIRS = 30


def seed_and_evaluate(server: LocalServer, name: str, outputs: list[str]) -> str:
    data = [
        {"id": f"p{k:02d}", "input": f"How do I reset it? ({k})", "output": text}
        for k, text in enumerate(outputs)
    ]
    base = server.base_url
    assert requests.post(
        f"{base}/data/seed/{name}", json={"data": data}, headers=HEADERS, timeout=30
    ).ok
    metrics = requests.post(
        f"{base}/specify_questions",
        json={"metrics": ["check:non_empty"]},
        headers=HEADERS,
        timeout=30,
    ).json()["metrics_id"]
    answer = requests.post(
        f"{base}/evaluate",
        json={"seed_data_id": name, "metrics_id": metrics},
        headers=HEADERS,
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["eval_results_id"])


def test_a_first_position_bias_cancels_when_both_orders_are_judged(server: LocalServer) -> None:
    # Three runs: "polite" says please on every pair, "mixed" on a third of them, "curt" never.
    # Where both or neither say please, the fake judge picks whatever it is shown first.
    polite = seed_and_evaluate(
        server, "pw-polite", [f"Please hold the button ({k})." for k in range(PAIRS)]
    )
    mixed = seed_and_evaluate(
        server,
        "pw-mixed",
        [f"Please hold it ({k})." if k % 3 == 0 else f"Hold it ({k})." for k in range(PAIRS)],
    )
    curt = seed_and_evaluate(server, "pw-curt", [f"Hold the button ({k})." for k in range(PAIRS)])
    # Given worst first: a judge that kept its bias would rank the first run up
    runs = [curt, mixed, polite]

    done = evalsvc(server, "pairwise", *runs, "--question", QUESTION, "--json")

    assert done.returncode == 0, done.stderr
    assert re.search(rf"pairwise judging pw_\w+: {PAIRS}/{PAIRS} pairs \(100%\)", done.stderr)
    body = json.loads(done.stdout)
    assert body["status"] == "complete" and body["pairs_used"] == PAIRS
    # The bias is there: in each comparison where the outputs are alike in politeness, each
    # order chose the output shown first
    position = body["position"]
    assert position["first_chosen"] > position["second_chosen"]
    assert position["consistency"] < 1
    # ...and cancelled: the ranking follows politeness, not the order the runs were given in
    assert [row["result_id"] for row in body["leaderboard"]] == [polite, mixed, curt]
    verdicts = {(m["a"], m["b"]): m for m in body["matchups"]}
    assert verdicts[(curt, polite)]["verdict"] == "b_better"
    assert verdicts[(curt, polite)]["b_wins"] == PAIRS and verdicts[(curt, polite)]["a_wins"] == 0
    assert verdicts[(curt, mixed)]["ties"] == PAIRS - PAIRS // 3

    # The tables a person reads, and the report page
    table = evalsvc(server, "pairwise", *runs, "--question", QUESTION)
    assert table.returncode == 0, table.stderr
    assert polite in table.stdout and "b better" in table.stdout.lower().replace("_", " ")
    page = requests.get(
        f"{server.base_url}/pairwise/{body['pairwise_id']}/report", headers=HEADERS, timeout=30
    )
    assert page.status_code == 200 and "Content-Security-Policy" in page.headers
