"""Against the local server, as a user meets it: every text at its field limit in 3-byte
characters, evaluated with an `Idempotency-Key` and replayed. (The result header once copied
the prompt and every definition and passed DynamoDB's item limit: a 500 after all the
scoring.)"""

from __future__ import annotations

import json
from typing import Any

import requests

from tests.e2e.conftest import DEV_KEY, LocalServer

THREE = "\u20ac"  # the euro sign: three bytes of UTF-8


def post(server: LocalServer, path: str, body: object, **headers: str) -> requests.Response:
    return requests.post(
        f"{server.base_url}{path}",
        data=json.dumps(body, ensure_ascii=False).encode(),
        headers={"Authorization": DEV_KEY, "Content-Type": "application/json", **headers},
        timeout=120,
    )


def test_the_reproduced_case_answers_200_and_its_replay_the_same_result(
    server: LocalServer,
) -> None:
    prompt = THREE * 100_000
    pairs: list[dict[str, Any]] = [
        {"id": "polite", "input": "question", "output": "please wait"},
        {"id": "curt", "input": "question", "output": "no"},
    ]
    written = post(server, "/data/seed/limits", {"data": pairs, "system_prompt": prompt})
    assert written.status_code == 200, written.text[:300]
    questions = [f"{k:02d}" + THREE * 1_998 for k in range(50)]
    specified = post(server, "/specify_questions", {"metrics": questions})
    assert specified.status_code == 200, specified.text[:300]
    body = {"seed_data_id": "limits", "metrics_id": specified.json()["metrics_id"]}

    first = post(server, "/evaluate", body, **{"Idempotency-Key": "limits-1"})
    replay = post(server, "/evaluate", body, **{"Idempotency-Key": "limits-1"})

    assert first.status_code == 200, first.text[:300]
    assert replay.status_code == 200, replay.text[:300]
    assert replay.headers["Idempotent-Replay"] == "true"
    assert replay.json() == first.json()
    assert [score["metric"] for score in first.json()["scores"]] == questions
    stored = requests.get(
        f"{server.base_url}/evaluation/{first.json()['eval_results_id']}",
        headers={"Authorization": DEV_KEY},
        timeout=60,
    )
    assert stored.status_code == 200
    assert stored.json()["system_prompt"] == prompt
