"""The end of a kept version's retention: DynamoDB's TTL removes its record, the datasets
table's stream hands the removed record to PurgeVersionsFunction, and every item of the version
goes, a tombstone left in its place (the stream as tests/dataset_stream.py plays it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from evalsvc.core.errors import StorageUnavailable
from evalsvc.models.datasets import DatasetKind, Pair
from evalsvc.storage import datasets as store
from evalsvc.storage import dynamo
from evalsvc.storage.datasets import history, keys
from evalsvc.storage.datasets.codec import INLINE_LIMIT

from tests.dataset_stream import (
    PurgeContext,
    Stream,
    purge,
    record_item,
    records,
    sequence,
    version_items,
)
from tests.integration.conftest import Tenant
from tests.log_capture import captured

SEED = DatasetKind.SEED
# A text of 4-byte characters past the item's inline limit: the pair is kept in parts.
LARGE = "\U0001f600" * (INLINE_LIMIT // 4 + 1)


def _pair(pair_id: str, text: str = "") -> Pair:
    return Pair(id=pair_id, input=text or f"in {pair_id}", output=f"out {pair_id}")


def _items_under(prefix: str) -> list[dict[str, Any]]:
    """Every item of the datasets table whose partition key starts with `prefix`."""
    table = keys.table()
    return [item for item in dynamo.scan_all(table) if item["pk"]["S"].startswith(prefix)]


def _ids(tenant: Tenant, dataset_id: str = "ds") -> list[str]:
    response = tenant.get(f"/data/seed/{dataset_id}")
    assert response.status_code == 200, response.text
    return [p["id"] for p in response.json()["data"]]


def _overwritten(tenant: str, dataset_id: str, old: Sequence[Pair], new: Sequence[Pair]) -> str:
    """A dataset written with `old`, then overwritten with `new`: the old version's id."""
    store.write_dataset(tenant, SEED, dataset_id, old, "")
    header = store.get_header(tenant, SEED, dataset_id)
    assert header is not None
    store.write_dataset(tenant, SEED, dataset_id, new, "")
    return header.version


def test_an_expired_version_is_purged_whole_and_leaves_its_tombstone(
    acme: Tenant, globex: Tenant, tables: dict[str, str]
) -> None:
    # Given a dataset written with a large pair (kept in parts), appended to (a large pair
    # too), then overwritten; and another tenant's dataset of the same id, also overwritten
    store.write_dataset("acme", SEED, "ds", [_pair("w0"), _pair("w1"), _pair("big", LARGE)], "")
    for pair in [_pair("a0"), _pair("a1"), _pair("abig", LARGE)]:
        store.add_pair("acme", SEED, "ds", pair)
    old = store.get_header("acme", SEED, "ds")
    assert old is not None
    store.write_dataset("acme", SEED, "ds", [_pair("n0"), _pair("n1")], "")
    globex_old = _overwritten("globex", "ds", [_pair("g0")], [_pair("g1")])
    globex_items = _items_under(keys.dataset_pk("globex", SEED, "ds"))

    # Then the old version is kept, recorded with its append shards, and reads whole by key
    (record,) = records("acme", "ds")
    assert record.version == old.version and record.pairs == 6
    assert (record.shards, record.append_shards) == (old.shards, old.append_shards)
    assert record.append_shards > 0 and record.expires_ms is not None
    kept = store.read_range("acme", SEED, "ds", history.stored(record), "0", "~", None)
    assert sorted(p.id for p in kept) == ["a0", "a1", "abig", "big", "w0", "w1"]
    assert next(p for p in kept if p.id == "abig").input == LARGE
    items = version_items("acme", "ds", old.version)
    sks = {item["sk"]["S"] for item in items}
    assert {"x#big#0000", "x#abig#0000", "count", "p#a0", "p#w0"} <= sks
    assert any("#a" in item["pk"]["S"].rsplit("#v#", 1)[1] for item in items)  # append shards

    # When TTL removes its record, and the purge gets the stream's record of that
    stream = Stream()
    removal = stream.expire("acme", "ds", record)
    with captured("INFO") as logs:
        assert purge(removal) == []

    # Then every item of the version is gone, its tombstone says when it expired, and nothing
    # else changed: the current version, and the other tenant's dataset and kept version
    assert version_items("acme", "ds", old.version) == []
    gone = history.get_gone("acme", SEED, "ds", old.version)
    assert gone == history.Gone(old.version, record.expires_ms)
    assert records("acme", "ds") == []
    assert _ids(acme) == ["n0", "n1"]
    assert _items_under(keys.dataset_pk("globex", SEED, "ds")) == globex_items
    assert [r.version for r in records("globex", "ds")] == [globex_old]
    assert _ids(globex) == ["g1"]
    # And the log says what was purged, never a text
    (line,) = [r for r in logs.records() if r["message"] == "purged an expired dataset version"]
    assert (line["tenant"], line["dataset_id"], line["version"]) == ("acme", "ds", old.version)
    assert line["items_deleted"] == len(items)
    text = str(logs.records())
    assert "in w0" not in text and "\\U0001f600" not in text and "\U0001f600" not in text

    # When the stream delivers it again
    before = _items_under(keys.dataset_pk("acme", SEED, "ds"))
    assert purge(removal) == []

    # Then nothing more changes
    assert _items_under(keys.dataset_pk("acme", SEED, "ds")) == before
    assert history.get_gone("acme", SEED, "ds", old.version) == gone


def test_a_removal_by_anyone_but_ttl_or_of_another_item_is_ignored(
    acme: Tenant, tables: dict[str, str]
) -> None:
    # Given an overwritten dataset, its old version kept
    old = _overwritten("acme", "ds", [_pair("o0"), _pair("o1")], [_pair("n0")])
    (record,) = records("acme", "ds")
    item = record_item("acme", "ds", record)
    kept = version_items("acme", "ds", old)
    assert kept
    stream = Stream()
    header = store.get_header("acme", SEED, "ds")
    assert header is not None
    header_item = dynamo.get_item(keys.table(), {"pk": item["pk"], "sk": {"S": keys.HEADER_SK}})
    assert header_item is not None
    inserted = {**stream.removal(item), "eventName": "INSERT"}
    elsewhere = {**item, "pk": {"S": keys.latest_pk("acme", SEED)}}
    unparsed = {**item, "pk": {"S": "T#acme#seed#d#s"}}

    # When the stream delivers the record's removal by a caller, its insert, and removals by
    # TTL of items that are no version record (a header, a record under another key)
    with captured("INFO") as logs:
        failed = purge(
            stream.removal(item, by_ttl=False),
            inserted,
            stream.removal(header_item),
            stream.removal(elsewhere),
            stream.removal(unparsed),
        )

    # Then none fails, and nothing is deleted or written
    assert failed == []
    assert version_items("acme", "ds", old) == kept
    assert history.get_gone("acme", SEED, "ds", old) is None
    assert records("acme", "ds") == [record]
    assert _ids(acme) == ["n0"]
    warnings = [r for r in logs.records() if r["level"] == "WARNING"]
    assert len(warnings) == 3
    assert {w["message"] for w in warnings} == {
        "an item removed by TTL is no version record; ignored"
    }


def test_a_purge_that_fails_is_the_only_record_of_its_batch_reported(
    acme: Tenant, tables: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two overwritten datasets whose kept versions both expire
    broken = _overwritten("acme", "broken", [_pair("b0"), _pair("b1")], [_pair("b2")])
    fine = _overwritten("acme", "fine", [_pair("f0")], [_pair("f1")])
    stream = Stream()
    (broken_record,) = records("acme", "broken")
    (fine_record,) = records("acme", "fine")
    first = stream.expire("acme", "broken", broken_record)
    second = stream.expire("acme", "fine", fine_record)
    # and storage that refuses the deletion of the first one's pairs
    batch_write: Callable[..., None] = dynamo.batch_write
    broken_pk = keys.version_pk("acme", SEED, "broken", broken)

    def refusing(table: str, requests: Sequence[dict[str, Any]], **kwargs: Any) -> None:
        if any(r["DeleteRequest"]["Key"]["pk"]["S"].startswith(broken_pk) for r in requests):
            raise StorageUnavailable("storage kept refusing 2 writes after 8 attempts; retry")
        batch_write(table, requests, **kwargs)

    monkeypatch.setattr(dynamo, "batch_write", refusing)

    # When the stream delivers both in one batch
    failed = purge(first, second)

    # Then only the first is reported failed (the stream retries from it); the second is purged
    assert failed == [sequence(first)]
    assert version_items("acme", "fine", fine) == []
    assert history.get_gone("acme", SEED, "fine", fine) is not None
    assert version_items("acme", "broken", broken) != []
    assert history.get_gone("acme", SEED, "broken", broken) is None

    # And when storage recovers, the retry (from the failed record on) purges it, harmlessly
    # delivering the second again
    monkeypatch.setattr(dynamo, "batch_write", batch_write)
    assert purge(first, second) == []
    assert version_items("acme", "broken", broken) == []
    assert history.get_gone("acme", SEED, "broken", broken) is not None
    assert _ids(acme, "broken") == ["b2"] and _ids(acme, "fine") == ["f1"]


def test_the_version_the_header_names_is_never_purged(acme: Tenant, tables: dict[str, str]) -> None:
    # Given a record that names the current version (no write of the service makes one)
    store.write_dataset("acme", SEED, "ds", [_pair("c0")], "")
    header = store.get_header("acme", SEED, "ds")
    assert header is not None
    record = dataclasses.replace(history.current(header), replaced_ms=1, expires_ms=2)
    item = history._record_item("acme", SEED, "ds", record)

    # When the stream says TTL removed it
    removal = Stream().removal(item)
    failed = purge(removal)

    # Then the purge fails (and the batch goes to the dead-letter queue after its retries),
    # deleting nothing
    assert failed == [sequence(removal)]
    assert _ids(acme) == ["c0"]
    assert history.get_gone("acme", SEED, "ds", header.version) is None


def test_a_purge_reached_with_too_little_time_left_is_left_for_the_next_invocation(
    acme: Tenant, tables: dict[str, str]
) -> None:
    old = _overwritten("acme", "ds", [_pair("o0")], [_pair("n0")])
    (record,) = records("acme", "ds")
    removal = Stream().expire("acme", "ds", record)

    # A record reached with under 2 minutes left is reported failed, untouched
    assert purge(removal, context=PurgeContext(left_ms=100_000)) == [sequence(removal)]
    assert version_items("acme", "ds", old) != []

    assert purge(removal) == []
    assert version_items("acme", "ds", old) == []
