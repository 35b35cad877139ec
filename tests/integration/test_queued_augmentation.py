"""POST /augment with large LLM work: the same work queue and workers as queued evaluations."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from evalsvc.storage import dynamo
from evalsvc_tools.local.tables import table_env_vars

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, fake_llm, service_env
from tests.integration.conftest import Tenant
from tests.work_queue import MAX_RECEIVES, FailsFirst, Work

SEEDS = 10


@pytest.fixture
def llm(work: Work, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    fake = FakeJudge()
    with fake.running():
        point_service_at(
            {
                **service_env(fake),
                "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.001",
                "EVALSVC_JUDGE_MAX_ATTEMPTS": "2",
                # More than 4 seed pairs is queued, 3 seeds a chunk
                "EVALSVC_INLINE_MAX_GENERATION_CALLS": "4",
                "EVALSVC_CHUNK_GENERATION_CALLS": "3",
            },
            monkeypatch,
        )
        yield fake


def seed(tenant: Tenant, count: int = SEEDS) -> None:
    data = [
        {"id": f"s{i}", "input": f"question {i}", "output": f"answer {i}"} for i in range(count)
    ]
    body = {"data": data, "system_prompt": "Be kind."}
    assert tenant.post("/data/seed/seeds", body).status_code == 200


def augment_async(tenant: Tenant, multiple: int = 2) -> str:
    response = tenant.http.post(
        "/v1/augment",
        json={"seed_data_id": "seeds", "multiple": multiple, "target_metric": "Is it kind?"},
        headers={**tenant.headers, "Prefer": "respond-async"},
    )
    assert response.status_code == 202, response.text
    body = response.json()
    assert (body["status"], body["pairs_done"], body["pairs_total"]) == (
        "running",
        0,
        SEEDS * multiple,
    )
    dataset_id: str = body["synthetic_data_id"]
    assert response.headers["Location"] == f"data/synthetic/{dataset_id}"
    return dataset_id


def stored_pairs(dataset_id: str) -> int:
    """Pair items stored under any version of synthetic dataset `dataset_id`."""
    table = f"test-{table_env_vars()['EVALSVC_DATASETS_TABLE']}"
    return sum(
        1 for item in dynamo.scan_all(table) if f"#synthetic#{dataset_id}#v#" in item["pk"]["S"]
    )


def pairs_of(tenant: Tenant, dataset_id: str) -> list[dict[str, Any]]:
    response = tenant.get(f"/data/synthetic/{dataset_id}")
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data


def test_a_queued_augmentation_is_unreadable_until_complete_then_whole(
    acme: Tenant, globex: Tenant, work: Work, llm: FakeJudge
) -> None:
    seed(acme)

    dataset_id = augment_async(acme)

    # While generated: a 503 with its progress, and it is not yet the latest synthetic dataset
    pending = acme.get(f"/data/synthetic/{dataset_id}")
    assert pending.status_code == 503
    assert "still being generated (0 of 20 pairs written)" in pending.json()["error"]
    assert pending.headers["Retry-After"].isdigit()
    assert acme.get("/data/synthetic/latest").status_code == 404
    assert globex.get(f"/data/synthetic/{dataset_id}").status_code == 404
    work.deliver(1)  # 3 of 10 seeds
    assert "(6 of 20 pairs written)" in acme.get(f"/data/synthetic/{dataset_id}").json()["error"]

    work.drain()

    data = pairs_of(acme, dataset_id)
    assert [p["id"] for p in data] == [f"s{i}.v{k}.llm" for i in range(SEEDS) for k in (1, 2)]
    assert stored_pairs(dataset_id) == 20
    assert data[0]["input"] == "question 0 (variant 1)"
    latest = acme.get("/data/synthetic/latest").json()
    assert latest["id"] == dataset_id and latest["system_prompt"] == "Be kind."
    assert len(llm.requests) == SEEDS


def test_a_plain_augment_that_cannot_wait_names_the_dataset_to_poll(
    acme: Tenant, work: Work, llm: FakeJudge
) -> None:
    seed(acme)

    response = acme.post("/augment", {"seed_data_id": "seeds", "multiple": 1})

    assert response.status_code == 503
    message = response.json()["error"]
    dataset_id = message.split("'")[1]
    assert f"GET /data/synthetic/{dataset_id}" in message
    work.drain()
    assert len(pairs_of(acme, dataset_id)) == SEEDS


def test_small_augmentations_still_run_inside_the_request(
    acme: Tenant, work: Work, llm: FakeJudge
) -> None:
    seed(acme, 4)

    response = acme.post("/augment", {"seed_data_id": "seeds", "multiple": 2})

    assert response.status_code == 200, response.text
    assert response.json()["synthetic_data_size"] == 8
    assert work.waiting() == 0


def test_queued_rules_variants_equal_the_inline_ones(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without an LLM, a respond-async request still queues (rules variants, reproducible)
    seed(acme)
    point_service_at({"EVALSVC_CHUNK_CHECKS": "6"}, monkeypatch)  # multiple 3: 2 seeds a chunk
    dataset_id = augment_async(acme, multiple=3)
    work.drain()

    inline = acme.post("/augment", {"seed_data_id": "seeds", "multiple": 3})

    assert inline.status_code == 200
    queued = [(p["id"], p["input"], p["output"]) for p in pairs_of(acme, dataset_id)]
    direct = [
        (p["id"], p["input"], p["output"])
        for p in pairs_of(acme, inline.json()["synthetic_data_id"])
    ]
    assert queued == direct and len(queued) == 30


def test_a_worker_that_dies_after_counting_is_not_counted_twice(
    acme: Tenant, work: Work, llm: FakeJudge
) -> None:
    seed(acme)
    real = work.chunk_handler
    deaths: list[object] = []

    def dies_once(event: dict[str, Any], context: Any) -> Any:
        real(event, context)
        if not deaths:
            deaths.append(event)
            receipt = event["Records"][0]["receiptHandle"]
            work.client.change_message_visibility(
                QueueUrl=work.queue_url, ReceiptHandle=receipt, VisibilityTimeout=0
            )
            raise RuntimeError("worker killed")
        return {"batchItemFailures": []}

    work.chunk_handler = dies_once
    dataset_id = augment_async(acme)

    assert work.drain() == 5  # 4 chunks, the first twice
    data = pairs_of(acme, dataset_id)
    assert len(data) == 20 and len({p["id"] for p in data}) == 20
    # The second delivery found its chunk counted and asked the LLM nothing
    assert len(llm.requests) == SEEDS


def test_a_failure_while_installing_the_dataset_leaves_it_absent_until_the_retry(
    acme: Tenant, work: Work, llm: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.logic import jobs

    seed(acme)
    install = FailsFirst(jobs.commit, "connection reset")
    monkeypatch.setattr(jobs, "commit", install)
    dataset_id = augment_async(acme)

    work.deliver(4)  # every chunk once: the last one's install fails

    assert acme.get(f"/data/synthetic/{dataset_id}").status_code == 503
    work.drain()
    assert install.calls == 2 and len(pairs_of(acme, dataset_id)) == 20
    assert len(llm.requests) == SEEDS


def test_an_llm_answering_nonsense_fails_the_job_and_leaves_no_pairs(
    acme: Tenant, work: Work, llm: FakeJudge
) -> None:
    seed(acme)

    def nonsense_for_seed_7(request: dict[str, Any]) -> tuple[int, str]:
        if "question 7" in request["messages"][-1]["content"]:
            return 200, json.dumps({"variants": []})
        return fake_llm(request)

    llm.answer = nonsense_for_seed_7
    dataset_id = augment_async(acme)

    work.drain()

    failed = acme.get(f"/data/synthetic/{dataset_id}")
    assert failed.status_code == 502
    message = failed.json()["error"]
    assert f"generating synthetic dataset {dataset_id!r} failed" in message
    assert f"chunk 2 (pairs 7-9), attempt {MAX_RECEIVES}" in message
    assert "'s7'" in message
    assert work.waiting() == 0 and work.waiting(work.dead_letter_url) == 0
    # The pairs written for the other chunks were removed with the failed job
    assert stored_pairs(dataset_id) == 0


def test_llm_throttling_slows_a_queued_augmentation_but_does_not_fail_it(
    acme: Tenant, work: Work, llm: FakeJudge
) -> None:
    seed(acme)
    served: list[int] = []

    def throttles_first(request: dict[str, Any]) -> tuple[int, str]:
        served.append(1)
        if len(served) <= 12:
            return 429, json.dumps({"error": "slow down"})
        return fake_llm(request)

    llm.answer = throttles_first
    dataset_id = augment_async(acme)

    work.drain()

    assert len(pairs_of(acme, dataset_id)) == 20
    assert work.waiting(work.dead_letter_url) == 0


def test_the_retry_of_a_plain_augment_finds_its_job_done_and_answers_the_v1_body(
    acme: Tenant, work: Work, llm: FakeJudge
) -> None:
    seed(acme)
    headers = {**acme.headers, "Idempotency-Key": "augment-once"}
    body = {"seed_data_id": "seeds", "multiple": 2}

    first = acme.http.post("/v1/augment", json=body, headers=headers)
    assert first.status_code == 503  # still running: not remembered, so the retry runs again
    work.drain()
    retry = acme.http.post("/v1/augment", json=body, headers=headers)

    assert retry.status_code == 200, retry.text
    made = retry.json()
    assert made["synthetic_data_id"] in first.json()["error"]
    assert (made["seed_data_size"], made["synthetic_data_size"]) == (SEEDS, 2 * SEEDS)
    assert len(llm.requests) == SEEDS  # the retry started nothing again


def test_an_install_that_committed_but_lost_its_answer_keeps_the_dataset_whole(
    acme: Tenant, work: Work, llm: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.core.errors import StorageUnavailable
    from evalsvc.logic import jobs

    real = jobs.commit
    lost: list[bool] = []

    def commits_then_times_out(writes: Any) -> bool:
        committed = real(writes)
        if not lost:
            lost.append(committed)
            raise StorageUnavailable("the answer was lost (a timeout)")
        return committed

    monkeypatch.setattr(jobs, "commit", commits_then_times_out)
    seed(acme)
    dataset_id = augment_async(acme)

    work.drain()

    # The install went through though its caller saw an error: the chunk was retried, found
    # the job complete, and nothing of the dataset was discarded.
    assert lost == [True]
    assert len(pairs_of(acme, dataset_id)) == 20
    assert stored_pairs(dataset_id) == 20
    assert work.waiting() == 0 and work.waiting(work.dead_letter_url) == 0
