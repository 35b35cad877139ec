"""A catalogue of malformed requests across every route: each gets the right 4xx with
`{"error": ...}`, and storage is exactly as it was."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest

from tests.integration.conftest import Tenant, ok

HUGE = "x" * 100_001
RESULT = "{result}"  # replaced by the fixture's evaluation result id

CASES: list[tuple[str, str, Any, int]] = [
    # seed datasets: bodies
    ("POST", "/data/seed", {"data": [{"input": 5, "output": "o"}]}, 400),
    ("POST", "/data/seed", {"data": [{"input": "i", "output": "o", "labels": "x"}]}, 400),
    ("POST", "/data/seed", {"data": [{"input": "i", "output": "o", "labels": [None]}]}, 400),
    ("POST", "/data/seed", {"data": {"input": "i"}}, 400),
    ("POST", "/data/seed", {"data": [{"input": HUGE, "output": "o"}]}, 413),
    ("POST", "/data/seed", {"data": [{"input": "i", "output": "o", "id": "../etc"}]}, 400),
    ("POST", "/data/seed", {"data": [{"input": "i", "output": "o", "id": "a/b"}]}, 400),
    ("POST", "/data/seed", {"data": [{"input": "i", "output": "o", "id": "a b"}]}, 400),
    ("POST", "/data/seed", {"data": [], "system_prompt": ["x"]}, 400),
    ("POST", "/data/seed", {"data": [], "system_prompt": HUGE}, 413),
    ("POST", "/data/seed", b'{"data": [}', 400),
    ("POST", "/data/seed", b"\xef\xbb\xbf\xff", 400),
    ("POST", "/data/seed", b"[" * 5000 + b"]" * 5000, 400),
    ("POST", "/data/seed", b"null", 400),
    ("POST", "/data/seed", b"123", 400),
    ("POST", "/data/seed/ds", {"data": [{"input": "i", "output": True}]}, 400),
    ("POST", "/data/seed/ds", {"data": [{"input": "i", "output": "o", "input_media": 1}]}, 400),
    ("POST", "/data/seed/..", {"data": []}, 404),  # the client resolves it to /data: no route
    ("POST", "/data/seed/%2e%2e", {"data": []}, 400),
    ("POST", "/data/seed/a%20b", {"data": []}, 400),
    ("PUT", "/data/seed/latest", {"data": []}, 400),
    ("PUT", "/data/seed/ds", {"data": [{"id": "d", "input": "i", "output": "o"}] * 2}, 400),
    ("PUT", "/data/seed/ds", {"data": [{"input": "\ud800", "output": "o"}]}, 400),
    # pairs
    ("POST", "/data/seed/ds/pair", {"input": "i"}, 400),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "id": "p0"}, 409),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "labels": ["x"] * 33}, 413),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "labels": ["x" * 129]}, 413),
    (
        "POST",
        "/data/seed/ds/pair",
        {"input": "i", "output": "o", "input_media": "m" * 262_145},
        413,
    ),
    # E10's fields, on each route that writes a pair
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "reference": HUGE}, 413),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "reference": 1}, 400),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "reference": ["r"]}, 400),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "contexts": ["c"] * 21}, 413),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "contexts": ["c", ""]}, 400),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "contexts": ["c" * 20_001]}, 413),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "contexts": "c"}, 400),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "contexts": ["c", 2]}, 400),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o", "contexts": {"c": "d"}}, 400),
    ("PUT", "/data/seed/ds", {"data": [{"input": "i", "output": "o", "contexts": [None]}]}, 400),
    ("POST", "/data/seed", {"data": [{"input": "i", "output": "o", "reference": HUGE}]}, 413),
    (
        "POST",
        "/data/seed/pair",
        {"input": "i", "output": "o", "system_prompt_template": "T", "contexts": [""]},
        400,
    ),
    ("POST", "/data/seed/nope/pair", {"input": "i", "output": "o"}, 404),
    ("POST", "/data/seed/latest/pair", {"input": "i", "output": "o"}, 400),
    ("POST", "/data/seed/pair", {"input": "i", "output": "o"}, 400),
    ("POST", "/data/seed/pair", {"input": "i", "output": "o", "system_prompt_template": 1}, 400),
    # reads
    ("GET", "/data/seed/nope", None, 404),
    ("GET", "/data/seed/a%20b", None, 400),
    ("GET", "/data/seed/ds?limit=0", None, 400),
    ("GET", "/data/seed/ds?limit=-5", None, 400),
    ("GET", "/data/seed/ds?limit=99999999999999999999", None, 400),
    ("GET", "/data/seed/ds?cursor=%00%01", None, 400),
    ("GET", "/data/synthetic/latest", None, 404),
    ("GET", "/data/synthetic/a%2Fb", None, 404),  # an encoded slash is a slash: no route
    # metrics
    ("POST", "/specify_questions", {"metrics": []}, 400),
    ("POST", "/specify_questions", {"metrics": ["check:unknown"]}, 400),
    ("POST", "/specify_questions", {"metrics": ["check:max_words:-1"]}, 400),
    ("POST", "/specify_questions", {"metrics": ["check:json_schema:{"]}, 400),
    ("POST", "/specify_questions", {"metrics": [1.5]}, 400),
    ("POST", "/specify_questions", {"metrics": ["q"] * 51}, 413),
    ("GET", "/question/nope", None, 404),
    ("GET", "/question/..", None, 404),
    ("POST", "/questions", {"system_prompt": "The sky is blue."}, 400),
    ("POST", "/questions", {"system_prompt": None}, 400),
    # evaluate
    ("POST", "/evaluate", {}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "synthetic_data_id": "x"}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "pair_query": {"latest_n_pairs": -1}}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "pair_query": {"latest_n_pairs": 1e9}}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "pair_query": {"last_n_seconds": "60"}}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "pair_query": {"pair_labels": [7]}}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "pair_query": {"pair_labels": ["none"]}}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "metrics_id": "m_missing"}, 404),
    ("POST", "/evaluate", {"synthetic_data_id": "latest"}, 404),
    ("POST", "/evaluate", {"seed_data_id": "ds", "judge_samples": 0}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "judge_samples": 6}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "judge_samples": "2"}, 400),
    ("POST", "/evaluate", {"seed_data_id": "ds", "judge_samples": True}, 400),
    ("POST", "/evaluate/estimate", {"seed_data_id": "ds", "judge_samples": 2.5}, 400),
    # results and votes
    ("GET", "/evaluation/ev_missing", None, 404),
    ("GET", f"/evaluation/{RESULT}?includeAllScores=yes", None, 400),
    ("GET", "/evaluations?limit=0", None, 400),
    ("GET", "/evaluations?limit=true", None, 400),
    ("GET", f"/evaluations?cursor={RESULT}", None, 400),
    ("GET", f"/evaluations?cursor=1.{RESULT}%00", None, 400),
    ("GET", "/evaluations?seed_data_id=%2e%2e", None, 400),
    ("PUT", f"/vote_eval_pair/{RESULT}", {"pair_id": "p0", "metric_idx": 5, "vote": 1}, 400),
    ("PUT", f"/vote_eval_pair/{RESULT}", {"pair_id": "p0", "metric_idx": 0, "vote": 2}, 400),
    ("PUT", f"/vote_eval_pair/{RESULT}", {"pair_id": "p0", "metric_idx": 0, "vote": "1"}, 400),
    ("PUT", f"/vote_eval_pair/{RESULT}", {"pair_id": "p0", "metric_idx": 0, "vote": 1.0}, 400),
    ("PUT", f"/vote_eval_pair/{RESULT}", {"pair_id": "p0", "metric_idx": 0}, 400),
    ("PUT", f"/vote_eval_pair/{RESULT}", {"pair_id": "zz", "metric_idx": 0, "vote": 1}, 404),
    (
        "PUT",
        f"/vote_eval_pair/{RESULT}",
        {"pair_id": "p0", "metric_idx": 0, "vote": 1, "comment": "c" * 4001},
        413,
    ),
    ("PUT", "/vote_eval_pair/ev_missing", {"pair_id": "p0", "metric_idx": 0, "vote": 1}, 404),
    # comparisons and plans (E6)
    ("POST", "/compare", {"baseline_id": "ev_a", "candidate_id": "ev_b", "cluster_by": "x"}, 400),
    ("POST", "/plan", {"baseline_id": "ev_missing", "effect": 0.5}, 404),
    ("POST", "/plan", {"baseline_id": "ev_missing", "effect": 0}, 400),
    ("POST", "/plan", {"baseline_id": "ev_missing", "effect": 0.5, "power": 1}, 400),
    ("POST", "/plan", {"baseline_id": "ev_missing", "effect": 0.5, "alpha": 0.5}, 400),
    ("POST", "/plan", {"baseline_id": "ev_missing"}, 400),
    ("POST", "/plan", b'{"baseline_id": "ev_missing", "effect": NaN}', 400),
    # generation
    (
        "POST",
        "/improve_prompt",
        {"seed_data_id": "ds", "prompt_comparison_results": {"candidates": []}},
        400,
    ),
    (
        "POST",
        "/improve_prompt",
        {"seed_data_id": "ds", "prompt_comparison_results": {"candidates": [{"prompt": "p"}]}},
        400,
    ),
    (
        "POST",
        "/improve_prompt",
        {
            "seed_data_id": "ds",
            "prompt_comparison_results": {
                "candidates": [{"prompt": "p", "score_means": [1, 2, 3, 4]}]
            },
        },
        400,
    ),
    (
        "POST",
        "/improve_prompt",
        {
            "seed_data_id": "nope",
            "prompt_comparison_results": {"candidates": [{"prompt": "p", "score_means": [1]}]},
        },
        404,
    ),
    ("POST", "/improve_prompt", {"seed_data_id": "ds", "prompt_comparison_results": "x"}, 400),
    ("POST", "/augment", {"multiple": 0}, 400),
    ("POST", "/augment", {"multiple": 51}, 400),
    ("POST", "/augment", {"multiple": True}, 400),
    ("POST", "/augment", {"target_metric_idx": 3}, 400),
    ("POST", "/augment", {"eval_results_id": "ev_missing"}, 404),
    # routes and methods
    ("GET", "/nowhere", None, 404),
    ("DELETE", "/data/seed/ds", None, 405),
    ("PATCH", "/evaluate", {"seed_data_id": "ds"}, 405),
]


def snapshot(tables: dict[str, str]) -> str:
    """Every item of every table the requests could change (idempotency records aside)."""
    client = boto3.client("dynamodb")
    state = {}
    for var, table in sorted(tables.items()):
        if var == "EVALSVC_IDEMPOTENCY_TABLE":
            continue
        items = client.scan(TableName=table)["Items"]
        state[var] = sorted(json.dumps(item, sort_keys=True, default=str) for item in items)
    return json.dumps(state)


@pytest.fixture
def world(acme: Tenant) -> str:
    """A seed dataset `ds` with pair p0, a one-metric set and an evaluation; returns its id."""
    ok(
        acme.post(
            "/data/seed/ds",
            {"data": [{"id": "p0", "input": "i", "output": "o"}], "system_prompt": "S"},
        )
    )
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    return str(acme.post("/evaluate", {"seed_data_id": "ds"}).json()["eval_results_id"])


def test_the_catalogue_is_large_enough() -> None:
    assert len(CASES) >= 60
    assert len({(method, path.split("?")[0].split("/")[1]) for method, path, _, _ in CASES}) >= 12


@pytest.mark.parametrize(("method", "path", "body", "status"), CASES)
def test_malformed_request(
    acme: Tenant, world: str, tables: dict[str, str], method: str, path: str, body: Any, status: int
) -> None:
    before = snapshot(tables)
    kwargs: dict[str, Any] = {"headers": acme.headers}
    if isinstance(body, bytes):
        kwargs["content"] = body
    elif body is not None:
        kwargs["content"] = json.dumps(body).encode()

    response = acme.http.request(method, "/v1" + path.replace(RESULT, world), **kwargs)

    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()
    assert list(error) == ["error"] and error["error"].strip()
    assert snapshot(tables) == before
