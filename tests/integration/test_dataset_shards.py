"""How many partition keys a dataset version takes: its written pairs as many shards as their
write needs (one for a small one), its appended pairs shards of their own spread over
EVALSVC_DATASET_SHARDS. Every reader finds every pair once, in order; an id stays unique across
the two parts; what was stored before (headers without `append_shards`, job params without it)
still reads."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest
from evalsvc.core.errors import Conflict
from evalsvc.core.identifiers import CLIENT_ID_PATTERN
from evalsvc.core.settings import get_settings
from evalsvc.logic import jobs
from evalsvc.logic.kinds import evaluation
from evalsvc.models.datasets import DatasetKind, PageCursor, Pair
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.models.jobs import Job
from evalsvc.storage import datasets as store
from evalsvc.storage import dynamo
from evalsvc.storage.datasets import history, keys, versions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import dataset_stream
from tests.integration.conftest import Tenant

SEED = DatasetKind.SEED


def _pair(pair_id: str, labels: Sequence[str] = ()) -> Pair:
    return Pair(id=pair_id, input=f"in {pair_id}", output="out", labels=list(labels))


def _items_by_pk(table: str, prefix: str) -> dict[str, list[dict[str, Any]]]:
    """Every item whose partition key starts with `prefix`, by partition key."""
    found: dict[str, list[dict[str, Any]]] = {}
    for item in dynamo.scan_all(table):
        if item["pk"]["S"].startswith(prefix):
            found.setdefault(item["pk"]["S"], []).append(item)
    return found


def _pair_ids(items: list[dict[str, Any]]) -> set[str]:
    return {item["sk"]["S"][2:] for item in items if item["sk"]["S"].startswith("p#")}


@contextmanager
def _shard_write_units(units: int) -> Iterator[None]:
    """Versions written meanwhile take a shard per `units` write units."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keys, "SHARD_WRITE_UNITS", units)
        yield


class DynamoCalls:
    """The service's DynamoDB calls by operation (as bench/harness.CallCounter counts them)."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        dynamo.client().meta.events.register("before-call.dynamodb", self._count)

    def _count(self, event_name: str, **_: Any) -> None:
        self.calls[event_name.rsplit(".", 1)[-1]] += 1

    def take(self) -> Counter[str]:
        calls, self.calls = self.calls, Counter()
        return calls


# ---- the layout ---------------------------------------------------------------------------------


def test_a_small_write_takes_one_shard_and_its_appends_spread_over_their_own(
    acme: Tenant, tables: dict[str, str]
) -> None:
    # Given a dataset of 200 small pairs written in one request
    acme.post(
        "/data/seed/ds",
        {"data": [{"id": f"p{i}", "input": "i", "output": "o"} for i in range(200)]},
    )
    written = store.get_header("acme", SEED, "ds")
    assert written is not None
    assert (written.shards, written.append_shards) == (1, get_settings().dataset_shards)

    # When 40 pairs are appended to it
    for i in range(40):
        acme.post("/data/seed/ds/pair", {"id": f"a{i}", "input": "i", "output": "o"})

    # Then the written pairs are under the version's own key, and each appended pair in the
    # append shard its id hashes to, with that shard's counter; every append shard is used
    version_key = keys.version_pk("acme", SEED, "ds", written.version)
    by_pk = _items_by_pk(tables["EVALSVC_DATASETS_TABLE"], version_key)
    assert _pair_ids(by_pk.pop(version_key)) == {f"p{i}" for i in range(200)}
    spread = get_settings().dataset_shards
    assert set(by_pk) == {keys.append_pk(version_key, k) for k in range(spread)}
    for pk, items in by_pk.items():
        for pair_id in _pair_ids(items):
            assert keys.append_pk(version_key, keys.shard_of(pair_id, spread)) == pk
        assert any(item["sk"]["S"] == keys.COUNT_SK for item in items)
    header = store.get_header("acme", SEED, "ds")
    assert header is not None and header.pair_count == 240
    listed = [p["id"] for p in acme.get("/data/seed/ds").json()["data"]]
    assert listed == [f"p{i}" for i in range(200)] + [f"a{i}" for i in range(40)]


def test_a_larger_write_takes_a_shard_per_thousand_write_units(
    acme: Tenant, tables: dict[str, str]
) -> None:
    # 200 small pairs take 400 write units (2 each: the item and its by_order entry): at a
    # shard per 100 units, 4 shards
    with _shard_write_units(100):
        store.write_dataset("acme", SEED, "ds", [_pair(f"p{i}") for i in range(200)], "")
    header = store.get_header("acme", SEED, "ds")
    assert header is not None and header.shards == 4
    assert header.append_shards == get_settings().dataset_shards

    version_key = keys.version_pk("acme", SEED, "ds", header.version)
    by_pk = _items_by_pk(tables["EVALSVC_DATASETS_TABLE"], version_key)
    assert set(by_pk) == {keys.shard_pk(version_key, 4, k) for k in range(4)}
    for pk, items in by_pk.items():
        assert {keys.shard_pk(version_key, 4, keys.shard_of(i, 4)) for i in _pair_ids(items)} == {
            pk
        }
    store.add_pair("acme", SEED, "ds", _pair("late"))
    _, pairs = store.read_dataset("acme", SEED, "ds", 10**9)
    assert [p.id for p in pairs] == [f"p{i}" for i in range(200)] + ["late"]


def test_a_write_of_the_most_shards_takes_its_appends_in_them_as_before(
    acme: Tenant, tables: dict[str, str]
) -> None:
    spread = get_settings().dataset_shards
    with _shard_write_units(1):
        store.write_dataset("acme", SEED, "ds", [_pair(f"p{i}") for i in range(100)], "")
    header = store.get_header("acme", SEED, "ds")
    assert header is not None and (header.shards, header.append_shards) == (spread, 0)

    store.add_pair("acme", SEED, "ds", _pair("late"))
    with pytest.raises(Conflict):
        store.add_pair("acme", SEED, "ds", _pair("p7"))

    version_key = keys.version_pk("acme", SEED, "ds", header.version)
    by_pk = _items_by_pk(tables["EVALSVC_DATASETS_TABLE"], version_key)
    assert set(by_pk) == {keys.shard_pk(version_key, spread, k) for k in range(spread)}
    late = keys.shard_pk(version_key, spread, keys.shard_of("late", spread))
    assert "late" in _pair_ids(by_pk[late])
    _, pairs = store.read_dataset("acme", SEED, "ds", 10**9)
    assert [p.id for p in pairs] == [f"p{i}" for i in range(100)] + ["late"]


def test_an_empty_dataset_has_no_written_shard_and_appends_spread(
    acme: Tenant, tables: dict[str, str]
) -> None:
    # plum-sdk's path: an empty dataset for a system prompt, then every pair appended
    for i in range(48):
        pair = {"id": f"c{i}", "input": "i", "output": "o", "system_prompt_template": "S"}
        assert acme.post("/data/seed/pair", pair).status_code == 200
    dataset_id = store.dataset_id_for_prompt("acme", "S")
    assert dataset_id is not None
    header = store.get_header("acme", SEED, dataset_id)
    assert header is not None and header.shards == 0 and header.pair_count == 48

    version_key = keys.version_pk("acme", SEED, dataset_id, header.version)
    by_pk = _items_by_pk(tables["EVALSVC_DATASETS_TABLE"], version_key)
    assert version_key not in by_pk
    assert len(by_pk) == get_settings().dataset_shards  # no counter or pair in only one
    assert sum(len(_pair_ids(items)) for items in by_pk.values()) == 48


# ---- ids stay unique across the written and the appended pairs ---------------------------------


@pytest.mark.parametrize("units", [1000, 100])
def test_an_id_written_with_the_version_is_409_when_appended(
    acme: Tenant, tables: dict[str, str], units: int
) -> None:
    # Given a version written over 1 or 4 shards (ids hash to other append shards than written)
    with _shard_write_units(units):
        store.write_dataset("acme", SEED, "ds", [_pair(f"w{i}") for i in range(200)], "")

    # When a written id is appended first, then after an append marked the version
    with pytest.raises(Conflict):
        store.add_pair("acme", SEED, "ds", _pair("w3"))
    marked = store.get_header("acme", SEED, "ds")
    assert marked is not None and not marked.appended  # a 409 writes nothing
    store.add_pair("acme", SEED, "ds", _pair("new"))
    for pair_id in ("w3", "w199", "new"):
        with pytest.raises(Conflict):
            store.add_pair("acme", SEED, "ds", _pair(pair_id))

    # Then every id is there once
    _, pairs = store.read_dataset("acme", SEED, "ds", 10**9)
    assert [p.id for p in pairs] == [f"w{i}" for i in range(200)] + ["new"]
    header = store.get_header("acme", SEED, "ds")
    assert header is not None and header.pair_count == 201


def test_an_id_written_with_the_version_is_409_over_http(acme: Tenant) -> None:
    acme.post("/data/seed/ds", {"data": [{"id": "w", "input": "i", "output": "o"}]})
    acme.post("/data/seed/ds/pair", {"id": "a", "input": "i", "output": "o"})

    again = acme.post("/data/seed/ds/pair", {"id": "w", "input": "x", "output": "x"})

    assert again.status_code == 409
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["w", "a"]


_DATASETS = itertools.count()


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    written=st.lists(st.from_regex(CLIENT_ID_PATTERN, fullmatch=True), max_size=12, unique=True),
    appended=st.lists(st.from_regex(CLIENT_ID_PATTERN, fullmatch=True), max_size=10),
    reuse=st.lists(st.integers(0, 11), max_size=4),
    units=st.sampled_from([1000, 8, 1]),
    page=st.integers(1, 5),
)
def test_every_reader_finds_every_pair_once_whatever_the_ids_and_shards(
    tables: dict[str, str],
    written: list[str],
    appended: list[str],
    reuse: list[int],
    units: int,
    page: int,
) -> None:
    # Given a version written over 0, 1, some or all shards, then appends of new ids, of
    # written ids and of ids appended already (in any order)
    dataset_id = f"ds{next(_DATASETS)}"
    tries = appended + [written[k] for k in reuse if k < len(written)]
    labelled = {pair_id for k, pair_id in enumerate(written + tries) if k % 2}
    with _shard_write_units(units):
        store.write_dataset(
            "acme",
            SEED,
            dataset_id,
            [_pair(i, ["x"] if i in labelled else []) for i in written],
            "",
        )
    kept = list(written)
    for pair_id in tries:
        if pair_id in kept:
            with pytest.raises(Conflict):
                store.add_pair("acme", SEED, dataset_id, _pair(pair_id))
        else:
            store.add_pair(
                "acme", SEED, dataset_id, _pair(pair_id, ["x"] if pair_id in labelled else [])
            )
            kept.append(pair_id)

    # Then a whole read, pages, selections, key ranges and reads by id each find every pair
    # once, in the order they were stored
    header, pairs = store.read_dataset("acme", SEED, dataset_id, 10**9)
    assert [p.id for p in pairs] == kept
    assert header.pair_count == len(kept)
    counted = store.get_header("acme", SEED, dataset_id)
    assert counted is not None and counted.pair_count == len(kept)

    paged: list[str] = []
    cursor: PageCursor | None = None
    while True:
        _, some, cursor = store.read_page("acme", SEED, dataset_id, page, cursor, 10**9)
        paged += [p.id for p in some]
        if cursor is None:
            break
    assert paged == kept

    keys_only = store.select_pairs("acme", SEED, dataset_id, keys_only=True)
    assert [p.id for p in keys_only.pairs] == kept
    picked = [i for i in kept if i in labelled]
    assert [
        p.id for p in store.select_pairs("acme", SEED, dataset_id, labels=["x"]).pairs
    ] == picked
    newest = store.select_pairs("acme", SEED, dataset_id, latest_n=page)
    assert [p.id for p in newest.pairs] == kept[-page:]

    if kept:
        stored = store.stored_as_read(keys_only.header)
        whole = store.read_range(
            "acme", SEED, dataset_id, stored, keys_only.ords[0], keys_only.ords[-1], None
        )
        assert [p.id for p in whole] == kept
        chunked = [
            p.id
            for chunk in jobs.cut("evaluation", "acme", "ev", keys_only.ords, page)
            for p in store.read_range(
                "acme",
                SEED,
                dataset_id,
                stored,
                chunk.first_ord,
                chunk.last_ord,
                chunk.member_set(),
            )
        ]
        assert chunked == kept

    by_id = store.get_pairs(counted, [*reversed(kept), "absent", *kept], 10**9)
    assert sorted(by_id) == sorted(kept)
    within, skipped = store.get_pairs_within(counted, kept, 10**9)
    assert sorted(within) == sorted(kept) and not skipped


# ---- what a read costs --------------------------------------------------------------------------


def test_a_small_version_is_read_with_one_query(acme: Tenant) -> None:
    acme.post(
        "/data/seed/ds",
        {"data": [{"id": f"p{i}", "input": "i", "output": "o"} for i in range(10)]},
    )
    calls = DynamoCalls()

    _, pairs = store.read_dataset("acme", SEED, "ds", 10**9)
    read = calls.take()
    store.add_pair("acme", SEED, "ds", _pair("a"))
    calls.take()
    _, appended = store.read_dataset("acme", SEED, "ds", 10**9)
    read_appended = calls.take()

    assert len(pairs) == 10 and len(appended) == 11
    assert read == Counter({"GetItem": 2, "Query": 1})
    # Once a pair is appended: the written shard, every append shard, and their counters
    spread = get_settings().dataset_shards
    assert read_appended == Counter({"GetItem": 2, "BatchGetItem": 1, "Query": 1 + spread})


# ---- overwrites ---------------------------------------------------------------------------------


def test_an_overwrite_records_pairs_appended_after_it_read_the_header_and_the_purge_removes_them(
    acme: Tenant, tables: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a dataset never appended to, and an overwrite that reads its header, then (while
    # it writes its new pairs) meets the version's first append
    store.write_dataset("acme", SEED, "ds", [_pair("old")], "")
    old = store.get_header("acme", SEED, "ds")
    assert old is not None
    write_pairs = versions.put_version_pairs

    def write_then_append(*args: Any, **kwargs: Any) -> None:
        write_pairs(*args, **kwargs)
        store.add_pair("acme", SEED, "ds", _pair("appended"))

    monkeypatch.setattr(versions, "put_version_pairs", write_then_append)

    # When the overwrite commits
    store.write_dataset("acme", SEED, "ds", [_pair("new")], "")

    # Then the dataset is the new version, and the old one is kept, recorded with its append
    # shards and the pair appended to it: it reads whole by its record
    _, pairs = store.read_dataset("acme", SEED, "ds", 10**9)
    assert [p.id for p in pairs] == ["new"]
    (record,) = dataset_stream.records("acme", "ds")
    assert record.version == old.version and record.pairs == 2
    assert (record.shards, record.append_shards) == (1, old.append_shards)
    assert record.append_shards == get_settings().dataset_shards
    kept = store.read_range("acme", SEED, "ds", history.stored(record), "0", "~", None)
    assert sorted(p.id for p in kept) == ["appended", "old"]

    # And when its retention ends, the purge removes it whole, its append shards too
    dataset_stream.expire_all("acme", "ds")
    old_key = keys.version_pk("acme", SEED, "ds", old.version)
    assert _items_by_pk(tables["EVALSVC_DATASETS_TABLE"], old_key) == {}
    _, pairs = store.read_dataset("acme", SEED, "ds", 10**9)
    assert [p.id for p in pairs] == ["new"]


def test_an_overwrite_of_an_appended_version_keeps_both_parts_until_the_purge(
    acme: Tenant, tables: dict[str, str]
) -> None:
    store.write_dataset("acme", SEED, "ds", [_pair(f"w{i}") for i in range(5)], "")
    for i in range(20):
        store.add_pair("acme", SEED, "ds", _pair(f"a{i}"))
    old = store.get_header("acme", SEED, "ds")
    assert old is not None

    store.write_dataset("acme", SEED, "ds", [], "")

    header, pairs = store.read_dataset("acme", SEED, "ds", 10**9)
    assert pairs == [] and header.pair_count == 0
    old_key = keys.version_pk("acme", SEED, "ds", old.version)
    kept = _items_by_pk(tables["EVALSVC_DATASETS_TABLE"], old_key)
    assert sum(len(_pair_ids(items)) for items in kept.values()) == 25
    (record,) = dataset_stream.records("acme", "ds")
    assert (record.pairs, record.append_shards) == (25, old.append_shards)

    dataset_stream.expire_all("acme", "ds")

    assert _items_by_pk(tables["EVALSVC_DATASETS_TABLE"], old_key) == {}


# ---- what was stored before ---------------------------------------------------------------------


def _store_spread_version(table: str) -> str:
    """A dataset as the service stored it before versions were sized: a header with `shards`
    16 and no `append_shards`, two written pairs and two appended ones in the written shards,
    with their shards' counters. Returns its version."""
    shards = 16
    version_key = keys.version_pk("acme", SEED, "old", "v1")
    header = {
        "pk": {"S": keys.dataset_pk("acme", SEED, "old")},
        "sk": {"S": "dataset"},
        "dataset_id": {"S": "old"},
        "system_prompt": {"S": ""},
        "created_ms": {"N": "1000"},
        "updated_ms": {"N": "1000"},
        "version": {"S": "v1"},
        "pair_count": {"N": "2"},
        "bytes": {"N": "4"},
        "shards": {"N": str(shards)},
        "appended": {"BOOL": True},
    }
    pairs = [
        ("w0", keys.make_ord(1000, 0)),
        ("w1", keys.make_ord(1000, 1)),
        ("a0", keys.append_ord(2000, "a0")),
        ("a1", keys.append_ord(3000, "a1")),
    ]
    items = [header]
    for pair_id, ord_ in pairs:
        pk = keys.shard_pk(version_key, shards, keys.shard_of(pair_id, shards))
        items.append(
            {
                "pk": {"S": pk},
                "sk": {"S": f"p#{pair_id}"},
                "ord": {"S": ord_},
                "b": {"N": "2"},
                "input": {"S": "in"},
                "output": {"S": "out"},
            }
        )
        if pair_id.startswith("a"):
            items.append(
                {
                    "pk": {"S": pk},
                    "sk": {"S": keys.COUNT_SK},
                    "n": {"N": "1"},
                    "b": {"N": "2"},
                }
            )
    for item in items:
        dynamo.call("put_item", TableName=table, Item=item)
    return "v1"


def test_a_version_spread_before_versions_were_sized_reads_and_takes_appends_as_before(
    acme: Tenant, tables: dict[str, str]
) -> None:
    version = _store_spread_version(tables["EVALSVC_DATASETS_TABLE"])

    header = store.get_header("acme", SEED, "old")
    assert header is not None and (header.shards, header.append_shards) == (16, 0)
    assert header.pair_count == 4 and header.bytes == 8
    assert [p["id"] for p in acme.get("/data/seed/old").json()["data"]] == ["w0", "w1", "a0", "a1"]
    assert store.get_pairs(header, ["a1", "w0"], 10**9).keys() == {"a1", "w0"}

    # An append goes to the written shards as before, and an id appended before is still taken
    store.add_pair("acme", SEED, "old", _pair("a2"))
    with pytest.raises(Conflict):
        store.add_pair("acme", SEED, "old", _pair("a0"))
    version_key = keys.version_pk("acme", SEED, "old", version)
    a2 = keys.shard_pk(version_key, 16, keys.shard_of("a2", 16))
    assert "a2" in _pair_ids(_items_by_pk(tables["EVALSVC_DATASETS_TABLE"], a2)[a2])
    header = store.get_header("acme", SEED, "old")
    assert header is not None and header.pair_count == 5

    # An overwrite replaces it, in the new layout, keeping it as it was stored (its appended
    # pairs in its written shards) until the purge removes it whole
    store.write_dataset("acme", SEED, "old", [_pair("n")], "")
    header = store.get_header("acme", SEED, "old")
    assert header is not None and header.shards == 1
    (record,) = dataset_stream.records("acme", "old")
    assert (record.version, record.shards, record.append_shards) == (version, 16, 0)
    assert record.pairs == 5
    kept = store.read_range("acme", SEED, "old", history.stored(record), "0", "~", None)
    assert sorted(p.id for p in kept) == ["a0", "a1", "a2", "w0", "w1"]
    dataset_stream.expire_all("acme", "old")
    assert _items_by_pk(tables["EVALSVC_DATASETS_TABLE"], version_key) == {}
    assert [p["id"] for p in acme.get("/data/seed/old").json()["data"]] == ["n"]


def test_a_chunk_of_a_job_started_before_versions_were_sized_reads_its_pairs(
    acme: Tenant, tables: dict[str, str]
) -> None:
    # Given a job whose params name the version and its shards alone, as jobs did
    version = _store_spread_version(tables["EVALSVC_DATASETS_TABLE"])
    selected = store.select_pairs("acme", SEED, "old", keys_only=True)
    [chunk] = jobs.cut(evaluation.EVALUATION, "acme", "ev_old", selected.ords, 10)
    job = Job(
        kind=evaluation.EVALUATION,
        tenant="acme",
        job_id="ev_old",
        chunk_count=1,
        pairs_total=4,
        created_ms=1,
        params={"dataset_version": version, "dataset_shards": 16, "labels": []},
    )
    result = EvaluationResult(
        tenant="acme",
        results_id="ev_old",
        dataset_kind=SEED,
        dataset_id="old",
        metrics_id="m",
        definitions=[],
        system_prompt="",
        created_ms=1,
        pair_count=4,
        summaries=[],
    )

    # Then its chunk reads every pair it names
    pairs = evaluation._read(chunk, result, job)

    assert [p.id for p in pairs] == ["w0", "w1", "a0", "a1"]
