"""Appending many pairs at once (what POST /otlp/v1/traces stores a trace export with): the
same contention-free appends as one pair's, ids already held skipped so that data sent again
adds nothing, counts exact, the dataset's limit kept, and nothing stored once the request's
time is out."""

from __future__ import annotations

import pytest
from evalsvc.core.errors import PayloadTooLarge, StorageUnavailable
from evalsvc.models.datasets import DatasetKind, Pair
from evalsvc.storage import datasets as store
from evalsvc.storage.datasets import appends

from tests.integration.conftest import Tenant, ok

SEED = DatasetKind.SEED


def pairs(*ids: str) -> list[Pair]:
    return [Pair(id=i, input=f"in {i}", output="out") for i in ids]


def never() -> bool:
    return False


def test_pairs_sent_again_add_nothing_and_the_counts_stay_exact(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": [{"id": "w0", "input": "i", "output": "o"}]}))

    first = store.add_new_pairs("acme", SEED, "ds", pairs("a", "b", "w0"), never)
    again = store.add_new_pairs("acme", SEED, "ds", pairs("b", "a", "c"), never)

    # w0 was written with the version, a and b appended: each is held once
    assert [p.id for p in first] == ["a", "b"]
    assert [p.id for p in again] == ["c"]
    header = store.get_header("acme", SEED, "ds")
    assert header is not None and header.pair_count == 4
    listed = ok(acme.get("/data/seed/ds")).json()["data"]
    assert sorted(p["id"] for p in listed) == ["a", "b", "c", "w0"]


def test_a_dataset_created_empty_takes_appends_and_is_not_created_twice(acme: Tenant) -> None:
    assert store.create_empty("acme", SEED, "traces")
    store.add_new_pairs("acme", SEED, "traces", pairs("a"), never)

    assert not store.create_empty("acme", SEED, "traces")

    data = ok(acme.get("/data/seed/traces")).json()
    assert [p["id"] for p in data["data"]] == ["a"] and data["system_prompt"] == ""
    # And it is the tenant's latest seed dataset, as one written by POST /data/seed is
    assert ok(acme.get("/data/seed/latest")).json()["id"] == "traces"


def test_the_dataset_limit_counts_only_the_new_pairs(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(appends, "MAX_PAIRS", 3)
    store.create_empty("acme", SEED, "ds")
    store.add_new_pairs("acme", SEED, "ds", pairs("a", "b"), never)

    # Sent again with one more: fits; two more: the limit is named and nothing is stored
    assert [p.id for p in store.add_new_pairs("acme", SEED, "ds", pairs("a", "b", "c"), never)] == [
        "c"
    ]
    with pytest.raises(PayloadTooLarge, match="limit of 3"):
        store.add_new_pairs("acme", SEED, "ds", pairs("d"), never)
    assert store.get_header("acme", SEED, "ds").pair_count == 3  # type: ignore[union-attr]


def test_out_of_time_stores_nothing_and_says_to_send_again(acme: Tenant) -> None:
    store.create_empty("acme", SEED, "ds")

    with pytest.raises(StorageUnavailable, match="send the same data again"):
        store.add_new_pairs("acme", SEED, "ds", pairs("a", "b"), lambda: True)

    assert ok(acme.get("/data/seed/ds")).json()["data"] == []
    assert [p.id for p in store.add_new_pairs("acme", SEED, "ds", pairs("a", "b"), never)] == [
        "a",
        "b",
    ]
