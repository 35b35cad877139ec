"""Evaluation figures:

1. 10,000 pairs x 5 check metrics, end to end in-process (logic + moto): seconds, and the
   DynamoDB calls against the minimum (read the dataset: ceil(bytes / 1 MB) Query pages; write
   the result: ceil(N / 25) BatchWriteItem + 1 PutItem for the header).
2. Judge throughput with a fake OpenAI-compatible judge of fixed latency on 127.0.0.1,
   against the ideal concurrency / latency.

    .venv/bin/python bench/evaluation.py [--pairs 10000] [--judge-pairs 480] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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

import boto3
from evalsvc.local.server import apply_environment
from evalsvc.local.tables import create_tables
from evalsvc.logic import datasets, evaluations, metrics
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind, Pair, PairIn, SeedDatasetIn
from evalsvc.models.evaluations import EvaluateIn
from evalsvc.scoring.judges import CachedJudge
from evalsvc.scoring.llm import LLM, OpenAIProvider
from evalsvc.settings import get_settings
from evalsvc.storage import dynamo
from moto import mock_aws

from tests.fake_judge import FakeJudge

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sizes import query_pages, stored_bytes

CHECKS = [
    "check:non_empty",
    "check:max_words:40",
    "check:contains:Settings",
    "check:no_pii",
    "check:readability",
]


def counting(counter: Counter[str]) -> Any:
    def hook(event_name: str, **_: Any) -> None:
        counter[event_name.rsplit(".", 1)[-1]] += 1

    return hook


def evaluation_figures(n: int) -> None:
    identity = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")
    with mock_aws():
        apply_environment(create_tables(boto3.client("dynamodb", region_name="us-east-1"), "bench"))
        data = [
            PairIn(
                id=f"pair-{i:05d}",
                input=f"Question {i}: how do I change the billing address on my account?",
                output=f"Open Settings, then Billing, edit the address and press Save ({i}).",
                labels=["billing"],
            )
            for i in range(n)
        ]
        datasets.write_seed_dataset(identity, "bench-ds", SeedDatasetIn(data=data))
        metrics.create_metrics_set(identity, CHECKS)
        calls: Counter[str] = Counter()
        dynamo.client().meta.events.register("before-call.dynamodb", counting(calls))
        started = time.perf_counter()
        done = evaluations.evaluate(identity, EvaluateIn(seed_data_id="bench-ds"), None)
        elapsed = time.perf_counter() - started
        measured = Counter(calls)
        assert done.result.pair_count == n
        pages = query_pages(
            stored_bytes(datasets.store.get_header("bench", DatasetKind.SEED, "bench-ds"))
        )
        writes = math.ceil(n / 25)
        minimum = f"GetItem 3, Query {pages}, BatchWriteItem {writes}, TransactWriteItems 1"
        shown = ", ".join(f"{op} {count}" for op, count in sorted(measured.items()))
        print(f"evaluation: {n} pairs x {len(CHECKS)} checks\n")
        print("| seconds (moto) | DynamoDB calls | minimum |")
        print("|---|---|---|")
        print(f"| {elapsed:.2f} | {shown} | {minimum} |\n")


def judge_figures(pairs: int, latency: float, concurrency: int) -> None:
    fake = FakeJudge(latency=latency)
    with mock_aws(), fake.running():
        apply_environment(create_tables(boto3.client("dynamodb", region_name="us-east-1"), "bench"))
        os.environ["JUDGE_CONCURRENCY"] = str(concurrency)
        apply_environment({})
        provider = OpenAIProvider("fake", fake.base_url, "", timeout=10)
        judge = CachedJudge(LLM(provider, get_settings()), "bench")
        batch = [
            Pair(id=f"p{i}", input=f"q{i}", output="please" if i % 2 else "no")
            for i in range(pairs)
        ]
        started = time.perf_counter()
        scores = judge.score_all("Does the output say please?", batch, "Be polite.")
        elapsed = time.perf_counter() - started
        assert len(scores) == pairs
        assert fake.first_request_at is not None and fake.last_response_at is not None
        calling = fake.last_response_at - fake.first_request_at
        ideal = concurrency / latency
        print(f"judge: {pairs} calls, latency {latency * 1000:.0f} ms, concurrency {concurrency}\n")
        print("| phase | seconds | calls/s | ideal calls/s | ratio |")
        print("|---|---|---|---|---|")
        for phase, seconds in (
            ("calls (first request to last answer)", calling),
            ("score_all, with the cache read and write", elapsed),
        ):
            rate = pairs / seconds
            print(f"| {phase} | {seconds:.2f} | {rate:.1f} | {ideal:.1f} | {rate / ideal:.2f} |")
        print(f"\nmost calls in flight at once: {fake.max_in_flight}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--judge-pairs", type=int, default=480)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    options = parser.parse_args()
    evaluation_figures(options.pairs)
    judge_figures(options.judge_pairs, options.latency, options.concurrency)


if __name__ == "__main__":
    main()
