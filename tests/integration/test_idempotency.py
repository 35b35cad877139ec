"""Idempotency-Key on POST and PUT: one execution, the first answer replayed."""

from __future__ import annotations

import boto3
import pytest

from tests.integration.conftest import Tenant
from tests.lambda_support import invoke, load_event, with_header


def keyed(tenant: Tenant, key: str) -> dict[str, str]:
    return {**tenant.headers, "Idempotency-Key": key}


def test_a_retried_create_returns_the_first_answer_and_creates_once(
    acme: Tenant, tables: dict[str, str]
) -> None:
    body = {"data": [{"input": "i", "output": "o"}], "system_prompt": "S"}

    first = acme.http.post("/v1/data/seed", json=body, headers=keyed(acme, "create-1"))
    second = acme.http.post("/v1/data/seed", json=body, headers=keyed(acme, "create-1"))

    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert "idempotent-replay" not in first.headers
    assert second.headers["idempotent-replay"] == "true"
    items = boto3.client("dynamodb").scan(TableName=tables["DATASETS_TABLE"])["Items"]
    assert sum(1 for i in items if i["sk"]["S"] == "dataset") == 1


def test_a_retried_pair_addition_adds_one_pair(acme: Tenant) -> None:
    acme.post("/data/seed/ds", {"data": []})
    pair = {"input": "q", "output": "a"}

    first = acme.http.post("/v1/data/seed/ds/pair", json=pair, headers=keyed(acme, "pair-1"))
    again = acme.http.post("/v1/data/seed/ds/pair", json=pair, headers=keyed(acme, "pair-1"))
    other = acme.http.post("/v1/data/seed/ds/pair", json=pair, headers=keyed(acme, "pair-2"))

    assert first.json() == again.json()
    assert other.json()["pair_id"] != first.json()["pair_id"]
    assert len(acme.get("/data/seed/ds").json()["data"]) == 2


def test_the_same_key_with_another_body_is_422(acme: Tenant) -> None:
    acme.http.post("/v1/data/seed", json={"data": []}, headers=keyed(acme, "k"))

    response = acme.http.post(
        "/v1/data/seed", json={"data": [], "system_prompt": "x"}, headers=keyed(acme, "k")
    )

    assert response.status_code == 422
    assert response.json()["error"].startswith(
        "this Idempotency-Key was already used with a different request body"
    )


def test_keys_are_scoped_to_the_tenant_and_the_route(acme: Tenant, globex: Tenant) -> None:
    acme_answer = acme.http.post("/v1/data/seed", json={"data": []}, headers=keyed(acme, "shared"))
    globex_answer = globex.http.post(
        "/v1/data/seed", json={"data": []}, headers=keyed(globex, "shared")
    )
    put_answer = acme.http.put("/v1/data/seed/x", json={"data": []}, headers=keyed(acme, "shared"))

    assert acme_answer.json()["id"] != globex_answer.json()["id"]
    assert "idempotent-replay" not in globex_answer.headers
    assert put_answer.json() == {"id": "x"}


def test_a_failed_request_is_not_remembered(acme: Tenant) -> None:
    pair = {"id": "p1", "input": "q", "output": "a"}
    missing = acme.http.post("/v1/data/seed/later/pair", json=pair, headers=keyed(acme, "retry-me"))
    acme.post("/data/seed/later", {"data": []})

    retried = acme.http.post("/v1/data/seed/later/pair", json=pair, headers=keyed(acme, "retry-me"))

    assert missing.status_code == 404
    assert retried.status_code == 200
    assert retried.json() == {"dataset_id": "later", "pair_id": "p1"}


def test_a_retried_evaluation_runs_once(acme: Tenant) -> None:
    acme.post("/data/seed/ds", {"data": [{"input": "i", "output": "o"}]})
    acme.post("/specify_questions", {"metrics": ["check:non_empty"]})

    first = acme.http.post(
        "/v1/evaluate", json={"seed_data_id": "ds"}, headers=keyed(acme, "eval-1")
    )
    second = acme.http.post(
        "/v1/evaluate", json={"seed_data_id": "ds"}, headers=keyed(acme, "eval-1")
    )

    assert first.json()["eval_results_id"] == second.json()["eval_results_id"]


@pytest.mark.parametrize("key", ["", "x" * 256, "with space", "tab\tkey"])
def test_a_malformed_key_is_400(acme: Tenant, key: str) -> None:
    response = acme.http.post("/v1/data/seed", json={"data": []}, headers=keyed(acme, key))
    assert response.status_code == 400
    assert response.json()["error"] == "Idempotency-Key must be 1-255 visible ASCII characters"


def test_reads_ignore_the_header(acme: Tenant) -> None:
    acme.post("/data/seed/ds", {"data": []})
    response = acme.http.get("/v1/data/seed/ds", headers=keyed(acme, "irrelevant"))
    assert response.status_code == 200 and "idempotent-replay" not in response.headers


def test_idempotency_through_the_lambda_handler(event_key: str) -> None:
    event = with_header(load_event("create_seed_dataset"), "Idempotency-Key", "lambda-1")

    first = invoke("create_seed_dataset", event)
    second = invoke("create_seed_dataset", event)

    assert first == second
    assert first[0] == 200
