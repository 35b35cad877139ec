"""Idempotency-Key on POST and PUT: one execution, the first answer replayed."""

from __future__ import annotations

import boto3
import pytest

from tests.integration.conftest import Tenant, ok
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
    items = boto3.client("dynamodb").scan(TableName=tables["EVALSVC_DATASETS_TABLE"])["Items"]
    assert sum(1 for i in items if i["sk"]["S"] == "dataset") == 1


def test_a_retried_pair_addition_adds_one_pair(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": []}))
    pair = {"input": "q", "output": "a"}

    first = acme.http.post("/v1/data/seed/ds/pair", json=pair, headers=keyed(acme, "pair-1"))
    again = acme.http.post("/v1/data/seed/ds/pair", json=pair, headers=keyed(acme, "pair-1"))
    other = acme.http.post("/v1/data/seed/ds/pair", json=pair, headers=keyed(acme, "pair-2"))

    assert first.json() == again.json()
    assert other.json()["pair_id"] != first.json()["pair_id"]
    assert len(acme.get("/data/seed/ds").json()["data"]) == 2


def test_the_same_key_with_another_body_is_422(acme: Tenant) -> None:
    ok(acme.http.post("/v1/data/seed", json={"data": []}, headers=keyed(acme, "k")))

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
    ok(acme.post("/data/seed/later", {"data": []}))

    retried = acme.http.post("/v1/data/seed/later/pair", json=pair, headers=keyed(acme, "retry-me"))

    assert missing.status_code == 404
    assert retried.status_code == 200
    assert retried.json() == {"dataset_id": "later", "pair_id": "p1"}


def test_a_retried_evaluation_runs_once(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": [{"input": "i", "output": "o"}]}))
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))

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
    ok(acme.post("/data/seed/ds", {"data": []}))
    response = acme.http.get("/v1/data/seed/ds", headers=keyed(acme, "irrelevant"))
    assert response.status_code == 200 and "idempotent-replay" not in response.headers


def test_idempotency_through_the_lambda_handler(event_key: str) -> None:
    event = with_header(load_event("create_seed_dataset"), "Idempotency-Key", "lambda-1")

    first = invoke("create_seed_dataset", event)
    second = invoke("create_seed_dataset", event)

    assert first == second
    assert first[0] == 200


def test_an_answer_too_large_for_a_record_is_kept_apart_and_replayed_exactly(
    acme: Tenant, tables: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.api.idempotency import SAVED_BODY_BYTES
    from evalsvc.storage.dynamo import item_size

    from tests.conftest import point_service_at
    from tests.fake_judge import FakeJudge, service_env
    from tests.integration.test_item_sizes import send, wide

    llm = FakeJudge()
    with llm.running():
        point_service_at(service_env(llm), monkeypatch)
        prompt = wide(60_000)  # 240 KB, in the answer twice
        data = {"data": [{"input": "i", "output": "o"}], "system_prompt": prompt}
        assert send(acme, "POST", "/data/seed/ds", data).status_code == 200
        ok(acme.post("/specify_questions", {"metrics": ["Is it polite?"]}))
        candidates = {"candidates": [{"prompt": "p", "score_means": [3]}]}
        body = {"seed_data_id": "ds", "prompt_comparison_results": candidates}
        first = send(acme, "POST", "/improve_prompt", body, **{"Idempotency-Key": "big"})
        again = send(acme, "POST", "/improve_prompt", body, **{"Idempotency-Key": "big"})

    assert first.status_code == again.status_code == 200, first.text[:200]
    assert len(first.content) > 2 * SAVED_BODY_BYTES
    assert again.content == first.content
    assert again.headers["idempotent-replay"] == "true"
    assert len(llm.requests) == 1
    items = boto3.client("dynamodb").scan(TableName=tables["EVALSVC_IDEMPOTENCY_TABLE"])["Items"]
    records = [i for i in items if not i["id"]["S"].startswith("body#")]
    parts = [i for i in items if i["id"]["S"].startswith("body#")]
    assert len(records) == 1
    assert item_size(records[0]) < 4096
    assert parts
    assert all(item_size(part) < 400 * 1024 for part in parts)


def test_a_large_evaluation_answer_is_kept_as_its_result_and_rendered_again(
    acme: Tenant, tables: dict[str, str]
) -> None:
    from evalsvc.api.idempotency import SAVED_BODY_BYTES
    from evalsvc.storage.dynamo import item_size

    ok(acme.post("/data/seed/ds", {"data": [{"input": "i", "output": "x" * 10} for _ in range(3)]}))
    # Checks whose definitions (echoed in the answer) are 1.5 KB each: no judge needed.
    definitions = [f'check:json_schema:{{"description": "{"d" * 1500}{k}"}}' for k in range(45)]
    created = acme.post("/specify_questions", {"metrics": definitions})
    assert created.status_code == 200, created.text[:300]
    body = {"seed_data_id": "ds"}
    first = acme.http.post("/v1/evaluate", json=body, headers=keyed(acme, "eval-big"))
    again = acme.http.post("/v1/evaluate", json=body, headers=keyed(acme, "eval-big"))

    assert first.status_code == again.status_code == 200, first.text[:200]
    assert len(first.content) > SAVED_BODY_BYTES
    assert again.json() == first.json()
    assert again.headers["idempotent-replay"] == "true"
    items = boto3.client("dynamodb").scan(TableName=tables["EVALSVC_IDEMPOTENCY_TABLE"])["Items"]
    records = [i for i in items if i["id"]["S"].startswith("evalsvc")]
    assert max(item_size(record) for record in records) < 4096
    assert not [i for i in items if i["id"]["S"].startswith("body#")]
    results = boto3.client("dynamodb").scan(TableName=tables["EVALSVC_RESULTS_TABLE"])["Items"]
    assert sum(1 for i in results if i["sk"]["S"] == "result") == 1
