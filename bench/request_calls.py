"""DynamoDB calls of one request, by operation: reading a small dataset, and inline evaluations
of a small and a large selection with a judge, without and with a cost cap (max_cost_usd) and
a monthly limit. The queued evaluation's calls (request, per chunk, finish) are
`bench/fanout.py checks`'s.

In-process against moto, with a work queue configured as deployed, and a fake
OpenAI-compatible judge on 127.0.0.1 (every verdict a call: each run scores texts of its own,
so the judge cache never answers).

    .venv/bin/python bench/request_calls.py [--small 10] [--large 10000]
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from decimal import Decimal

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, fresh_tables, shown

# isort: split

import boto3
from evalsvc.api.responses import MAX_COMPRESSIBLE_BYTES
from evalsvc.core.deadlines import Deadline
from evalsvc.logic import datasets, evaluations, metric_set_create, spending
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind, PairIn, SeedDatasetIn
from evalsvc.models.evaluations import EvaluateIn, PairQuery
from evalsvc.models.jobs import Status
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.server import apply_environment
from evalsvc_tools.local.tables import create_queues

from tests.fake_judge import FakeJudge

IDENTITY = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")
# USD per million tokens of the fake judge's model.
PRICES = json.dumps({"openai:fake-judge": {"input": 1.5, "output": 6}})


def seed(dataset_id: str, n: int, labelled: int = 0) -> None:
    """`n` pairs, the first `labelled` of them labelled "pick"."""
    data = [
        PairIn(
            id=f"pair-{i:06d}",
            input=f"Question {i} ({dataset_id}): how do I change the billing address?",
            output=f"Please open Settings, then Billing, and press Save ({i}).",
            labels=["pick"] if i < labelled else [],
        )
        for i in range(n)
    ]
    datasets.write_seed_dataset(IDENTITY, dataset_id, SeedDatasetIn(data=data))


def row(name: str, calls: Counter[str], seconds: float) -> str:
    return f"| {name} | {shown(calls)} | {sum(calls.values())} | {seconds:.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=10)
    parser.add_argument("--large", type=int, default=10_000)
    args = parser.parse_args()
    judge = FakeJudge()
    with moto_in_process(), judge.running():
        # A work queue, as deployed (nothing here is large enough to go on it).
        queues = create_queues(boto3.client("sqs", region_name="us-east-1"), "bench")
        fresh_tables(
            {
                "EVALSVC_WORK_QUEUE_URL": queues["WorkQueue"],
                "EVALSVC_LLM": "openai:fake-judge",
                "EVALSVC_OPENAI_BASE_URL": judge.base_url,
                "EVALSVC_OPENAI_API_KEY": "sk-bench",
                "EVALSVC_PRICES": PRICES,
                "EVALSVC_JUDGE_CONCURRENCY": "32",
                # Both selections are scored inside the request.
                "EVALSVC_INLINE_MAX_JUDGE_CALLS": str(max(args.small, args.large)),
            }
        )
        metrics_id = metric_set_create.create_metrics_set(
            IDENTITY, ["Is the answer polite?"]
        ).metrics_id
        counter = CallCounter()
        print("| request | DynamoDB calls | in all | seconds (moto) |")
        print("|---|---|---|---|")

        seed("read-small", args.small)
        counter.take()
        started = time.perf_counter()
        datasets.read_dataset(
            IDENTITY, DatasetKind.SEED, "read-small", max_bytes=MAX_COMPRESSIBLE_BYTES
        )
        label = f"GET /data/seed/{{id}}, {args.small} pairs"
        print(row(label, counter.take(), _elapsed(started)))

        runs = 0
        for n in (args.small, args.large):
            for name, cap, limit in (
                ("no cap", None, None),
                ("max_cost_usd", Decimal(1_000), None),
                ("max_cost_usd and a monthly limit", Decimal(1_000), Decimal(1_000_000)),
            ):
                runs += 1
                dataset_id = f"ds-{runs}"
                seed(dataset_id, n)
                spending.set_limit(IDENTITY.tenant, limit)
                body = EvaluateIn(
                    seed_data_id=dataset_id,
                    metrics_id=metrics_id,
                    max_cost_usd=None if cap is None else float(cap),
                )
                counter.take()
                started = time.perf_counter()
                done = evaluations.evaluate(IDENTITY, body, Deadline.never())
                assert done.pair_count == n, done
                label = f"POST /evaluate, {n} pairs x 1 question, {name}"
                print(row(label, counter.take(), _elapsed(started)))

        # A dataset too large for one request, of which the request selects few pairs: read
        # by keys first, then (the selection fits) scored inside the request.
        apply_environment({"EVALSVC_INLINE_MAX_JUDGE_CALLS": "100"})
        counter = CallCounter()  # on the client made afresh for the new settings
        spending.clear_limit(IDENTITY.tenant)
        seed("labelled", args.large, labelled=args.small)
        query = PairQuery(pair_labels=["pick"])
        counter.take()
        started = time.perf_counter()
        body = EvaluateIn(seed_data_id="labelled", metrics_id=metrics_id, pair_query=query)
        done = evaluations.evaluate(IDENTITY, body, Deadline.never())
        assert done.pair_count == args.small and done.status is Status.COMPLETE, done
        label = f"POST /evaluate, {args.small} labelled of {args.large} pairs, inline"
        print(row(label, counter.take(), _elapsed(started)))

        # The whole large dataset, queued (answered at once), with a cap and a monthly limit
        spending.set_limit(IDENTITY.tenant, Decimal(1_000_000))
        body = EvaluateIn(seed_data_id="labelled", metrics_id=metrics_id, max_cost_usd=1_000.0)
        counter.take()
        started = time.perf_counter()
        done = evaluations.evaluate(IDENTITY, body, Deadline.never(), respond_async=True)
        assert done.status is Status.RUNNING, done
        label = f"POST /evaluate, {args.large} pairs queued, max_cost_usd and a monthly limit"
        print(row(label, counter.take(), _elapsed(started)))


def _elapsed(started: float) -> float:
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
