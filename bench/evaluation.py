"""Evaluation figures:

1. 10,000 pairs x 5 check metrics, end to end in-process (logic + moto): seconds, and the
   DynamoDB calls against the minimum (read the dataset: ceil(bytes / 1 MB) Query pages; write
   the result: ceil(N / 25) BatchWriteItem + 1 PutItem for the header).
   Then the same 10,000 pairs, each with a reference, x the four reference checks (E10:
   exact_match, token_f1, rouge_l, chrf), and its time against the five checks' (the goal:
   at most 1.2x). Each is run `--rounds` times, alternating, and the fastest kept.
2. Judge throughput with a fake OpenAI-compatible judge of fixed latency on 127.0.0.1,
   against the ideal concurrency / latency.

    .venv/bin/python bench/evaluation.py [--pairs 10000] [--judge-pairs 480] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import math
import time

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, fresh_tables, shown, version_pages

# isort: split

from evalsvc.core.deadlines import Deadline
from evalsvc.core.settings import get_settings
from evalsvc.logic import datasets, evaluations, metric_set_create
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind, Pair, PairIn, SeedDatasetIn
from evalsvc.models.evaluations import EvaluateIn
from evalsvc.scoring.judges import CachedJudge
from evalsvc.scoring.llm import LLM
from evalsvc.scoring.llm.openai import OpenAIProvider
from evalsvc.storage import judge_cache
from evalsvc_tools.local.inprocess import moto_in_process

from tests.fake_judge import FakeJudge

CHECKS = [
    "check:non_empty",
    "check:max_words:40",
    "check:contains:Settings",
    "check:no_pii",
    "check:readability",
]


REFERENCE_CHECKS = ["check:exact_match", "check:token_f1", "check:rouge_l", "check:chrf"]


def _evaluated(
    identity: Identity, n: int, checks: list[str], reference: bool
) -> tuple[float, str, str]:
    """Seconds, DynamoDB calls and their minimum of one evaluation of n fresh pairs, in a moto
    of its own (tables kept from an earlier run would slow moto's Query)."""
    with moto_in_process():
        return _evaluated_in_moto(identity, n, checks, reference)


def _evaluated_in_moto(
    identity: Identity, n: int, checks: list[str], reference: bool
) -> tuple[float, str, str]:
    fresh_tables()
    data = [
        PairIn(
            id=f"pair-{i:05d}",
            input=f"Question {i}: how do I change the billing address on my account?",
            output=f"Open Settings, then Billing, edit the address and press Save ({i}).",
            labels=["billing"],
            reference=(
                f"Go to Settings, open Billing, change the address, then press Save ({i})."
                if reference
                else None
            ),
        )
        for i in range(n)
    ]
    datasets.write_seed_dataset(identity, "bench-ds", SeedDatasetIn(data=data))
    metric_set_create.create_metrics_set(identity, checks)
    counter = CallCounter()
    started = time.perf_counter()
    done = evaluations.evaluate(identity, EvaluateIn(seed_data_id="bench-ds"), Deadline.never())
    elapsed = time.perf_counter() - started
    measured = counter.take()
    assert done.pair_count == n
    assert all(s is not None for s in done.summaries)
    header = datasets.store.get_header("bench", DatasetKind.SEED, "bench-ds")
    assert header is not None
    pages = version_pages(header)
    writes = math.ceil(n / 25)
    minimum = f"GetItem 3, Query {pages}, BatchWriteItem {writes}, TransactWriteItems 1"
    return elapsed, shown(measured), minimum


def evaluation_figures(n: int, rounds: int) -> None:
    identity = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")
    runs = {
        "5 checks": (CHECKS, False),
        "5 checks, pairs with a reference": (CHECKS, True),
        "4 reference checks": (REFERENCE_CHECKS, True),
    }
    best: dict[str, tuple[float, str, str]] = {}
    for _ in range(rounds):
        for name, (checks, reference) in runs.items():
            figures = _evaluated(identity, n, checks, reference)
            if name not in best or figures[0] < best[name][0]:
                best[name] = figures
    print(f"evaluation: {n} pairs, fastest of {rounds} runs each\n")
    print("| metrics | seconds (moto) | DynamoDB calls | minimum |")
    print("|---|---|---|---|")
    for name, (elapsed, measured, minimum) in best.items():
        print(f"| {name} | {elapsed:.2f} | {measured} | {minimum} |")
    ratio = best["4 reference checks"][0] / best["5 checks"][0]
    same_pairs = best["4 reference checks"][0] / best["5 checks, pairs with a reference"][0]
    print(f"\nreference checks / five checks: {ratio:.2f}x (goal: at most 1.2x)")
    print(f"reference checks / five checks on the same pairs: {same_pairs:.2f}x\n")


def judge_figures(pairs: int, latency: float, concurrency: int) -> None:
    fake = FakeJudge(latency=latency)
    with moto_in_process(), fake.running():
        fresh_tables({"EVALSVC_JUDGE_CONCURRENCY": str(concurrency)})
        provider = OpenAIProvider("fake", fake.base_url, "")
        judge = CachedJudge(LLM(provider, get_settings()), "bench", judge_cache)
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
        phases = (
            ("calls (first request to last answer)", calling),
            ("score_all, with the cache read and write", elapsed),
        )
        for phase, seconds in phases:
            rate = pairs / seconds
            print(f"| {phase} | {seconds:.2f} | {rate:.1f} | {ideal:.1f} | {rate / ideal:.2f} |")
        print(f"\nmost calls in flight at once: {fake.max_in_flight}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--judge-pairs", type=int, default=480)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    options = parser.parse_args()
    evaluation_figures(options.pairs, options.rounds)
    judge_figures(options.judge_pairs, options.latency, options.concurrency)


if __name__ == "__main__":
    main()
