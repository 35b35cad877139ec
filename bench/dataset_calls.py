"""DynamoDB calls made to write and read a 10,000-pair dataset, against the minimum.

The minimum: a write needs ceil(N/25) BatchWriteItem calls (25 items per call is DynamoDB's
limit); a read needs ceil(bytes/1 MB) Query pages (1 MB of items per page is DynamoDB's limit)
of each partition key that can hold the version's pairs (its written shards, as many as the
write needed, and once a pair is appended its append shards). Runs against moto in-process
(moto pages queries at 1 MB like DynamoDB). Prints a table, then the shards the write took.

    .venv/bin/python bench/dataset_calls.py [--pairs 10000]
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, fresh_tables, shard_bytes, shown, stored_bytes, version_pages

# isort: split

from evalsvc.api.responses import MAX_COMPRESSIBLE_BYTES
from evalsvc.logic import datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind, PairIn, SeedDatasetIn, pair_bytes
from evalsvc.storage.datasets.keys import write_units
from evalsvc_tools.local.inprocess import moto_in_process


def make_body(n: int) -> SeedDatasetIn:
    data = [
        PairIn(
            id=f"pair-{i:05d}",
            input=f"Question {i}: how do I change the billing address on my account? " * 2,
            output=f"Answer {i}: open Settings, then Billing, edit the address, Save. " * 3,
            labels=["billing", f"batch-{i % 10}"],
        )
        for i in range(n)
    ]
    return SeedDatasetIn(data=data, system_prompt="You are a helpful support assistant.")


def row(name: str, calls: Counter[str], minimum: str, seconds: float) -> str:
    return f"| {name} | {shown(calls)} | {minimum} | {seconds:.2f} |"


def read(identity: Identity) -> Any:
    return datasets.read_dataset(
        identity, DatasetKind.SEED, "bench-ds", max_bytes=MAX_COMPRESSIBLE_BYTES
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=10_000)
    n = parser.parse_args().pairs
    identity = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")
    with moto_in_process():
        fresh_tables()
        counter = CallCounter()
        body = make_body(n)
        print(f"pairs: {n}\n")
        print("| operation | DynamoDB calls | minimum | seconds (moto) |")
        print("|---|---|---|---|")

        def write(body: SeedDatasetIn) -> object:
            return datasets.write_seed_dataset(identity, "bench-ds", body)

        def measure(name: str, minimum: str, work: Callable[[], object]) -> object:
            started = time.perf_counter()
            result = work()
            elapsed = time.perf_counter() - started
            print(row(name, counter.take(), minimum, elapsed))
            return result

        writes = math.ceil(n / 25)
        measure("insert", f"BatchWriteItem {writes}", lambda: write(body))
        # The size of what a read must fetch decides its minimum, so it is known before the read.
        header = datasets.read_dataset(
            identity, DatasetKind.SEED, "bench-ds", max_bytes=MAX_COMPRESSIBLE_BYTES
        ).header
        total = stored_bytes(header)
        pages = version_pages(header)
        counter.take()
        dataset = measure(
            f"read whole dataset ({total / 1e6:.2f} MB stored)",
            f"Query {pages}",
            lambda: datasets.read_dataset(
                identity, DatasetKind.SEED, "bench-ds", max_bytes=MAX_COMPRESSIBLE_BYTES
            ),
        )
        assert len(dataset.pairs) == n  # type: ignore[attr-defined]
        # The replaced version is kept, recorded in the flip (E7): its deletes come with its
        # purge, once its retention ends (bench/dataset_versions.py counts them).
        measure(
            "overwrite (write new, flip and record old)",
            f"BatchWriteItem {writes}",
            lambda: write(body),
        )
        written = datasets.get_header(identity, DatasetKind.SEED, "bench-ds")
        counter.take()
        measure(
            "add the first pair to a version (also marks its header)",
            "GetItem 2, BatchGetItem 1, UpdateItem 2, PutItem 1",
            lambda: datasets.add_seed_pair(identity, "bench-ds", PairIn(input="+1", output="pair")),
        )
        measure(
            "add another pair",
            "GetItem 2, BatchGetItem 1, PutItem 1, UpdateItem 1",
            lambda: datasets.add_seed_pair(identity, "bench-ds", PairIn(input="+2", output="pair")),
        )
        appended = datasets.get_header(identity, DatasetKind.SEED, "bench-ds")
        appended_pages = version_pages(appended)
        counter.take()
        measure(
            "read whole dataset with the 2 appended pairs",
            f"Query {appended_pages}",
            lambda: read(identity),
        )
        pairs = [datasets.to_pair(item) for item in body.data]
        units = sum(write_units(pair_bytes(pair)) for pair in pairs)
        overhead = (total - header.bytes) / n if header.bytes is not None else 0
        print(
            f"\nwrite units {units} (items {overhead:.0f} bytes a pair over their texts): "
            f"{written.shards} written shards of {[round(b / 1e3) for b in shard_bytes(written)]} "
            f"KB; appends spread over {appended.append_shards or appended.shards} shards"
        )


if __name__ == "__main__":
    main()
