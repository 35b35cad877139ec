"""Queued evaluation figures (the work queue and its workers):

1. throughput: a fake OpenAI-compatible judge of fixed latency L on 127.0.0.1 (a process of
   its own), W worker
   threads (the local runner: the same handler Lambda runs, polling the embedded SQS) each
   making up to J judge calls at once, so C = W x J calls in flight at most. Judge calls per
   second against the ideal C / L, over the calling phase and over the whole job.
2. checks: N pairs x 5 check metrics end to end through the queue, in-process moto, one
   worker delivering every message: seconds per phase, and the DynamoDB and SQS calls against
   the minimum the design needs.
3. fairness: a small tenant's 120-pair judged evaluation, from its request to complete, alone
   and queued behind another tenant's four 1,000-pair evaluations, with the local workers'
   fair share of the queue and without it (first come, first served: the code before), on the
   local server's store and worker threads and the fake judge of fixed latency.

    .venv/bin/python bench/fanout.py throughput [--workers 4] [--concurrency 16]
                                               [--latency 0.5] [--pairs 3200]
    .venv/bin/python bench/fanout.py checks [--pairs 10000] [--pairs 100000]
    .venv/bin/python bench/fanout.py fairness [--workers 2] [--concurrency 16] [--latency 0.2]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import tempfile
import time
from collections import Counter
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

# The harness sets the offline environment before any service module reads it.
from harness import (
    CallCounter,
    finish_apart,
    fresh_tables,
    shown,
    stored_bytes,
    version_pages,
)

# isort: split

import boto3
from evalsvc.core.deadlines import Deadline
from evalsvc.core.settings import get_settings
from evalsvc.handlers.background import chunk_handler, dead_chunk_handler
from evalsvc.logic import datasets, evaluations, metric_set_create
from evalsvc.logic.kinds import evaluation as evaluation_kind
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind, PairIn, SeedDatasetIn
from evalsvc.models.evaluations import EvaluateIn
from evalsvc.models.jobs import Status
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import dynamo, work_queue
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage import results as results_store
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.server import apply_environment
from evalsvc_tools.local.store import EmbeddedDynamoDB
from evalsvc_tools.local.tables import create_queues
from evalsvc_tools.local.workers import LocalWorkers, QueueConsumer, drain, local_worker_counts
from judge_process import JudgeStats, judge_process

IDENTITY = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")
CHECKS = [
    "check:non_empty",
    "check:max_words:40",
    "check:contains:Settings",
    "check:no_pii",
    "check:readability",
]


def seed(n: int, identity: Identity = IDENTITY, dataset_id: str = "bench-ds") -> None:
    """`n` pairs as dataset `dataset_id`; datasets of other ids have texts of their own (the
    judge cache answers none of their verdicts)."""
    tag = "" if dataset_id == "bench-ds" else f" [{dataset_id}]"
    data = [
        PairIn(
            id=f"pair-{i:06d}",
            input=f"Question {i}: how do I change the billing address on my account?{tag}",
            output=f"Open Settings, then Billing, edit the address and press Save ({i}).",
        )
        for i in range(n)
    ]
    datasets.write_seed_dataset(identity, dataset_id, SeedDatasetIn(data=data))


# ---- 1. throughput -----------------------------------------------------------------------------


def _judged(env: dict[str, str], judge: JudgeStats, concurrency: int, **extra: str) -> None:
    """The service pointed at the embedded store (`env`) and at the fake judge process."""
    apply_environment(
        {
            **env,
            "EVALSVC_LLM": "openai:fake-judge",
            "EVALSVC_OPENAI_BASE_URL": judge.base_url,
            "EVALSVC_OPENAI_API_KEY": "sk-bench",
            "EVALSVC_JUDGE_CONCURRENCY": str(concurrency),
            **extra,
        }
    )


def throughput(workers: int, concurrency: int, latency: float, pairs: int) -> None:
    ideal = workers * concurrency / latency
    with tempfile.TemporaryDirectory() as tmp, judge_process(latency) as judge:
        store = EmbeddedDynamoDB(Path(tmp), port=0)
        env = store.start()
        try:
            # Two rounds of chunks for the workers: each chunk 400 calls.
            _judged(env, judge, concurrency, EVALSVC_CHUNK_JUDGE_CALLS=str(pairs // (2 * workers)))
            seed(pairs)
            metric_set_create.create_metrics_set(IDENTITY, ["Does the output say please?"])
            runner = LocalWorkers(
                store.sqs_client(),
                store.queues["WorkQueue"],
                store.queues["WorkDeadLetterQueue"],
                workers=workers,
                idle_pause=0.05,
            )
            runner.start()
            started = time.perf_counter()
            done = evaluations.evaluate(
                IDENTITY,
                EvaluateIn(seed_data_id="bench-ds"),
                Deadline.after(29),
                respond_async=True,
            )
            results_id = done.results_id
            while True:
                result = results_store.get(IDENTITY.tenant, results_id)
                assert result is not None
                if result.status is not Status.RUNNING:
                    break
                time.sleep(0.05)
            ended = time.perf_counter()
            whole = ended - started
            runner.stop()
        finally:
            store.stop()
    assert result.status is Status.COMPLETE, result.failure
    calls = judge.calls
    calling = judge.last_response_at - judge.first_request_at
    print(
        f"throughput: {pairs} judge calls, latency {latency} s, {workers} workers x "
        f"{concurrency} in flight = C {workers * concurrency}; ideal C/L = {ideal:.1f} calls/s"
    )
    print(
        f"  calling phase {calling:.2f} s: {calls / calling:.1f} calls/s = "
        f"{calls / calling / ideal:.3f} of ideal; max in flight {judge.max_in_flight}"
    )
    print(
        f"  whole job (request to complete) {whole:.2f} s: {calls / whole:.1f} calls/s = "
        f"{calls / whole / ideal:.3f} of ideal (first call {judge.first_request_at - started:.2f} "
        f"s after the request; complete {ended - judge.last_response_at:.2f} s after the last)"
    )


# ---- 2. checks end to end ----------------------------------------------------------------------


class SqsCounter:
    def __init__(self, client: Any) -> None:
        self.calls: Counter[str] = Counter()
        client.meta.events.register("before-call.sqs", self._count)

    def _count(self, event_name: str, **_: Any) -> None:
        self.calls[event_name.rsplit(".", 1)[-1]] += 1

    def take(self) -> Counter[str]:
        calls, self.calls = self.calls, Counter()
        return calls


def checks(n: int) -> None:
    with moto_in_process():
        sqs = boto3.client("sqs", region_name="us-east-1")
        urls = create_queues(sqs, "bench")
        fresh_tables(
            {"EVALSVC_WORK_QUEUE_URL": urls["WorkQueue"], "EVALSVC_INLINE_MAX_CHECKS": "0"}
        )
        seeded = time.perf_counter()
        seed(n)
        header = datasets_store.get_header(IDENTITY.tenant, DatasetKind.SEED, "bench-ds")
        assert header is not None
        dataset_bytes = stored_bytes(header)
        metric_set_create.create_metrics_set(IDENTITY, CHECKS)
        seconds = time.perf_counter() - seeded
        print(f"checks: {n} pairs x {len(CHECKS)} checks (seeded in {seconds:.1f} s)")
        dynamo_calls = CallCounter()
        sqs_calls = SqsCounter(work_queue.client())
        consumers = [
            QueueConsumer(sqs, urls["WorkQueue"], chunk_handler, batch_size=1),
            QueueConsumer(sqs, urls["WorkDeadLetterQueue"], dead_chunk_handler, batch_size=10),
        ]
        receive_calls = SqsCounter(sqs)

        started = time.perf_counter()
        done = evaluations.evaluate(
            IDENTITY, EvaluateIn(seed_data_id="bench-ds"), Deadline.never(), respond_async=True
        )
        queued = time.perf_counter() - started
        request_dynamo, request_sqs = dynamo_calls.take(), sqs_calls.take()
        receive_calls.take()
        assert done.status is Status.RUNNING
        # The finish step's own calls, apart from the chunks' (it runs inside the last one).
        with finish_apart(dynamo_calls.take) as (chunk_dynamo, finish_dynamo):
            started = time.perf_counter()
            deliveries = drain(consumers)
            worked = time.perf_counter() - started
        worker_sqs = sqs_calls.take()
        poller_sqs = receive_calls.take()
        tallies = list(
            jobs_store.tallies(IDENTITY.tenant, evaluation_kind.EVALUATION, done.results_id)
        )
        result = results_store.get(IDENTITY.tenant, done.results_id)
        assert result is not None and result.status is Status.COMPLETE, result
        scored_bytes = sum(
            dynamo.item_size(item)
            for item in dynamo.query_items(
                TableName=get_settings().results_table,
                KeyConditionExpression="pk = :pk",
                ExpressionAttributeValues={
                    ":pk": {"S": results_store.result_pk(IDENTITY.tenant, result.results_id)}
                },
            )
        )
        size = evaluation_kind.pairs_per_chunk(CHECKS, None)
        chunk_count = math.ceil(n / size)
        print(
            f"  request (select keys, queue {chunk_count} chunks of {size}): {queued:.1f} s; "
            f"workers ({deliveries} deliveries, one worker): {worked:.1f} s"
        )
        print(f"  request DynamoDB: {shown(request_dynamo)}; SQS: {shown(request_sqs)}")
        print(f"  chunks DynamoDB: {shown(chunk_dynamo)}; SQS: {shown(worker_sqs)}")
        print(
            f"  finish DynamoDB: {shown(finish_dynamo)} (reads {len(tallies)} chunk items, "
            f"not the {n} scored pairs)"
        )
        print(f"  Lambda's poller (not the service's calls) SQS: {shown(poller_sqs)}")
        pages = version_pages(header)
        print(
            f"  minimum: read the keys once, Query {pages} (one a shard at least), and each "
            f"chunk its range, Query {header.shards} a chunk "
            f"(dataset {dataset_bytes / 1e6:.2f} MB, {header.shards} shards); "
            f"write {n} scored pairs, BatchWriteItem {math.ceil(n / 25)}; count each chunk, "
            f"TransactWriteItems {chunk_count}; create the result and job TransactWriteItems 1; "
            f"finish: read the chunk tallies, Query 1, complete TransactWriteItems 1; "
            f"SQS SendMessageBatch {math.ceil(chunk_count / 10)} "
            f"(scored pairs {scored_bytes / 1e6:.2f} MB, never read back)"
        )


# ---- 3. fairness across tenants ----------------------------------------------------------------

SMALL = Identity(tenant="small", user="s", user_email="s@example.test", key_id="s")


def _wait_complete(identity: Identity, results_id: str) -> float:
    """Seconds until the result is no longer running (polled every 50 ms)."""
    started = time.perf_counter()
    while True:
        result = results_store.get(identity.tenant, results_id)
        assert result is not None
        if result.status is not Status.RUNNING:
            assert result.status is Status.COMPLETE, result.failure
            return time.perf_counter() - started
        time.sleep(0.05)


def _small_behind(
    workers: int, concurrency: int, latency: float, backlog: int, mode: str
) -> tuple[float, int]:
    """Seconds from the small tenant's request to its result, after `backlog` 1,000-pair
    evaluations of another tenant were queued (0: alone), and how many chunks of the other
    tenant's were delivered before the small one's. `mode`: "fifo" (`workers` workers taking
    chunks as queued), "fair" (the same workers, fairly), "share" (as the local server runs:
    `workers` for one tenant and one more for the others, fairly)."""
    with tempfile.TemporaryDirectory() as tmp, judge_process(latency) as judge:
        store = EmbeddedDynamoDB(Path(tmp), port=0)
        env = store.start()
        try:
            _judged(env, judge, concurrency)
            # Four datasets of the big tenant's, so that no verdict of one is cached for another.
            for k in range(backlog):
                seed(1000, IDENTITY, f"backlog-{k}")
            seed(120, SMALL)
            for identity in (IDENTITY, SMALL):
                metric_set_create.create_metrics_set(identity, ["Does the output say please?"])
            counts = (
                local_worker_counts({"EVALSVC_LOCAL_WORKERS": str(workers)})
                if mode == "share"
                else {"workers": workers}
            )
            runner = LocalWorkers(
                store.sqs_client(),
                store.queues["WorkQueue"],
                store.queues["WorkDeadLetterQueue"],
                idle_pause=0.05,
                **counts,
            )
            delivered: list[str] = []
            for consumer in runner.consumers[:-1]:  # the work queue's (the last: dead letters)
                consumer.handler = _recording(consumer.handler, delivered)
                if mode == "fifo":
                    consumer.fair = None
            runner.start()

            def queue(identity: Identity, dataset_id: str = "bench-ds") -> str:
                return evaluations.evaluate(
                    identity,
                    EvaluateIn(seed_data_id=dataset_id),
                    Deadline.after(29),
                    respond_async=True,
                ).results_id

            for k in range(backlog):
                queue(IDENTITY, f"backlog-{k}")
            time.sleep(1.0)  # the workers have taken the backlog's first chunks
            started = time.perf_counter()
            results_id = queue(SMALL)
            _wait_complete(SMALL, results_id)
            seconds = time.perf_counter() - started
            before = delivered.index(SMALL.tenant)
            runner.stop(timeout=120)
        finally:
            store.stop()
    return seconds, before


def _recording(handler: Any, delivered: list[str]) -> Any:
    """`handler`, noting the tenant of every chunk it is given, as it is given it."""

    def recorded(event: dict[str, Any], context: Any) -> Any:
        delivered.extend(json.loads(r["body"])["tenant"] for r in event["Records"])
        return handler(event, context)

    return recorded


def _run_apart(pipe: Connection, *args: Any) -> None:
    pipe.send(_small_behind(*args))


def _apart(*args: Any) -> tuple[float, int]:
    """_small_behind in a process of its own: the in-process store and queues of one run
    (its backlog's chunks left waiting among them) must not be the next run's."""
    context = multiprocessing.get_context("spawn")
    ours, theirs = context.Pipe()
    process = context.Process(target=_run_apart, args=(theirs, *args))
    process.start()
    result: tuple[float, int] = ours.recv()
    process.join()
    return result


def fairness(workers: int, concurrency: int, latency: float) -> None:
    alone, _ = _apart(workers, concurrency, latency, 0, "share")
    print(
        f"fairness: 120 judged pairs of one tenant, 4 x 1,000 of another queued first; "
        f"{workers} workers a tenant x {concurrency} judge calls, latency {latency} s"
    )
    print(f"  alone {alone:.2f} s")
    for mode, what in (
        ("share", f"fair, {workers} workers a tenant + 1 kept for the others"),
        ("fair", f"fair, {workers} workers in all"),
        ("fifo", f"first come first served, {workers} workers in all"),
    ):
        seconds, before = _apart(workers, concurrency, latency, 4, mode)
        print(
            f"  behind the backlog, {what}: {seconds:.2f} s ({seconds / alone:.2f}x alone; "
            f"{before} chunks of the backlog delivered first)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    speed = commands.add_parser("throughput")
    speed.add_argument("--workers", type=int, default=4)
    speed.add_argument("--concurrency", type=int, default=16)
    speed.add_argument("--latency", type=float, default=0.5)
    speed.add_argument("--pairs", type=int, default=3200)
    bulk = commands.add_parser("checks")
    bulk.add_argument("--pairs", type=int, action="append")
    share = commands.add_parser("fairness")
    share.add_argument("--workers", type=int, default=2)
    share.add_argument("--concurrency", type=int, default=16)
    share.add_argument("--latency", type=float, default=0.2)
    args = parser.parse_args()
    if args.command == "throughput":
        throughput(args.workers, args.concurrency, args.latency, args.pairs)
    elif args.command == "fairness":
        fairness(args.workers, args.concurrency, args.latency)
    else:
        for n in args.pairs or [10_000]:
            checks(n)


if __name__ == "__main__":
    main()
