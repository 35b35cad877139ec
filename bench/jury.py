"""A jury's cost in time and money (E13): the same evaluation judged by one judge and by a jury
of three, each judge a fake OpenAI-compatible server on 127.0.0.1 with the same fixed latency
and the same answers (so every call costs the same tokens), end to end in-process (logic +
moto), each run with fresh tables and an empty judge cache. The fake servers and DynamoDB
(moto's server) run in processes of their own, as a provider's servers and DynamoDB are
elsewhere: in this one, their work would share the service's interpreter lock (moto in-process
spent more of a jury's time on the meter's writes than the judges did).

The goals: the jury's wall time at most 1.15x the single judge's (its judges are asked at once,
each with its own pool of EVALSVC_JUDGE_CONCURRENCY calls), and its calls and cost exactly 3x
(every judge's calls counted at its price). Runs alternate, `--rounds` of each, the fastest kept.

    .venv/bin/python bench/jury.py [--pairs 96,400] [--latency 0.05,0.5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from decimal import Decimal
from typing import Any

import boto3

# The harness sets the offline environment before any service module reads it.
import harness  # noqa: F401

# isort: split

from evalsvc.core.deadlines import Deadline
from evalsvc.logic import datasets, evaluations, metric_set_create
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import PairIn, SeedDatasetIn
from evalsvc.models.evaluations import EvaluateIn
from evalsvc_tools.local.server import apply_environment
from evalsvc_tools.local.tables import create_tables

from tests.fake_judge import FakeJudge, usage_of

NAMES = ("openai:juror-a", "openai:juror-b", "openai:juror-c")
QUESTION = "Does the output say please?"
# The same price for every judge, so that three judges cost exactly three times one.
PRICE = {"input": 0.5, "output": 1.5}


def _serve(latency: float, urls: multiprocessing.Queue[list[str]], stop: Any) -> None:
    """The fake judges, in a process of their own, until `stop` is set."""
    fakes = [FakeJudge(latency=latency) for _ in NAMES]
    with ExitStack() as servers:
        for fake in fakes:
            fake.usage = usage_of
            servers.enter_context(fake.running())
        urls.put([fake.base_url for fake in fakes])
        stop.wait()


def _serve_dynamodb(urls: multiprocessing.Queue[list[str]], stop: Any) -> None:
    """moto's DynamoDB over HTTP, in a process of its own, until `stop` is set."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    urls.put([f"http://{host}:{port}"])
    stop.wait()
    server.stop()


@contextmanager
def dynamodb_elsewhere() -> Iterator[str]:
    """The endpoint of a DynamoDB (moto's) served by another process, as DynamoDB is: its work
    is not this process's."""
    context = multiprocessing.get_context("spawn")
    urls: multiprocessing.Queue[list[str]] = context.Queue()
    stop = context.Event()
    process = context.Process(target=_serve_dynamodb, args=(urls, stop), daemon=True)
    process.start()
    try:
        yield urls.get(timeout=60)[0]
    finally:
        stop.set()
        process.join(timeout=30)


@contextmanager
def judges_elsewhere(latency: float) -> Iterator[list[str]]:
    """The base URLs of the fake judges, served by another process."""
    context = multiprocessing.get_context("spawn")
    urls: multiprocessing.Queue[list[str]] = context.Queue()
    stop = context.Event()
    process = context.Process(target=_serve, args=(latency, urls, stop), daemon=True)
    process.start()
    try:
        yield urls.get(timeout=60)
    finally:
        stop.set()
        process.join(timeout=30)


def _run(pairs: int, latency: float, jury: bool) -> tuple[float, int, Decimal]:
    """(seconds, calls made, cost) of one evaluation of `pairs` pairs, by one judge or by the
    jury of three."""
    identity = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")
    with dynamodb_elsewhere() as dynamodb, judges_elsewhere(latency) as urls:
        endpoints = {
            name: {"base_url": url, "api_key": "sk-bench"}
            for name, url in zip(NAMES, urls, strict=True)
        }
        client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=dynamodb)
        apply_environment(
            {
                **create_tables(client, "bench"),
                "EVALSVC_DYNAMODB_ENDPOINT_URL": dynamodb,
                "EVALSVC_LLM": NAMES[0],
                "EVALSVC_OPENAI_BASE_URL": urls[0],
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
        return elapsed, done.usage.llm_calls, cost


def figures(pairs: int, latency: float, rounds: int) -> None:
    best: dict[bool, tuple[float, int, Decimal]] = {}
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
    print("| judged by | seconds | calls | cost USD |")
    print("|---|---|---|---|")
    for name, (seconds, calls, cost) in (("1 judge", one), ("3 judges", three)):
        print(f"| {name} | {seconds:.3f} | {calls} | {cost} |")
    print(
        f"\nwall time 3 judges / 1 judge: {three[0] / one[0]:.3f}x (goal: at most 1.15x); "
        f"calls {three[1] / one[1]:.3f}x, cost {three[2] / one[2]:.6f}x (goal: exactly 3x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", default="96,400")
    parser.add_argument("--latency", default="0.05,0.5")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    for latency in (float(x) for x in options.latency.split(",")):
        for pairs in (int(p) for p in options.pairs.split(",")):
            figures(pairs, latency, options.rounds)


if __name__ == "__main__":
    main()
