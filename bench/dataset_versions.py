"""What keeping dataset versions (E7) costs, in DynamoDB calls, items and bytes, and in time and
memory where it is computed rather than stored.

1. versions: a dataset of N pairs (a few hundred bytes each, from a seeded generator) written,
   then overwritten K times, in moto in-process, two ways:
   - kept (the service as it is): each overwrite writes the new pairs and flips the header in
     one transaction that also records the version it replaces; nothing is deleted then. Once
     the records expire, the purge (logic.retention.purge_expired, as the table's stream hands
     it each record TTL removed) deletes each kept version and leaves its tombstone.
   - deleted at once (the behaviour before): the same overwrite, then the replaced version's
     items deleted inside the request (storage.datasets.versions._delete_version, as _commit
     did after the flip). Its transaction had no record: the record's put is left out of its
     figures, and the record itself is removed, uncounted, from the table.
   Per overwrite: the calls and the items written (put and deleted) and their bytes; then the
   items the datasets table holds and their bytes; a read of the current dataset with the kept
   versions and without them; and the purge's calls, against the deletes made at once.
2. selection: the pinned selection of a result of N pairs (reproduce.cut_pieces over the ords
   of one N-pair write): what storage.results.header.selection_field writes (the header's
   `selection` attribute, or its parts kept apart by storage.texts) and what
   storage.results.selection reads back, against N; then the same at the field limits (a
   128-character tenant and results id, appended pairs' ords with 128-character pair ids at
   every piece's ends) with the largest item against DynamoDB's 400 KB.
3. digest: a queued evaluation's pairs_digest for N pairs: each chunk's digests
   (reproducibility.pair_digest, as its worker computes them), the size they add to its
   totals, and the finish (logic.kinds.evaluation's `complete`, run on the chunks' totals as
   storage.jobs hands them over: parsed from their JSON one at a time) timed and measured with
   tracemalloc, with the digests and without them.

    .venv/bin/python bench/dataset_versions.py versions [--pairs 10000] [--overwrites 10]
    .venv/bin/python bench/dataset_versions.py selection [--pairs 1000 --pairs 10000 ...]
    .venv/bin/python bench/dataset_versions.py digest [--pairs 100000] [--chunk 2000]
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import random
import statistics
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, fresh_tables, shown

# isort: split

import boto3
from evalsvc.api.responses import MAX_COMPRESSIBLE_BYTES
from evalsvc.logic import datasets, reproduce, retention
from evalsvc.logic.kinds import evaluation as evaluation_kind
from evalsvc.logic.pairs_digest import pair_digest
from evalsvc.logic.scored_pairs import totals as chunk_totals
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind, PairIn, SeedDatasetIn
from evalsvc.models.evaluations import EvaluationResult, ResultInputs, ScoredPair
from evalsvc.models.jobs import Job, Tally
from evalsvc.spending.meter import Usage
from evalsvc.storage import dynamo, texts
from evalsvc.storage import results as results_store
from evalsvc.storage.datasets import history, keys, versions
from evalsvc.storage.datasets.keys import Stored, append_ord, make_ord
from evalsvc.storage.results import header as results_header
from evalsvc.storage.results import keys as results_keys
from evalsvc_tools.local.inprocess import moto_in_process

IDENTITY = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")
DATASET = "bench-ds"
PROMPT = "You are a helpful support assistant for an online shop."
ITEM_LIMIT = 400 * 1024
LONGEST_ID = "p" + "x" * 127  # identifiers.CLIENT_ID_PATTERN: 1-128 characters

# ---- realistic pairs ---------------------------------------------------------------------------

TOPICS = ["billing", "shipping", "returns", "account", "password", "invoice", "refund", "order"]
_VOCABULARY = (
    "the a my your our this that order account card address payment invoice parcel refund item "
    "items please can could would how when where why what which change update cancel return "
    "track send receive open press choose select enter save confirm check wait days hours "
    "settings profile page button link email phone number code delivery courier warehouse "
    "store online today yesterday week month again still already never always only also but "
    "and or if then so because after before during within until it is was will be been has "
    "have do does did not no yes thanks hello"
)
WORDS = _VOCABULARY.split()


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(WORDS, k=rng.randint(low, high))
    return " ".join(words).capitalize() + rng.choice(".?!")


def make_body(n: int, seed: int) -> SeedDatasetIn:
    """`n` pairs (ids pair-00000...: an overwrite replaces the same ids with new texts) of about
    100-250 characters of input and 150-450 of output, one to three labels; `seed` decides
    every text."""
    rng = random.Random(seed)
    data = []
    for i in range(n):
        topic = rng.choice(TOPICS)
        question = " ".join(_sentence(rng, 6, 14) for _ in range(rng.randint(1, 3)))
        answer = " ".join(_sentence(rng, 8, 16) for _ in range(rng.randint(2, 5)))
        labels = [
            topic,
            *rng.sample(["urgent", "vip", "mobile", "web", "email"], rng.randint(0, 2)),
        ]
        data.append(
            PairIn(id=f"pair-{i:05d}", input=f"[{topic}] {question}", output=answer, labels=labels)
        )
    return SeedDatasetIn(data=data, system_prompt=PROMPT)


# ---- counting items ----------------------------------------------------------------------------


def _category(item_or_key: dict[str, Any]) -> str:
    """What an item of the datasets table is, from its keys."""
    pk, sk = item_or_key["pk"]["S"], item_or_key["sk"]["S"]
    if "#v#" in pk:
        return "pairs"  # a version's items: pairs, their parts, append counters
    if sk.startswith(history.RECORD_PREFIX):
        return "record"
    if sk.startswith(history.GONE_PREFIX):
        return "tombstone"
    if sk == keys.HEADER_SK:
        return "header"
    return "pointers"  # the latest and prompt pointers, long texts' parts


class ItemCounter:
    """The items the service's DynamoDB calls put, delete and read back, and their bytes (as
    DynamoDB sizes an item), by the datasets table's categories."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.put: Counter[str] = Counter()
        self.put_bytes: Counter[str] = Counter()
        self.deleted: Counter[str] = Counter()
        self.read = 0
        self.read_bytes = 0
        events = dynamo.client().meta.events
        events.register("before-parameter-build.dynamodb", self._params)
        events.register("after-call.dynamodb", self._response)

    def _params(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        puts: list[dict[str, Any]] = []
        deletes: list[dict[str, Any]] = []
        if model.name == "BatchWriteItem":
            for requests in params.get("RequestItems", {}).values():
                puts += [r["PutRequest"]["Item"] for r in requests if "PutRequest" in r]
                deletes += [r["DeleteRequest"]["Key"] for r in requests if "DeleteRequest" in r]
        elif model.name == "TransactWriteItems":
            for action in params.get("TransactItems", []):
                if "Put" in action:
                    puts.append(action["Put"]["Item"])
                elif "Delete" in action:
                    deletes.append(action["Delete"]["Key"])
                elif "Update" in action:
                    puts.append(action["Update"]["Key"])
        elif model.name == "PutItem":
            puts.append(params["Item"])
        elif model.name == "DeleteItem":
            deletes.append(params["Key"])
        with self._lock:
            for item in puts:
                self.put[_category(item)] += 1
                self.put_bytes[_category(item)] += dynamo.item_size(item)
            for key in deletes:
                self.deleted[_category(key)] += 1

    def _response(self, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        items: list[dict[str, Any]] = []
        if model.name == "Query":
            items = parsed.get("Items", [])
        elif model.name == "GetItem" and "Item" in parsed:
            items = [parsed["Item"]]
        elif model.name == "BatchGetItem":
            items = [i for found in parsed.get("Responses", {}).values() for i in found]
        with self._lock:
            self.read += len(items)
            self.read_bytes += sum(dynamo.item_size(item) for item in items)

    def take(self) -> ItemCounter:
        """What was counted since the last take (a snapshot), counting again from zero."""
        with self._lock:
            snapshot = ItemCounter.__new__(ItemCounter)
            snapshot.put, snapshot.put_bytes = self.put, self.put_bytes
            snapshot.deleted, snapshot.read, snapshot.read_bytes = (
                self.deleted,
                self.read,
                self.read_bytes,
            )
            self.put, self.put_bytes, self.deleted = Counter(), Counter(), Counter()
            self.read = self.read_bytes = 0
        return snapshot


class Meter:
    """Calls and items together, taken together."""

    def __init__(self) -> None:
        self.calls = CallCounter()
        self.items = ItemCounter()

    def take(self) -> tuple[Counter[str], ItemCounter]:
        return self.calls.take(), self.items.take()


def _uncounted() -> Any:
    """A client of its own, whose calls no counter sees (the census, TTL's stand-in)."""
    return boto3.client("dynamodb", region_name="us-east-1")


def census() -> dict[str, tuple[int, int]]:
    """Items and bytes of the datasets table by what they are; the current version's pairs
    apart from the kept versions'."""
    header = datasets.get_header(IDENTITY, DatasetKind.SEED, DATASET)
    current = keys.version_pk(IDENTITY.tenant, DatasetKind.SEED, DATASET, header.version)
    rows: dict[str, list[int]] = {}
    for page in _uncounted().get_paginator("scan").paginate(TableName=keys.table()):
        for item in page["Items"]:
            name = _category(item)
            if name == "pairs":
                pk = item["pk"]["S"]
                name = "current pairs" if pk.startswith(current) else "kept pairs"
            row = rows.setdefault(name, [0, 0])
            row[0] += 1
            row[1] += dynamo.item_size(item)
    return {name: (count, size) for name, (count, size) in rows.items()}


# ---- 1. versions ---------------------------------------------------------------------------------


def _calls_split(calls: Counter[str]) -> str:
    other = sum(v for k, v in calls.items() if k not in {"BatchWriteItem", "TransactWriteItems"})
    return f"{calls['BatchWriteItem']} | {calls['TransactWriteItems']} | {other}"


def _mb(size: int) -> str:
    return f"{size / 1e6:.2f} MB"


def _overwrites(meter: Meter, n: int, overwrites: int, at_once: bool) -> list[str]:
    """Write the dataset, then overwrite it `overwrites` times; the table rows of each
    overwrite (with the deletes of the replaced version when `at_once`)."""
    datasets.write_seed_dataset(IDENTITY, DATASET, make_body(n, 0))
    meter.take()
    rows = []
    for k in range(1, overwrites + 1):
        body = make_body(n, k)
        previous = datasets.get_header(IDENTITY, DatasetKind.SEED, DATASET)
        meter.take()
        started = time.perf_counter()
        datasets.write_seed_dataset(IDENTITY, DATASET, body)
        if at_once:
            appended = previous.append_shards if previous.appended else 0
            stored = Stored(previous.version, previous.shards, appended)
            versions._delete_version(IDENTITY.tenant, DatasetKind.SEED, DATASET, stored)
        seconds = time.perf_counter() - started
        calls, items = meter.take()
        if at_once:
            # Before, the flip recorded nothing: its record is neither counted nor kept.
            items.put["record"] -= 1
            items.put_bytes["record"] = 0
            for record in _records():
                _uncounted().delete_item(TableName=keys.table(), Key=_key(record))
        put = sum(items.put.values())
        pairs = items.put["pairs"]
        rest = put - pairs
        rows.append(
            f"| {k} | {shown(calls)} | {_calls_split(calls)} | {pairs:,} + {rest} "
            f"({_mb(sum(items.put_bytes.values()))}) | {sum(items.deleted.values()):,} | "
            f"{seconds:.1f} |"
        )
    return rows


def _records() -> list[dict[str, Any]]:
    """The items of the dataset's version records, oldest first."""
    response = _uncounted().query(
        TableName=keys.table(),
        KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues={
            ":pk": {"S": keys.dataset_pk(IDENTITY.tenant, DatasetKind.SEED, DATASET)},
            ":prefix": {"S": history.RECORD_PREFIX},
        },
        ConsistentRead=True,
    )
    items: list[dict[str, Any]] = response["Items"]
    return items


def _key(item: dict[str, Any]) -> dict[str, Any]:
    return {"pk": item["pk"], "sk": item["sk"]}


def _read(meter: Meter) -> str:
    meter.take()
    started = time.perf_counter()
    dataset = datasets.read_dataset(
        IDENTITY, DatasetKind.SEED, DATASET, max_bytes=MAX_COMPRESSIBLE_BYTES
    )
    seconds = time.perf_counter() - started
    calls, items = meter.take()
    return (
        f"{shown(calls)} | {items.read:,} items, {_mb(items.read_bytes)} | "
        f"{len(dataset.pairs):,} | {seconds:.1f}"
    )


def _census_rows(title: str, rows: dict[str, tuple[int, int]]) -> list[str]:
    order = ["current pairs", "kept pairs", "record", "tombstone", "header", "pointers"]
    out = []
    for name in order:
        count, size = rows.get(name, (0, 0))
        out.append(f"| {title} | {name} | {count:,} | {size:,} |")
    total = sum(c for c, _ in rows.values()), sum(b for _, b in rows.values())
    out.append(f"| {title} | **all** | {total[0]:,} | {total[1]:,} |")
    return out


def _purge_all(meter: Meter) -> tuple[list[str], Counter[str], int]:
    """Expire every kept version as TTL would (its record removed, uncounted), then purge it
    as the stream hands it over; the rows per purge, the calls in all, the items deleted."""
    rows = []
    everything: Counter[str] = Counter()
    deleted = 0
    for record in _records():
        _uncounted().delete_item(TableName=keys.table(), Key=_key(record))
        meter.take()
        started = time.perf_counter()
        purged = retention.purge_expired(retention.Removal("REMOVE", retention.TTL_REMOVER, record))
        seconds = time.perf_counter() - started
        calls, items = meter.take()
        assert purged is not None
        everything.update(calls)
        deleted += sum(items.deleted.values())
        rows.append(
            f"| {purged.version[:8]} | {shown(calls)} | {sum(items.deleted.values()):,} | "
            f"{sum(items.put.values())} ({sum(items.put_bytes.values())} B) | {seconds:.1f} |"
        )
    return rows, everything, deleted


def run_versions(n: int, overwrites: int) -> None:
    print(f"pairs: {n}, overwrites: {overwrites}")
    sample = make_body(n, 0)
    text = sum(len(p.input.encode()) + len(p.output.encode()) for p in sample.data)
    print(f"texts: {text / n:.0f} bytes a pair (input and output), 1-3 labels\n")
    head = (
        "| overwrite | DynamoDB calls | BatchWriteItem / TransactWriteItems / others | "
        "items put: pairs + other (bytes) | items deleted | seconds (moto) |"
    )
    results: dict[str, Any] = {}
    for mode, at_once in (("kept", False), ("deleted at once (before)", True)):
        with moto_in_process():
            fresh_tables()
            meter = Meter()
            print(f"### {mode}\n")
            print(head)
            print("|---|---|---|---|---|---|")
            for row in _overwrites(meter, n, overwrites, at_once):
                print(row)
            results[mode] = {"census": census(), "read": _read(meter)}
            if not at_once:
                rows, calls, deleted = _purge_all(meter)
                results[mode]["purge"] = (rows, calls, deleted)
                results["after purge"] = {"census": census()}
            print()
    print("### the datasets table after the overwrites\n")
    print("| | items | count | bytes |")
    print("|---|---|---|---|")
    for mode, found in results.items():
        for row in _census_rows(mode, found["census"]):
            print(row)
    print("\n### a read of the current dataset\n")
    print("| | DynamoDB calls | items read | pairs | seconds (moto) |")
    print("|---|---|---|---|---|")
    for mode in ("kept", "deleted at once (before)"):
        print(f"| {mode} | {results[mode]['read']} |")
    rows, calls, deleted = results["kept"]["purge"]
    print("\n### the purge, once each kept version expires\n")
    print("| version | DynamoDB calls | items deleted | items put | seconds (moto) |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(row)
    print(f"\nall {len(rows)} purges: {shown(calls)}; {deleted:,} items deleted")


# ---- 2. selection --------------------------------------------------------------------------------


def _ords(n: int, appended_ids: bool) -> list[str]:
    """The ords of an n-pair selection: one write's (seq 0..n-1), or at the field limits every
    pair appended with a 128-character id (the longest ords there are)."""
    ms = 1_764_000_000_000
    if appended_ids:
        return [append_ord(ms + i, LONGEST_ID[: -len(str(i))] + str(i)) for i in range(n)]
    return [make_ord(ms, i) for i in range(n)]


def _selection_row(meter: Meter, n: int, tenant: str, results_id: str, appended: bool) -> str:
    ords = _ords(n, appended)
    pieces = reproduce.cut_pieces(ords)
    text = json.dumps(
        [[p.first_ord, p.last_ord, p.count, base64.b64encode(p.members).decode()] for p in pieces],
        separators=(",", ":"),
    )
    meter.take()
    field = results_header.selection_field(tenant, pieces)
    write_calls, written = meter.take()
    attribute = dynamo.item_size(field)
    # The header that holds the field (the rest of a header is beside the point here).
    header = {**results_keys.header_key(tenant, results_id), **field}
    _uncounted().put_item(TableName=results_keys.table(), Item=header)
    parts = [
        dynamo.item_size(item)
        for page in _uncounted().get_paginator("scan").paginate(TableName=results_keys.table())
        for item in page["Items"]
        if item["sk"]["S"].startswith("part#")
    ]
    texts._cache.clear()  # a cold process: the parts are read
    meter.take()
    started = time.perf_counter()
    read = results_store.selection(tenant, results_id)
    seconds = time.perf_counter() - started
    read_calls, got = meter.take()
    assert read == pieces, "the selection read back differs"
    # The parts of one text stay for the next row's scan: clear the table's parts.
    for page in _uncounted().get_paginator("scan").paginate(TableName=results_keys.table()):
        for item in page["Items"]:
            _uncounted().delete_item(TableName=results_keys.table(), Key=_key(item))
    kept = "the header" if "selection" in field else f"{len(parts)} text part(s)"
    largest = max([*parts, attribute])
    stored = attribute + sum(parts)
    return (
        f"| {n:,} | {len(pieces)} | {len(text):,} | {kept} | {stored:,} ({stored / n:.1f} B a "
        f"pair) | {shown(write_calls) or 'none (the header write)'}; "
        f"{sum(written.put.values())} items | "
        f"{largest:,} ({largest / ITEM_LIMIT:.0%}) | {shown(read_calls)}; {got.read} items, "
        f"{got.read_bytes:,} B | {seconds * 1000:.0f} ms |"
    )


def run_selection(sizes: list[int]) -> None:
    print(
        "| pairs | pieces | selection text (JSON) | kept in | bytes stored | written | "
        "largest item (of 400 KB) | read | read time |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    with moto_in_process():
        fresh_tables()
        meter = Meter()
        for n in sizes:
            print(_selection_row(meter, n, "bench", "ev-bench", appended=False))
        # At the field limits: the longest tenant and results id, and the longest ords.
        longest = "t" + "x" * 127
        for n in sorted({min(sizes), max(sizes)}):
            row = _selection_row(meter, n, longest, "r" + "x" * 127, appended=True)
            print(row.replace("|", "| limits:", 1))


# ---- 3. digest -----------------------------------------------------------------------------------


DEFINITIONS = [
    "check:non_empty",
    "check:max_words:40",
    "check:contains:Settings",
    "check:no_pii",
    "check:readability",
]


def _result() -> EvaluationResult:
    return EvaluationResult(
        tenant="bench",
        results_id="ev-bench",
        created_ms=0,
        dataset_id=DATASET,
        dataset_kind=DatasetKind.SEED,
        metrics_id="m",
        definitions=list(DEFINITIONS),
        system_prompt="",
        pair_count=0,
        summaries=[],
        inputs=ResultInputs(
            dataset_version="v",
            version_ms=0,
            shards=16,
            append_shards=0,
            definitions_sha256="0" * 64,
            judge_model=None,
            judge_prompt_version=None,
            service_version="bench",
            prices_date="2026-01-01",
        ),
    )


def _chunks(n: int, chunk: int) -> tuple[list[str], list[str], float]:
    """Each chunk's totals as storage.jobs keeps them (JSON), with its pairs' digests and
    without; and the seconds the workers took to compute the digests, per pair."""
    body = make_body(n, 0)
    rng = random.Random(3)
    with_digests, without, digest_seconds = [], [], 0.0
    for start in range(0, n, chunk):
        pairs = [datasets.to_pair(p) for p in body.data[start : start + chunk]]
        scored = [
            ScoredPair(
                pair_id=p.id,
                index=start + k,
                scores=[float(rng.randint(1, 5)) for _ in DEFINITIONS],
                reasons=[""] * len(DEFINITIONS),
            )
            for k, p in enumerate(pairs)
        ]
        base = chunk_totals(scored, len(DEFINITIONS))
        started = time.perf_counter()
        # As logic.kinds.evaluation's `run` computes them.
        digests = b"".join(sorted(pair_digest(pair) for pair in pairs))
        digest_seconds += time.perf_counter() - started
        without.append(json.dumps(base, ensure_ascii=False, separators=(",", ":")))
        encoded = base64.b64encode(digests).decode()
        totals = {**base, evaluation_kind.DIGESTS: encoded}
        with_digests.append(json.dumps(totals, ensure_ascii=False, separators=(",", ":")))
    return with_digests, without, digest_seconds / n


def _tallies(stored: list[str], chunk: int, n: int) -> Iterator[Tally]:
    """The chunks' tallies as storage.jobs.tallies yields them: parsed one at a time."""
    for index, text in enumerate(stored):
        pairs = min(chunk, n - index * chunk)
        yield Tally(index=index, pairs=pairs, bytes=0, totals=json.loads(text))


@contextmanager
def _finish_in_memory(kept: list[EvaluationResult]) -> Iterator[None]:
    """The finish's reads and writes answered in memory: the result as stored, and the writes
    it returns kept (the result, with its pairs_digest)."""
    real_get, real_completing = results_store.get, results_store.completing

    def get(tenant: str, results_id: str) -> EvaluationResult:
        return _result()

    def completing(result: EvaluationResult) -> Any:
        kept.append(result)
        return None

    results_store.get = get
    results_store.completing = completing
    try:
        yield
    finally:
        results_store.get = real_get
        results_store.completing = real_completing


def _finish(stored: list[str], chunk: int, n: int, kept: list[EvaluationResult]) -> None:
    job = Job(
        kind=evaluation_kind.EVALUATION,
        tenant="bench",
        job_id="ev-bench",
        chunk_count=len(stored),
        pairs_total=n,
        created_ms=0,
    )
    evaluation_kind.EVALUATIONS.complete(job, _tallies(stored, chunk, n), Usage())


def _measure(work: Callable[[], None], repeat: int) -> tuple[float, float]:
    """Median seconds of `repeat` runs, then the tracemalloc peak (MiB) of one more."""
    seconds = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        work()
        seconds.append(time.perf_counter() - started)
    gc.collect()
    tracemalloc.start()
    work()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(seconds), peak / 2**20


def run_digest(n: int, chunk: int, repeat: int) -> None:
    with_digests, without, per_pair = _chunks(n, chunk)
    kept: list[EvaluationResult] = []
    with _finish_in_memory(kept):
        plain = _measure(lambda: _finish(without, chunk, n, kept), repeat)
        digested = _measure(lambda: _finish(with_digests, chunk, n, kept), repeat)
    assert kept[-1].inputs is not None and kept[-1].inputs.pairs_digest is not None
    assert kept[0].inputs is not None and kept[0].inputs.pairs_digest is None
    sizes = [len(t.encode()) for t in with_digests]
    plain_sizes = [len(t.encode()) for t in without]
    print(f"pairs: {n:,}, chunks: {len(with_digests)} of {chunk:,} pairs, 5 check metrics\n")
    print(
        f"a worker's digests: {per_pair * 1e6:.1f} µs a pair "
        f"({per_pair * chunk * 1000:.0f} ms a chunk of {chunk:,})"
    )
    print(
        f"a chunk's totals (JSON): {max(plain_sizes):,} bytes without the digests, "
        f"{max(sizes):,} with them (storage.texts keeps a text over {texts.INLINE_BYTES:,} "
        "bytes apart)\n"
    )
    print("| finish | seconds (median) | peak (tracemalloc) |")
    print("|---|---|---|")
    print(f"| without digests | {plain[0]:.3f} | {plain[1]:.1f} MiB |")
    print(f"| with digests (pairs_digest) | {digested[0]:.3f} | {digested[1]:.1f} MiB |")
    print(
        f"\nthe digest's share: {digested[0] - plain[0]:.3f} s, "
        f"{digested[1] - plain[1]:.1f} MiB ({(digested[1] - plain[1]) * 2**20 / n:.0f} bytes "
        "a pair)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    kept = sub.add_parser("versions")
    kept.add_argument("--pairs", type=int, default=10_000)
    kept.add_argument("--overwrites", type=int, default=10)
    chosen = sub.add_parser("selection")
    chosen.add_argument("--pairs", type=int, action="append")
    digest = sub.add_parser("digest")
    digest.add_argument("--pairs", type=int, default=100_000)
    digest.add_argument("--chunk", type=int, default=2_000)
    digest.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if args.command == "versions":
        run_versions(args.pairs, args.overwrites)
    elif args.command == "selection":
        run_selection(args.pairs or [1_000, 10_000, 100_000])
    else:
        run_digest(args.pairs, args.chunk, args.repeat)


if __name__ == "__main__":
    main()
