"""A jury's cost in time and money (E13): the same evaluation judged by one judge and by a jury
of three, each judge a fake OpenAI-compatible server on 127.0.0.1 with the same fixed latency
and the same answers (so every call costs the same tokens), end to end in-process (logic +
moto), each run in a moto of its own with an empty judge cache.

The goals: the jury's wall time at most 1.15x the single judge's (its judges are asked at once,
each with its own pool of EVALSVC_JUDGE_CONCURRENCY calls), and its calls and cost exactly 3x
(every judge's calls counted at its price). Runs alternate, `--rounds` of each, the fastest kept.

    .venv/bin/python bench/jury.py [--pairs 96,400] [--latency 0.05] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import time
from contextlib import ExitStack
from decimal import Decimal

# The harness sets the offline environment before any service module reads it.
from harness import fresh_tables

# isort: split

from evalsvc.core.deadlines import Deadline
from evalsvc.logic import datasets, evaluations, metric_set_create
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import PairIn, SeedDatasetIn
from evalsvc.models.evaluations import EvaluateIn
from evalsvc_tools.local.inprocess import moto_in_process

from tests.fake_judge import FakeJudge, usage_of

NAMES = ("openai:juror-a", "openai:juror-b", "openai:juror-c")
QUESTION = "Does the output say please?"
# The same price for every judge, so that three judges cost exactly three times one.
PRICE = {"input": 0.5, "output": 1.5}


def _run(pairs: int, latency: float, jury: bool) -> tuple[float, int, Decimal, int, int]:
    """(seconds, calls made, cost, calls the fakes received, most in flight at one fake) of
    one evaluation of `pairs` pairs, by one judge or by the jury of three."""
    fakes = [FakeJudge(latency=latency) for _ in NAMES]
    identity = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")
    with moto_in_process(), ExitStack() as servers:
        for fake in fakes:
            fake.usage = usage_of
            servers.enter_context(fake.running())
        endpoints = {
            name: {"base_url": fake.base_url, "api_key": "sk-bench"}
            for name, fake in zip(NAMES, fakes, strict=True)
        }
        fresh_tables(
            {
                "EVALSVC_LLM": NAMES[0],
                "EVALSVC_OPENAI_BASE_URL": fakes[0].base_url,
                "EVALSVC_OPENAI_API_KEY": "sk-bench",
                "EVALSVC_JUDGES": ",".join(NAMES),
                "EVALSVC_JUDGE_ENDPOINTS": json.dumps(endpoints),
                "EVALSVC_PRICES": json.dumps({name: PRICE for name in NAMES}),
                "EVALSVC_JUDGE_CONCURRENCY": "16",
                "EVALSVC_INLINE_MAX_JUDGE_CALLS": str(pairs),
            }
        )
        data = [
            PairIn(id=f"p{i:04d}", input=f"q{i}", output="please" if i % 2 else "no")
            for i in range(pairs)
        ]
        datasets.write_seed_dataset(identity, "bench-ds", SeedDatasetIn(data=data))
        metrics = metric_set_create.create_metrics_set(
            identity, [QUESTION], judges=list(NAMES) if jury else None
        )
        body = EvaluateIn(seed_data_id="bench-ds", metrics_id=metrics.metrics_id)
        started = time.perf_counter()
        done = evaluations.evaluate(identity, body, Deadline.never())
        elapsed = time.perf_counter() - started
        assert done.pair_count == pairs and done.summaries[0] is not None
        cost = done.usage.cost()
        assert cost is not None
        received = sum(len(fake.requests) for fake in fakes)
        return elapsed, done.usage.llm_calls, cost, received, max(f.max_in_flight for f in fakes)


def figures(pairs: int, latency: float, rounds: int) -> None:
    best: dict[bool, tuple[float, int, Decimal, int, int]] = {}
    for _ in range(rounds):
        for jury in (False, True):
            run = _run(pairs, latency, jury)
            if jury not in best or run[0] < best[jury][0]:
                best[jury] = run
    one, three = best[False], best[True]
    print(
        f"\njury: {pairs} pairs x 1 question, judge latency {latency * 1000:.0f} ms, "
        f"concurrency 16 per judge, fastest of {rounds}\n"
    )
    print("| judged by | seconds | calls | cost USD | calls received | most in flight per judge |")
    print("|---|---|---|---|---|---|")
    for name, (seconds, calls, cost, received, most) in (("1 judge", one), ("3 judges", three)):
        print(f"| {name} | {seconds:.3f} | {calls} | {cost} | {received} | {most} |")
    print(
        f"\nwall time 3 judges / 1 judge: {three[0] / one[0]:.3f}x (goal: at most 1.15x); "
        f"calls {three[1] / one[1]:.3f}x, cost {three[2] / one[2]:.6f}x (goal: exactly 3x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", default="96,400")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    for pairs in (int(p) for p in options.pairs.split(",")):
        figures(pairs, options.latency, options.rounds)


if __name__ == "__main__":
    main()
