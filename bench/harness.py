"""Shared set-up of the benchmarks: an offline AWS environment (imported first, before any
service module reads it), moto tables from template.yaml, a DynamoDB call counter, and what a
dataset occupies. Run the benchmarks as scripts: `.venv/bin/python bench/<name>.py`."""

from __future__ import annotations

import math
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.fake_judge

os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
        "POWERTOOLS_METRICS_NAMESPACE": "EvalServiceBench",
    }
)

import boto3  # noqa: E402
from evalsvc.logic import jobs  # noqa: E402
from evalsvc.models.datasets import DatasetHeader  # noqa: E402
from evalsvc.storage import dynamo  # noqa: E402
from evalsvc.storage.datasets.keys import read_parts  # noqa: E402
from evalsvc_tools.local.server import apply_environment  # noqa: E402
from evalsvc_tools.local.tables import create_tables  # noqa: E402


@contextmanager
def finish_apart(take: Callable[[], Counter[str]]) -> Iterator[tuple[Counter[str], Counter[str]]]:
    """While it holds, the calls `take` counts are split in two: the chunks' (every call made
    before and after a job's finish step, which runs inside its last chunk) and the finish's
    own. Both are complete once it exits."""
    chunks: Counter[str] = Counter()
    finish: Counter[str] = Counter()
    real_finish = jobs.finish

    def counted_finish(*args: Any) -> None:
        chunks.update(take())
        real_finish(*args)
        finish.update(take())

    jobs.finish = counted_finish  # type: ignore[assignment]
    try:
        yield chunks, finish
    finally:
        jobs.finish = real_finish  # type: ignore[assignment]
        chunks.update(take())


def fresh_tables(extra_env: dict[str, str] | None = None) -> None:
    """Create the template's tables in the active moto mock and point the service at them."""
    env = create_tables(boto3.client("dynamodb", region_name="us-east-1"), "bench")
    apply_environment({**env, **(extra_env or {})})


class CallCounter:
    """Counts the service's DynamoDB calls by operation."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        # First: a handler that answers the call itself (the embedded store called in-process)
        # ends the event.
        dynamo.client().meta.events.register_first("before-call.dynamodb", self._count)

    def _count(self, event_name: str, **_: Any) -> None:
        self.calls[event_name.rsplit(".", 1)[-1]] += 1

    def take(self) -> Counter[str]:
        calls, self.calls = self.calls, Counter()
        return calls


def shown(calls: Counter[str]) -> str:
    return ", ".join(f"{op} {count}" for op, count in sorted(calls.items()))


def shard_bytes(header: DatasetHeader) -> list[int]:
    """Bytes of every item of each shard of the dataset's current version that can hold its
    pairs (written, then appended)."""
    sizes = []
    written, appended = read_parts(header)
    for pk in written + appended:
        pages = (
            dynamo.client()
            .get_paginator("query")
            .paginate(
                TableName=os.environ["EVALSVC_DATASETS_TABLE"],
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={":pk": {"S": pk}},
            )
        )
        sizes.append(sum(dynamo.item_size(item) for page in pages for item in page["Items"]))
    return sizes


def stored_bytes(header: DatasetHeader) -> int:
    """Bytes of every item of the dataset's current version."""
    return sum(shard_bytes(header))


def query_pages(size: int) -> int:
    """The fewest 1 MB Query pages that can return `size` bytes."""
    return max(1, math.ceil(size / 1_000_000))


def version_pages(header: DatasetHeader) -> int:
    """The fewest Query pages that read a version: at least one per shard that can hold its
    pairs."""
    return sum(query_pages(size) for size in shard_bytes(header))
