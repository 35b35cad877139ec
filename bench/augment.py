"""The largest augmentation: 1,000 seed pairs x multiple 50 = 50,000 synthetic pairs, in-process
against moto; without an LLM (deterministic perturbations), and with a fake OpenAI-compatible
LLM of fixed latency on 127.0.0.1 for a smaller run (LLM generation is one call per seed pair,
16 in flight).

    .venv/bin/python bench/augment.py [--seeds 1000] [--multiple 50] [--llm-seeds 160]
"""

from __future__ import annotations

import argparse
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
from evalsvc.logic import augment, datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import PairIn, SeedDatasetIn
from evalsvc.models.generation import AugmentIn
from evalsvc.storage import dynamo
from moto import mock_aws

from tests.fake_judge import FakeJudge

IDENTITY = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")


def run(seeds: int, multiple: int, llm_url: str | None) -> tuple[float, Counter[str], int]:
    with mock_aws():
        env = create_tables(boto3.client("dynamodb", region_name="us-east-1"), "bench")
        if llm_url:
            env.update({"EVALSVC_LLM": "openai:fake", "OPENAI_BASE_URL": llm_url})
        else:
            os.environ.pop("EVALSVC_LLM", None)
        apply_environment(env)
        data = [
            PairIn(
                id=f"s{i:04d}",
                input=f"How do I change plan {i}, and keep my data?",
                output="Go to Billing.",
            )
            for i in range(seeds)
        ]
        datasets.write_seed_dataset(IDENTITY, "seed", SeedDatasetIn(data=data))
        calls: Counter[str] = Counter()

        def count(event_name: str, **_: Any) -> None:
            calls[event_name.rsplit(".", 1)[-1]] += 1

        dynamo.client().meta.events.register("before-call.dynamodb", count)
        started = time.perf_counter()
        done = augment.augment(IDENTITY, AugmentIn(seed_data_id="seed", multiple=multiple))
        return time.perf_counter() - started, calls, done.header.pair_count


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--multiple", type=int, default=50)
    parser.add_argument("--llm-seeds", type=int, default=160)
    parser.add_argument("--latency", type=float, default=0.2)
    options = parser.parse_args()
    print("| run | synthetic pairs | seconds (moto) | DynamoDB calls |")
    print("|---|---|---|---|")
    seconds, calls, pairs = run(options.seeds, options.multiple, None)
    shown = ", ".join(f"{op} {n}" for op, n in sorted(calls.items()))
    label = f"{options.seeds} seeds x {options.multiple}, no LLM"
    print(f"| {label} | {pairs} | {seconds:.2f} | {shown} |")
    fake = FakeJudge(latency=options.latency)
    with fake.running():
        seconds, calls, pairs = run(options.llm_seeds, 5, fake.base_url)
    shown = ", ".join(f"{op} {n}" for op, n in sorted(calls.items()))
    label = f"{options.llm_seeds} seeds x 5, fake LLM {options.latency * 1000:.0f} ms"
    print(f"| {label} | {pairs} | {seconds:.2f} | {shown} |")
    ideal = options.llm_seeds * options.latency / 16
    calls_made = len(fake.requests)
    most = fake.max_in_flight
    print(f"\nLLM run: {calls_made} calls, at most {most} in flight; ideal {ideal:.2f} s")


if __name__ == "__main__":
    main()
