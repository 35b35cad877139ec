"""An overwrite is invisible until complete, and a failure part-way leaves the old dataset."""

from __future__ import annotations

import threading

import pytest
from evalsvc.core.errors import StorageUnavailable
from evalsvc.storage import dynamo

from tests.integration.conftest import Tenant, ok


def dataset(n: int, tag: str) -> dict[str, object]:
    return {
        "data": [{"id": f"{tag}{i}", "input": tag, "output": tag} for i in range(n)],
        "system_prompt": tag,
    }


def test_failure_midway_through_an_overwrite_keeps_the_old_dataset(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch, tables: dict[str, str]
) -> None:
    # Given a dataset of 60 pairs
    assert acme.post("/data/seed/ds", dataset(60, "old")).status_code == 200

    # When DynamoDB fails after the first batches of the overwrite
    real_call = dynamo.call
    batches = {"n": 0}

    def failing_call(operation: str, **kwargs: object) -> object:
        if operation == "batch_write_item" and any(
            "PutRequest" in r
            for r in next(iter(kwargs["RequestItems"].values()))  # type: ignore[union-attr]
        ):
            batches["n"] += 1
            if batches["n"] == 3:
                raise StorageUnavailable(
                    "storage is busy or unavailable; nothing was changed, retry shortly"
                )
        return real_call(operation, **kwargs)

    monkeypatch.setattr(dynamo, "call", failing_call)
    response = acme.post("/data/seed/ds", dataset(100, "new"))

    # Then the caller is told to retry, and readers still see the whole old dataset
    assert response.status_code == 503
    assert set(response.json()) == {"error"}
    monkeypatch.setattr(dynamo, "call", real_call)
    body = acme.get("/data/seed/ds").json()
    assert body["system_prompt"] == "old"
    assert [p["id"] for p in body["data"]] == [f"old{i}" for i in range(60)]

    # And the abandoned pairs were cleaned up
    import boto3

    items = boto3.client("dynamodb").scan(TableName=tables["EVALSVC_DATASETS_TABLE"])["Items"]
    assert sum(1 for i in items if i["sk"]["S"].startswith("p#")) == 60


def test_failure_of_the_commit_keeps_the_old_dataset(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok(acme.post("/data/seed/ds", dataset(5, "old")))
    real_call = dynamo.call

    def failing_commit(operation: str, **kwargs: object) -> object:
        if operation == "transact_write_items":
            raise StorageUnavailable(
                "storage is busy or unavailable; nothing was changed, retry shortly"
            )
        return real_call(operation, **kwargs)

    monkeypatch.setattr(dynamo, "call", failing_commit)
    assert acme.post("/data/seed/ds", dataset(7, "new")).status_code == 503
    monkeypatch.setattr(dynamo, "call", real_call)

    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == [
        f"old{i}" for i in range(5)
    ]


def test_readers_during_overwrites_see_one_version_or_the_other(
    served_tables: dict[str, str], acme: Tenant
) -> None:
    # Given a dataset being overwritten again and again in another thread
    ok(acme.post("/data/seed/ds", dataset(40, "a")))
    stop = threading.Event()
    errors: list[str] = []
    overwrites = [0]  # completed by the writer so far

    def overwrite() -> None:
        tags = ["b", "a"]
        while not stop.is_set():
            response = acme.post("/data/seed/ds", dataset(40, tags[overwrites[0] % 2]))
            if response.status_code != 200:
                errors.append(response.text)
            overwrites[0] += 1

    writer = threading.Thread(target=overwrite)
    writer.start()
    try:
        # When readers read it meanwhile, until several reads had an overwrite complete while
        # they were reading
        seen, overlapped = [], 0
        while overlapped < 3 and len(seen) < 400:
            before = overwrites[0]
            response = acme.get("/data/seed/ds")
            overlapped += overwrites[0] > before
            assert response.status_code == 200, response.text
            body = response.json()
            # Then each read is one whole version: 40 pairs, all of the same write
            tags = {p["input"] for p in body["data"]}
            assert len(body["data"]) == 40
            assert len(tags) == 1
            assert tags == {body["system_prompt"]}
            seen.append(body["system_prompt"])
    finally:
        stop.set()
        writer.join()
    assert errors == []
    # And the writer really ran during the reads: overwrites completed mid-read, and the
    # reads saw both versions
    assert overlapped >= 3, f"{len(seen)} reads, none overlapped an overwrite"
    assert set(seen) == {"a", "b"}


def test_concurrent_pair_additions_are_all_kept(
    served_tables: dict[str, str], acme: Tenant
) -> None:
    ok(acme.post("/data/seed/ds", {"data": []}))
    results: list[int] = []

    def add(start: int) -> None:
        for i in range(start, start + 8):
            results.append(
                acme.post(
                    "/data/seed/ds/pair", {"id": f"c{i}", "input": "i", "output": "o"}
                ).status_code
            )

    threads = [threading.Thread(target=add, args=(k * 100,)) for k in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert results.count(200) == 24
    ids = [p["id"] for p in acme.get("/data/seed/ds").json()["data"]]
    assert sorted(ids) == sorted(f"c{k * 100 + i}" for k in range(3) for i in range(8))
