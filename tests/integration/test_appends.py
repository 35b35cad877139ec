"""Appending pairs without a hot item: order keys from time and id, counts kept apart, and a
queued chunk that names its pairs so one appended later in its key range stays out."""

from __future__ import annotations

import threading

import pytest
from evalsvc.logic import jobs
from evalsvc.logic.kinds.evaluation import EVALUATION
from evalsvc.models.datasets import DatasetKind, Pair
from evalsvc.storage import datasets as store
from evalsvc.storage import dynamo
from evalsvc.storage.datasets import appends, keys

from tests import dataset_stream
from tests.integration.conftest import Tenant, ok

SEED = DatasetKind.SEED


def _pair(pair_id: str, labels: list[str] | None = None) -> Pair:
    return Pair(id=pair_id, input=f"in {pair_id}", output="out", labels=labels or [])


def test_appended_pairs_are_counted_and_read_in_time_order(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": [{"id": "w0", "input": "i", "output": "o"}]}))
    for k, pair_id in enumerate(["zeta", "alpha", "mid"]):
        assert (
            acme.post(
                "/data/seed/ds/pair", {"id": pair_id, "input": "i" * (k + 1), "output": "o"}
            ).status_code
            == 200
        )

    header = store.get_header("acme", SEED, "ds")

    assert header is not None and header.pair_count == 4 and header.appended
    assert header.bytes == sum(
        len(p) + n + 1 for p, n in [("w0", 1), ("zeta", 1), ("alpha", 2), ("mid", 3)]
    )
    listed = acme.get("/data/seed/ds").json()["data"]
    assert [p["id"] for p in listed] == ["w0", "zeta", "alpha", "mid"]
    # Pages of one pair each walk the same order
    ids, cursor = [], None
    while True:
        params = {"limit": "1", **({"cursor": cursor} if cursor else {})}
        page = acme.get("/data/seed/ds", params=params).json()
        ids += [p["id"] for p in page["data"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert ids == ["w0", "zeta", "alpha", "mid"]


def test_a_full_dataset_refuses_another_append(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(appends, "MAX_PAIRS", 3)
    ok(acme.post("/data/seed/ds", {"data": [{"id": "w0", "input": "i", "output": "o"}]}))
    for pair_id in ("a", "b"):
        assert (
            acme.post(
                "/data/seed/ds/pair", {"id": pair_id, "input": "i", "output": "o"}
            ).status_code
            == 200
        )

    refused = acme.post("/data/seed/ds/pair", {"id": "c", "input": "i", "output": "o"})

    assert refused.status_code == 413
    assert refused.json() == {"error": "dataset 'ds' already holds 3 pairs, the limit"}
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["w0", "a", "b"]


def test_an_overwrite_drops_the_appended_counts_with_the_version(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": []}))
    for i in range(3):
        ok(acme.post("/data/seed/ds/pair", {"id": f"a{i}", "input": "i", "output": "o"}))

    ok(acme.post("/data/seed/ds", {"data": [{"id": "w", "input": "i", "output": "o"}]}))

    header = store.get_header("acme", SEED, "ds")
    assert header is not None and header.pair_count == 1 and not header.appended
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["w"]


def test_a_pair_appended_late_into_a_chunks_key_range_stays_out_of_the_chunk(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a selection cut into chunks, of appended pairs stamped at 1000, 2000, 3000 ms
    ok(acme.post("/data/seed/ds", {"data": []}))
    for ms, pair_id in [(1000, "a"), (2000, "c"), (3000, "e")]:
        monkeypatch.setattr(appends, "now_ms", lambda ms=ms: ms)
        store.add_pair("acme", SEED, "ds", _pair(pair_id, ["x"]))
    selected = store.select_pairs("acme", SEED, "ds", labels=["x"], keys_only=True)
    header, ords = selected.header, selected.ords
    [chunk] = jobs.cut(EVALUATION, "acme", "ev_1", ords, 10)
    # And an append that took its time (1500 ms) before the selection and landed after it
    monkeypatch.setattr(appends, "now_ms", lambda: 1500)
    store.add_pair("acme", SEED, "ds", _pair("b", ["x"]))

    stored = store.stored_as_read(header)
    read = store.read_range(
        "acme", SEED, "ds", stored, chunk.first_ord, chunk.last_ord, chunk.member_set(), ["x"]
    )
    whole_range = store.read_range(
        "acme", SEED, "ds", stored, chunk.first_ord, chunk.last_ord, None, ["x"]
    )

    # Then the chunk reads what it was given, though its key range now holds one more
    assert [p.id for p in selected.pairs] == ["a", "c", "e"]
    assert [p.id for p in read] == ["a", "c", "e"]
    assert [p.id for p in whole_range] == ["a", "b", "c", "e"]


def test_many_appenders_at_once_all_succeed_and_all_are_kept(
    served_tables: dict[str, str], acme: Tenant
) -> None:
    ok(acme.post("/data/seed/ds", {"data": []}))
    answers: list[int] = []
    gate = threading.Barrier(16)

    def add(k: int) -> None:
        gate.wait()
        for i in range(4):
            pair = {"id": f"c{k:02d}-{i}", "input": "i", "output": "o"}
            answers.append(acme.post("/data/seed/ds/pair", pair).status_code)

    threads = [threading.Thread(target=add, args=(k,)) for k in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert answers == [200] * 64
    ids = sorted(p["id"] for p in acme.get("/data/seed/ds").json()["data"])
    assert ids == sorted(f"c{k:02d}-{i}" for k in range(16) for i in range(4))
    header = store.get_header("acme", SEED, "ds")
    assert header is not None and header.pair_count == 64


def test_a_version_stored_before_pairs_were_spread_is_read_and_appended_to(
    acme: Tenant, tables: dict[str, str]
) -> None:
    # Given a dataset as the service stored it before: one partition key for the version, a
    # header without `shards` that counted appends itself and kept `last_ord`
    table = tables["EVALSVC_DATASETS_TABLE"]
    version_key = keys.version_pk("acme", SEED, "old", "v1")
    items = [
        {
            "pk": {"S": keys.dataset_pk("acme", SEED, "old")},
            "sk": {"S": "dataset"},
            "dataset_id": {"S": "old"},
            "system_prompt": {"S": ""},
            "created_ms": {"N": "1000"},
            "updated_ms": {"N": "1000"},
            "version": {"S": "v1"},
            "pair_count": {"N": "2"},
            "last_ord": {"S": keys.make_ord(1000, 1)},
            "bytes": {"N": "10"},
        },
        *[
            {
                "pk": {"S": version_key},
                "sk": {"S": f"p#{pair_id}"},
                "ord": {"S": keys.make_ord(1000, seq)},
                "b": {"N": "5"},
                "input": {"S": "in"},
                "output": {"S": "out"},
            }
            for seq, pair_id in enumerate(["p0", "p1"])
        ],
    ]
    for item in items:
        dynamo.call("put_item", TableName=table, Item=item)

    # Then it reads as before, takes an append, and counts it
    assert [p["id"] for p in acme.get("/data/seed/old").json()["data"]] == ["p0", "p1"]
    assert (
        acme.post("/data/seed/old/pair", {"id": "p2", "input": "i", "output": "o"}).status_code
        == 200
    )
    assert [p["id"] for p in acme.get("/data/seed/old").json()["data"]] == ["p0", "p1", "p2"]
    header = store.get_header("acme", SEED, "old")
    assert header is not None and header.shards == 1 and header.pair_count == 3
    assert header.bytes == 10 + 4
    # And an overwrite replaces it entirely: kept as it was (its one key, its count) until its
    # retention ends, then purged whole
    ok(acme.post("/data/seed/old", {"data": [{"id": "n", "input": "i", "output": "o"}]}))

    def left() -> list[dict[str, dict[str, str]]]:
        return list(
            dynamo.query_items(
                TableName=table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": version_key}},
            )
        )

    assert sorted(item["sk"]["S"] for item in left()) == ["count", "p#p0", "p#p1", "p#p2"]
    (record,) = dataset_stream.records("acme", "old")
    assert (record.version, record.shards, record.append_shards, record.pairs) == ("v1", 1, 0, 3)
    dataset_stream.expire_all("acme", "old")
    assert left() == []
    assert [p["id"] for p in acme.get("/data/seed/old").json()["data"]] == ["n"]


def test_a_pair_at_the_field_limits_is_appended_whole_in_its_parts(
    acme: Tenant, tables: dict[str, str]
) -> None:
    from evalsvc.models.datasets import MAX_LABEL_CHARS, MAX_LABELS, MAX_TEXT_CHARS

    ok(acme.post("/data/seed/ds", {"data": []}))
    big = {
        "id": "big",
        "input": "\U0001f600" * MAX_TEXT_CHARS,
        "output": "\U00010348" * MAX_TEXT_CHARS,
        "labels": [f"{k:02d}" + "\U0001f600" * (MAX_LABEL_CHARS - 2) for k in range(MAX_LABELS)],
    }

    assert acme.post("/data/seed/ds/pair", big).status_code == 200
    assert acme.post("/data/seed/ds/pair", big).status_code == 409

    [stored] = acme.get("/data/seed/ds").json()["data"]
    assert (stored["input"], stored["output"]) == (big["input"], big["output"])
    assert sorted(stored["metadata"]["labels"]) == sorted(big["labels"])
    items = list(dynamo.scan_all(tables["EVALSVC_DATASETS_TABLE"]))
    assert any(item["sk"]["S"].startswith("x#big#") for item in items)
    assert max(dynamo.item_size(item) for item in items) < 400 * 1024
