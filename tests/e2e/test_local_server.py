"""The local run: keys from the CLI, persistence across restarts, docs."""

from __future__ import annotations

import http.client
import json
import signal
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import requests

from tests.e2e.conftest import DEV_KEY, LocalServer


def test_cli_key_is_printed_alone_on_the_last_line_and_works_until_revoked(
    server: LocalServer,
) -> None:
    created = server.cli(
        "keys", "create", "--tenant", "e2e-tenant", "--user", "eve", "--email", "eve@example.test"
    )
    assert created.returncode == 0, created.stderr
    key = created.stdout.rstrip("\n").splitlines()[-1]
    assert key.startswith("evk_") and " " not in key

    response = requests.post(
        f"{server.base_url}/data/seed/cli-ds",
        json={"data": []},
        headers={"Authorization": key},
        timeout=10,
    )
    assert response.status_code == 200

    listed = server.cli("keys", "list", "--tenant", "e2e-tenant")
    assert "eve@example.test" in listed.stdout and key not in listed.stdout

    key_id = next(
        line.split()[0] for line in listed.stdout.splitlines() if "eve@example.test" in line
    )
    assert server.cli("keys", "revoke", key_id).returncode == 0
    response = requests.get(
        f"{server.base_url}/data/seed/cli-ds", headers={"Authorization": key}, timeout=10
    )
    assert response.status_code == 401


def test_dev_tenant_cannot_see_another_tenants_dataset(server: LocalServer) -> None:
    other = server.cli(
        "keys", "create", "--tenant", "other", "--user", "o", "--email", "o@example.test"
    )
    other_key = other.stdout.splitlines()[-1]
    created = requests.post(
        f"{server.base_url}/data/seed/private",
        json={"data": []},
        headers={"Authorization": other_key},
        timeout=10,
    )
    assert created.status_code == 200, created.text

    response = requests.get(
        f"{server.base_url}/data/seed/private", headers={"Authorization": DEV_KEY}, timeout=10
    )

    assert response.status_code == 404


def test_docs_and_openapi_are_served(server: LocalServer) -> None:
    assert (
        "/data/seed/{id}"
        in requests.get(f"{server.base_url}/openapi.json", timeout=10).json()["paths"]
    )
    assert requests.get(f"{server.base_url}/docs", timeout=10).status_code == 200


def test_clean_stop_loses_nothing(fresh_server: LocalServer) -> None:
    fresh_server.start()
    headers = {"Authorization": DEV_KEY}
    for i in range(3):
        body = {"data": [{"id": f"p{i}", "input": "i", "output": "o"}]}
        assert requests.post(
            f"{fresh_server.base_url}/data/seed/ds{i}", json=body, headers=headers, timeout=10
        ).ok

    out = fresh_server.stop(signal.SIGTERM)
    fresh_server.start()

    assert "evalsvc stopped" in out
    for i in range(3):
        response = requests.get(
            f"{fresh_server.base_url}/data/seed/ds{i}", headers=headers, timeout=10
        )
        assert response.status_code == 200
        assert response.json()["data"][0]["id"] == f"p{i}"


def test_generated_dev_key_is_kept_across_restarts(fresh_server: LocalServer) -> None:
    env = fresh_server.env
    fresh_server.env = lambda: {k: v for k, v in env().items() if k != "EVALSVC_DEV_API_KEY"}  # type: ignore[method-assign]
    fresh_server.start()
    first = fresh_server.stop(signal.SIGTERM)
    fresh_server.start()
    second = fresh_server.stop(signal.SIGTERM)

    key_line = [line for line in first.splitlines() if line.startswith("evk_")]
    assert key_line and key_line == [
        line for line in second.splitlines() if line.startswith("evk_")
    ]


def test_64_concurrent_appenders_all_succeed_and_every_pair_is_kept(server: LocalServer) -> None:
    headers = {"Authorization": DEV_KEY}
    base = f"{server.base_url}/data/seed/appended"
    assert requests.post(base, json={"data": []}, headers=headers, timeout=30).status_code == 200
    answers: list[int] = []
    lock = threading.Lock()
    gate = threading.Barrier(64)

    def append(k: int) -> None:
        session = requests.Session()
        gate.wait()
        for i in range(4):
            pair = {"id": f"c{k:02d}-{i}", "input": f"question {k}.{i}", "output": "answer"}
            status = session.post(f"{base}/pair", json=pair, headers=headers, timeout=120)
            with lock:
                answers.append(status.status_code)

    threads = [threading.Thread(target=append, args=(k,)) for k in range(64)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert answers == [200] * 256
    stored = requests.get(base, headers=headers, timeout=60).json()["data"]
    assert sorted(pair["id"] for pair in stored) == sorted(
        f"c{k:02d}-{i}" for k in range(64) for i in range(4)
    )


def test_two_evaluations_and_a_compare_over_http(server: LocalServer) -> None:
    # Given the walk-through of docs/comparing-runs.md: v1 of the answers, then v2 that says please
    questions = [f"How do I change setting {i}?" for i in range(12)]

    def post(path: str, body: dict[str, object]) -> requests.Response:
        response = requests.post(
            f"{server.base_url}{path}", json=body, headers={"Authorization": DEV_KEY}, timeout=30
        )
        assert response.status_code == 200, response.text
        return response

    def evaluate(dataset_id: str, outputs: list[str]) -> str:
        data = [
            {"id": f"q{i}", "input": q, "output": o}
            for i, (q, o) in enumerate(zip(questions, outputs, strict=True))
        ]
        post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": "Answer briefly."})
        evaluated = post("/evaluate", {"seed_data_id": dataset_id, "metrics_id": metrics_id})
        return str(evaluated.json()["eval_results_id"])

    definitions = ["check:max_words:8", "check:contains:please"]
    metrics_id = post("/specify_questions", {"metrics": definitions}).json()["metrics_id"]
    v1 = evaluate("walk-v1", [f"Open Settings and change {i}." for i in range(12)])
    v2 = evaluate(
        "walk-v2",
        [f"Open Settings and change {i}, please." for i in range(10)]
        + ["Open Settings, then the advanced tab, and change it there.", "Open Settings."],
    )

    # When they are compared
    answer = post("/compare", {"baseline_id": v1, "candidate_id": v2}).json()

    # Then saying please improved, beyond noise, and the long answer is listed as a regression
    assert answer["pairs_matched"] == 12
    words, please = answer["metrics"]
    assert please["verdict"] == "improved" and (please["wins"], please["ties"]) == (10, 2)
    assert please["ci_low"] > 0
    assert words["verdict"] == "no_significant_difference" and words["losses"] == 1
    assert [(c["pair_id"], c["metric"]) for c in answer["regressions"]] == [
        ("q10", "check:max_words:8")
    ]
    assert answer["regressions"][0]["candidate_reason"]


def test_an_audit_sample_its_votes_and_the_agreement_over_http(server: LocalServer) -> None:
    # Given the walk-through of docs/agreement.md: a check that misses "Please" with a capital P
    headers = {"Authorization": DEV_KEY}
    base = server.base_url
    outputs = ["Open Settings, please.", "Settings, Data.", "Yes, please look.", "Please be sure."]
    data = [{"id": f"a{i}", "input": "q", "output": o} for i, o in enumerate(outputs)]
    assert requests.post(
        f"{base}/data/seed/audit-walk", json={"data": data}, headers=headers, timeout=10
    ).ok
    metrics_id = requests.post(
        f"{base}/specify_questions",
        json={"metrics": ["check:contains:please"]},
        headers=headers,
        timeout=10,
    ).json()["metrics_id"]
    evaluated = requests.post(
        f"{base}/evaluate",
        json={"seed_data_id": "audit-walk", "metrics_id": metrics_id},
        headers=headers,
        timeout=30,
    ).json()["eval_results_id"]

    # When a person votes on the whole audit sample, counting "Please" as polite
    sample = requests.get(
        f"{base}/evaluation/{evaluated}/audit_sample?metric_idx=0&n=4", headers=headers, timeout=10
    ).json()
    for pair in sample["pairs"]:
        vote = 1 if "please" in pair["output"].lower() else -1
        body = {"pair_id": pair["pair_id"], "metric_idx": 0, "vote": vote, "source": "audit"}
        assert requests.put(
            f"{base}/vote_eval_pair/{evaluated}", json=body, headers=headers, timeout=10
        ).ok

    # Then the agreement shows the miss: one +1 vote on a pair the check scored 1
    agreement = requests.get(
        f"{base}/evaluation/{evaluated}/agreement?source=audit", headers=headers, timeout=10
    ).json()["metrics"][0]
    assert sorted(p["pair_id"] for p in sample["pairs"]) == ["a0", "a1", "a2", "a3"]
    assert (agreement["positive"], agreement["negative"]) == (3, 1)
    assert agreement["confusion"]["1"] == {"-1": 1, "0": 0, "1": 1}
    assert agreement["auc"] == (2 + 0.5) / 3
    pooled = requests.get(f"{base}/question/{metrics_id}/agreement", headers=headers, timeout=10)
    assert pooled.json()["metrics"][0]["votes"] == 4


def _post_chunked(server: LocalServer, path: str, chunks: Iterator[bytes]) -> tuple[int, Any]:
    """POST with Transfer-Encoding: chunked (no Content-Length), as a streaming client sends."""
    parts = urlsplit(server.base_url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
    try:
        connection.request(
            "POST",
            f"{parts.path}{path}",
            body=chunks,
            headers={"Authorization": DEV_KEY, "Content-Type": "application/json"},
            encode_chunked=True,
        )
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def _body(total: int) -> Iterator[bytes]:
    head, tail = b'{"data": [{"input": "', b'", "output": "y"}]}'
    yield head
    left = total - len(head) - len(tail)
    while left > 0:
        yield b"x" * min(64 * 1024, left)
        left -= 64 * 1024
    yield tail


def test_a_chunked_body_past_the_limit_is_the_same_413_as_a_sized_one(
    server: LocalServer,
) -> None:
    from evalsvc.models.common import MAX_BODY_BYTES

    sized = requests.post(
        f"{server.base_url}/data/seed/chunked",
        data=b"".join(_body(MAX_BODY_BYTES + 1)),
        headers={"Authorization": DEV_KEY},
        timeout=60,
    )
    status, body = _post_chunked(server, "/data/seed/chunked", _body(MAX_BODY_BYTES + 1))

    assert sized.status_code == 413
    assert (status, body) == (413, sized.json())
    assert "larger than 4,669,440 bytes" in body["error"]
    missing = requests.get(
        f"{server.base_url}/data/seed/chunked", headers={"Authorization": DEV_KEY}, timeout=10
    )
    assert missing.status_code == 404
    # Within the limit, the same way of sending is read.
    status, body = _post_chunked(server, "/data/seed/chunked", _body(50_000))
    assert status == 200, body


def test_a_trailing_slash_is_a_404_not_a_redirect_to_the_host_header(server: LocalServer) -> None:
    response = requests.get(
        f"{server.base_url}/data/seed/x/",
        headers={"Authorization": DEV_KEY, "Host": "evil.example"},
        allow_redirects=False,
        timeout=10,
    )

    assert response.status_code == 404
    assert "location" not in response.headers
    assert response.json() == {"error": "no route GET /v1/data/seed/x/"}


def test_a_results_pairs_versions_and_rerun_over_http(server: LocalServer) -> None:
    def call(method: str, path: str, body: Any = None) -> Any:
        response = requests.request(
            method,
            f"{server.base_url}{path}",
            json=body,
            headers={"Authorization": DEV_KEY},
            timeout=30,
        )
        assert response.status_code == 200, response.text
        return response.json()

    # Given a result over a dataset that was then overwritten (the local server keeps every
    # version: it has no TTL)
    data = [{"id": f"r{i}", "input": f"q{i}", "output": f"please {i}"} for i in range(3)]
    call("POST", "/data/seed/repro", {"data": data})
    metrics = call("POST", "/specify_questions", {"metrics": ["check:contains:please"]})
    body = {"seed_data_id": "repro", "metrics_id": metrics["metrics_id"]}
    evaluated = call("POST", "/evaluate", body)
    call("POST", "/data/seed/repro", {"data": data[:1]})
    results_id = evaluated["eval_results_id"]

    # Then the local server serves the three routes
    pairs = call("GET", f"/evaluation/{results_id}/pairs?limit=2")
    assert [p["pair_id"] for p in pairs["pairs"]] == ["r0", "r1"]
    versions = call("GET", "/data/seed/repro/versions")["versions"]
    assert [(v["kind"], v["pairs"]) for v in versions] == [("overwrite", 1), ("create", 3)]
    again = call("POST", f"/evaluation/{results_id}/rerun")
    assert again["inputs"]["pairs_digest"] == evaluated["inputs"]["pairs_digest"]
