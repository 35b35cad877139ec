"""The largest augmentation: 1,000 seed pairs x multiple 50 = 50,000 synthetic pairs, in-process
against moto; without an LLM (deterministic perturbations), and with a fake OpenAI-compatible
LLM of fixed latency on 127.0.0.1 for a smaller run (LLM generation is one call per seed pair,
16 in flight).

    .venv/bin/python bench/augment.py [--seeds 1000] [--multiple 50] [--llm-seeds 160]
"""

from __future__ import annotations

import argparse
import math
import time

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, fresh_tables, shown

# isort: split

from evalsvc.core.deadlines import Deadline
from evalsvc.logic import augment, datasets
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import PairIn, SeedDatasetIn
from evalsvc.models.generation import AugmentIn
from evalsvc_tools.local.inprocess import moto_in_process

from tests.fake_judge import FakeJudge

IDENTITY = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")


def run(seeds: int, multiple: int, llm_url: str | None) -> tuple[float, str, int]:
    with moto_in_process():
        llm = {"EVALSVC_LLM": "openai:fake", "EVALSVC_OPENAI_BASE_URL": llm_url} if llm_url else {}
        fresh_tables({"EVALSVC_LLM": "", **llm})
        data = [
            PairIn(
                id=f"s{i:04d}",
                input=f"How do I change plan {i}, and keep my data?",
                output="Go to Billing.",
            )
            for i in range(seeds)
        ]
        datasets.write_seed_dataset(IDENTITY, "seed", SeedDatasetIn(data=data))
        counter = CallCounter()
        started = time.perf_counter()
        done = augment.augment(
            IDENTITY, AugmentIn(seed_data_id="seed", multiple=multiple), Deadline.never()
        )
        return time.perf_counter() - started, shown(counter.take()), done.header.pair_count


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
    label = f"{options.seeds} seeds x {options.multiple}, no LLM"
    print(f"| {label} | {pairs} | {seconds:.2f} | {calls} |")
    fake = FakeJudge(latency=options.latency)
    with fake.running():
        seconds, calls, pairs = run(options.llm_seeds, 5, fake.base_url)
    label = f"{options.llm_seeds} seeds x 5, fake LLM {options.latency * 1000:.0f} ms"
    print(f"| {label} | {pairs} | {seconds:.2f} | {calls} |")
    ideal = math.ceil(options.llm_seeds / 16) * options.latency  # rounds of 16 calls in flight
    calls_made = len(fake.requests)
    most = fake.max_in_flight
    print(f"\nLLM run: {calls_made} calls, at most {most} in flight; ideal {ideal:.2f} s")


if __name__ == "__main__":
    main()
