"""Pairwise judging (E5) through the work queue: R runs x P pairs, every matchup in both
orders, against a fake OpenAI-compatible judge of fixed latency L in a process of its own.

Set-up (not measured): R seed datasets of P pairs each with the same pair ids and inputs, and
outputs that differ between every two runs (no comparison is byte-equal, so every comparison is
a judge call: R(R-1)/2 matchups x 2 orders x P pairs; run r's output says "please" on pair i
when i mod 4 < r, so the judge, which prefers the output that says please and else the one
shown first, ranks the runs 3 > 2 > 1 > 0); a checks-only metrics set (check:non_empty) and R
evaluations of it, which need no judge.

Measured: the request, as POST /pairwise with `Prefer: respond-async` makes it
(logic.pairwise.pairwise, respond_async, so it is queued whatever its size), then W worker
threads (the local runner: the chunk handler Lambda runs, evalsvc.handlers.background.chunk_handler,
polling the embedded SQS; started once the request has answered) each making up to J =
EVALSVC_JUDGE_CONCURRENCY judge calls at once, so C = W x J calls in flight at most, until the
run is complete. Printed: the judge calls, the calling phase (first call to last answer) and the
whole job (request to complete) against the ideal C / L calls a second; where each chunk's time
went; the service's DynamoDB calls by operation (the request, the chunks, the finish) against
the minimum the design needs:

Request (K = R(R-1) calls a pair; S = EVALSVC_CHUNK_JUDGE_CALLS // K pairs a chunk; N chunks)
    GetItem R          each result's header (exists, complete; its dataset)
    Query R x pages    each result's scored pair ids (1 MB pages, sized before projection)
    GetItem 1          the tenant's monthly limit (a queued run is held to what it leaves)
    BatchWriteItem     each chunk's pair ids, an item a chunk, 25 a call
    BatchWriteItem 1   the job's chunk plan, kept apart from the job item
    GetItem 1          the tenant's running jobs (the cap, before anything is stored)
    TransactWriteItems 1  the job, its slot among the tenant's running jobs, the run (running)
    (SQS SendMessageBatch: 10 chunks a call)
A chunk of s pairs (s x K judge calls)
    GetItem 1          the job (is it running; its params)
    GetItem 1 + 1      the run item (question, result ids) and the chunk's pair ids item
    GetItem R          the results' headers (their datasets, when they scored)
    GetItem R          the datasets' headers (the version to read the pairs from)
    BatchGetItem R x ceil(s / 100)      the pairs' texts, each run's dataset, 100 keys a call
    BatchGetItem ceil(sK / 100)         the judge cache, every comparison's key
    GetItem 1, UpdateItem 2             accounting: the monthly limit, the reservation of
                                        the calls' bound and its settlement (the month item)
    UpdateItem 2       the chunk's spent# item: the hold before the calls, the usage after
    UpdateItem 2       once per tenant and month, with its first reservation: one refused
                       (the month item has no map of reservations yet), one that starts it
    BatchWriteItem ceil(sK / 25)        every answer into the judge cache, 25 a call
    BatchWriteItem ceil(s / 25)         the pairs' verdicts, an item a pair, 25 a call
    TransactWriteItems 1, GetItem 1     counting the chunk once (its tally and the job's
                                        counters), and the counters after (a transaction
                                        returns no values)
The finish (inside the last chunk)
    GetItem 1, Query 2 the job; the chunks' tallies and their LLM usage (an item a chunk each)
    GetItem 1          the run item (the request's usage, to which the chunks' is added)
    TransactWriteItems 1  the job complete, out of the running set, the run's counts and usage

Polling the run's status (the bench's, as a client's GET would) is not counted.

    .venv/bin/python bench/pairwise.py [--workers 1] [--concurrency 16] [--latency 0.5]
                                       [--pairs 2000] [--runs 4] [--chunk-calls N]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, finish_apart, query_pages, shown

# isort: split

from evalsvc.core.deadlines import Deadline
from evalsvc.core.settings import get_settings
from evalsvc.logic import datasets, evaluations, jobs, metric_set_create
from evalsvc.logic import pairwise as pairwise_logic
from evalsvc.logic.kinds import pairwise as pairwise_kind
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import PairIn, SeedDatasetIn
from evalsvc.models.evaluations import EvaluateIn
from evalsvc.models.jobs import Status
from evalsvc.models.pairwise import PairwiseIn
from evalsvc.scoring import judges
from evalsvc.storage import dynamo, work_queue
from evalsvc.storage import judge_cache as judge_cache_store
from evalsvc.storage import pairwise as pairwise_store
from evalsvc.storage import results as results_store
from evalsvc_tools.local.server import apply_environment
from evalsvc_tools.local.store import EmbeddedDynamoDB
from evalsvc_tools.local.workers import LocalWorkers
from judge_process import judge_process

IDENTITY = Identity(tenant="bench", user="bench", user_email="bench@example.test", key_id="b")
QUESTION = "Which answer helps the customer more?"
OPERATIONS = [
    "GetItem",
    "Query",
    "BatchGetItem",
    "BatchWriteItem",
    "PutItem",
    "UpdateItem",
    "TransactWriteItems",
]


# ---- the judge, in a process of its own ----------------------------------------------------


# ---- set-up --------------------------------------------------------------------------------


def output_of(run: int, i: int) -> str:
    """Run `run`'s output for pair `i`: says please when i mod 4 < run; never byte-equal to
    another run's (the draft number)."""
    polite = "Please open" if i % 4 < run else "Open"
    return f"{polite} Settings, then Billing, edit the address and press Save ({i}, draft {run})."


def seed_runs(runs: int, pairs: int) -> list[str]:
    """R datasets of the same pair ids and inputs, their outputs differing; their ids."""
    ids = []
    for run in range(runs):
        dataset_id = f"pw-run-{run}"
        data = [
            PairIn(
                id=f"pair-{i:06d}",
                input=f"Question {i}: how do I change the billing address on my account?",
                output=output_of(run, i),
            )
            for i in range(pairs)
        ]
        datasets.write_seed_dataset(IDENTITY, dataset_id, SeedDatasetIn(data=data))
        ids.append(dataset_id)
    return ids


# ---- counting --------------------------------------------------------------------------------


class Calls(CallCounter):
    """The service's DynamoDB calls by operation, from every thread but those `ignored` (the
    bench's own polling)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ignored: set[int] = set()
        super().__init__()

    def _count(self, event_name: str, **_: Any) -> None:
        if threading.get_ident() in self.ignored:
            return
        with self.lock:
            self.calls[event_name.rsplit(".", 1)[-1]] += 1

    def take(self) -> Counter[str]:
        with self.lock:
            return super().take()


class SendCounter:
    def __init__(self, client: Any) -> None:
        self.calls: Counter[str] = Counter()
        client.meta.events.register("before-call.sqs", self._count)

    def _count(self, event_name: str, **_: Any) -> None:
        self.calls[event_name.rsplit(".", 1)[-1]] += 1


@dataclass
class Delivery:
    """One delivery of a chunk to a worker thread: when it started, when its judge calls were
    started (after its reads and the cache read), when the answers were all in (the cache
    write began), and when it ended."""

    thread: int
    start: float
    calls_start: list[float] = field(default_factory=list)
    calls_end: list[float] = field(default_factory=list)
    end: float = 0.0


class Timeline:
    """Where the workers' time went, chunk by chunk (hooks on the handler, on the judge's run
    of asks, and on the judge cache's write)."""

    def __init__(self) -> None:
        self.deliveries: list[Delivery] = []
        self._current: dict[int, Delivery] = {}
        self._undo: list[Callable[[], None]] = []

    def _now(self) -> Delivery | None:
        return self._current.get(threading.get_ident())

    def install(self, runner: LocalWorkers) -> None:
        timeline = self
        for consumer in runner.consumers[:-1]:  # the last: the dead-letter queue's
            handler = consumer.handler

            def timed(event: Any, context: Any, handler: Any = handler) -> Any:
                delivery = Delivery(threading.get_ident(), time.perf_counter())
                timeline._current[delivery.thread] = delivery
                try:
                    return handler(event, context)
                finally:
                    delivery.end = time.perf_counter()
                    timeline.deliveries.append(delivery)
                    del timeline._current[delivery.thread]

            consumer.handler = timed

        real_init = judges.AskRun.__init__
        real_put = judge_cache_store.put_many

        def init(self: Any, judge: Any, plan: Any) -> None:
            now = timeline._now()
            if now is not None:
                now.calls_start.append(time.perf_counter())
            real_init(self, judge, plan)

        def put_many(tenant: str, verdicts: Any) -> None:
            now = timeline._now()
            if now is not None:
                now.calls_end.append(time.perf_counter())
            real_put(tenant, verdicts)

        judges.AskRun.__init__ = init  # type: ignore[method-assign]
        judge_cache_store.put_many = put_many  # type: ignore[assignment]

        def undo() -> None:
            judges.AskRun.__init__ = real_init  # type: ignore[method-assign]
            judge_cache_store.put_many = real_put  # type: ignore[assignment]

        self._undo.append(undo)

    def uninstall(self) -> None:
        for undo in self._undo:
            undo()

    def summary(self) -> dict[str, float]:
        """Seconds summed over deliveries: before the calls, calling, after the calls; and
        between one delivery's end and the same thread's next start."""
        before = calling = after = between = 0.0
        last_end: dict[int, float] = {}
        for d in sorted(self.deliveries, key=lambda d: d.start):
            if d.calls_start and d.calls_end:
                before += d.calls_start[0] - d.start
                calling += d.calls_end[-1] - d.calls_start[0]
                after += d.end - d.calls_end[-1]
            if d.thread in last_end:
                between += d.start - last_end[d.thread]
            last_end[d.thread] = d.end
        return {"before": before, "calling": calling, "after": after, "between": between}


# ---- the minimum ---------------------------------------------------------------------------


def minimum(
    runs: int, chunk_sizes: list[int], scored_pages: int, calls_per_pair: int
) -> dict[str, Counter[str]]:
    """The calls the design needs (the module's docstring says what each is for)."""
    chunks = len(chunk_sizes)
    request: Counter[str] = Counter(
        GetItem=runs + 1 + 1,
        Query=scored_pages,
        BatchWriteItem=math.ceil(chunks / 25) + 1,
        TransactWriteItems=1,
    )
    chunk: Counter[str] = Counter(UpdateItem=2)  # the month's first reservation
    for s in chunk_sizes:
        calls = s * calls_per_pair
        chunk["GetItem"] += 1 + 2 + runs + runs + 1 + 1
        chunk["BatchGetItem"] += runs * math.ceil(s / 100) + math.ceil(calls / 100)
        chunk["UpdateItem"] += 4
        chunk["BatchWriteItem"] += math.ceil(calls / 25) + math.ceil(s / 25)
        chunk["TransactWriteItems"] += 1
    finish: Counter[str] = Counter(GetItem=2, Query=2, TransactWriteItems=1)
    return {"request": request, "chunks": chunk, "finish": finish}


def scored_query_pages(result_ids: list[str]) -> int:
    """The fewest 1 MB Query pages that read every result's scored items (sized before the
    projection to their keys)."""
    pages = 0
    for rid in result_ids:
        size = sum(
            dynamo.item_size(item)
            for item in dynamo.query_items(
                TableName=get_settings().results_table,
                KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                ExpressionAttributeValues={
                    ":pk": {"S": results_store.result_pk(IDENTITY.tenant, rid)},
                    ":p": {"S": "p#"},
                },
            )
        )
        pages += query_pages(size)
    return pages


HEADS = {
    "GetItem": "GetItem",
    "Query": "Query",
    "BatchGetItem": "BatchGet",
    "BatchWriteItem": "BatchWrite",
    "PutItem": "PutItem",
    "UpdateItem": "Update",
    "TransactWriteItems": "Transact",
}


def table_row(name: str, calls: Counter[str]) -> str:
    return (
        f"  {name:<14}"
        + "".join(f"{calls.get(op, 0):>11}" for op in OPERATIONS)
        + (f"{sum(calls.values()):>10}")
    )


# ---- the run -------------------------------------------------------------------------------


def bench(
    workers: int,
    concurrency: int,
    latency: float,
    pairs: int,
    runs: int,
    chunk_calls: int | None,
) -> None:
    ideal = workers * concurrency / latency
    each = runs * (runs - 1)  # matchups x 2 orders
    with tempfile.TemporaryDirectory() as tmp, judge_process(latency) as judge:
        store = EmbeddedDynamoDB(Path(tmp), port=0)
        env = store.start()
        try:
            extra = {} if chunk_calls is None else {"EVALSVC_CHUNK_JUDGE_CALLS": str(chunk_calls)}
            apply_environment(
                {
                    **env,
                    "EVALSVC_LLM": "openai:fake-judge",
                    "EVALSVC_OPENAI_BASE_URL": judge.base_url,
                    "EVALSVC_OPENAI_API_KEY": "sk-bench",
                    "EVALSVC_JUDGE_CONCURRENCY": str(concurrency),
                    # The set-up's evaluations are scored inside their requests.
                    "EVALSVC_INLINE_MAX_CHECKS": str(max(10_000, pairs)),
                    # No metrics printed (CloudWatch's embedded format, a line a chunk).
                    "POWERTOOLS_METRICS_DISABLED": "true",
                    **extra,
                }
            )
            set_up = time.perf_counter()
            dataset_ids = seed_runs(runs, pairs)
            metric_set_create.create_metrics_set(IDENTITY, ["check:non_empty"])
            result_ids = []
            for dataset_id in dataset_ids:
                done = evaluations.evaluate(
                    IDENTITY, EvaluateIn(seed_data_id=dataset_id), Deadline.never()
                )
                assert done.status is Status.COMPLETE, done
                result_ids.append(done.results_id)
            pages = scored_query_pages(result_ids)
            set_up = time.perf_counter() - set_up
            print(
                f"pairwise: {runs} runs x {pairs} pairs, both orders; {workers} worker(s) x "
                f"{concurrency} judge calls in flight = C {workers * concurrency}, latency "
                f"{latency} s: ideal C/L = {ideal:.1f} calls/s (set-up {set_up:.1f} s)"
            )

            counter = Calls()
            sends = SendCounter(work_queue.client())
            started = time.perf_counter()
            answered = pairwise_logic.pairwise(
                IDENTITY,
                PairwiseIn(result_ids=result_ids, question=QUESTION, max_pairs=pairs),
                Deadline.after(29),
                respond_async=True,
            )
            request_seconds = time.perf_counter() - started
            assert answered.status is Status.RUNNING, answered
            request_calls = counter.take()
            request_sends = Counter(sends.calls)

            runner = LocalWorkers(
                store.sqs_client(),
                store.queues["WorkQueue"],
                store.queues["WorkDeadLetterQueue"],
                workers=workers,
                idle_pause=0.05,
            )
            timeline = Timeline()
            timeline.install(runner)
            counter.ignored.add(threading.get_ident())  # the bench's polling below
            with finish_apart(counter.take) as (chunk_calls_seen, finish_calls):
                runner.start()
                try:
                    while True:
                        run = pairwise_store.get(IDENTITY.tenant, answered.pairwise_id)
                        assert run is not None
                        if run.status is not Status.RUNNING:
                            break
                        time.sleep(0.05)
                    ended = time.perf_counter()
                finally:
                    runner.stop(timeout=120)
                    timeline.uninstall()
            job = jobs.get(IDENTITY.tenant, pairwise_kind.PAIRWISE, answered.pairwise_id)
        finally:
            store.stop()
    assert run.status is Status.COMPLETE, run.failure
    assert job is not None

    size = max(1, (chunk_calls or get_settings().chunk_judge_calls) // each)
    sizes = [min(size, pairs - k) for k in range(0, pairs, size)]
    assert len(sizes) == job.chunk_count, (sizes, job.chunk_count)
    calls = judge.calls
    expected = pairs * each
    whole = ended - started
    calling = judge.last_response_at - judge.first_request_at
    print(
        f"  judge calls {calls} (expected {expected}: {runs * (runs - 1) // 2} matchups x 2 "
        f"orders x {pairs} pairs); {job.chunk_count} chunks of {size} pairs ({size * each} "
        f"calls), the last {sizes[-1]}; most in flight {judge.max_in_flight}"
    )
    print(
        f"  calling phase (first call to last answer) {calling:.1f} s: {calls / calling:.1f} "
        f"calls/s = {100 * calls / calling / ideal:.1f} % of ideal"
    )
    print(
        f"  whole job (request to complete) {whole:.1f} s: {calls / whole:.1f} calls/s = "
        f"{100 * calls / whole / ideal:.1f} % of ideal (the request {request_seconds:.2f} s; "
        f"first call {judge.first_request_at - started:.2f} s after it; complete "
        f"{ended - judge.last_response_at:.2f} s after the last answer)"
    )
    ideal_calls = expected * latency / concurrency  # summed over the workers
    parts = timeline.summary()
    print(
        f"  the workers' time, summed over {len(timeline.deliveries)} deliveries: reads and "
        f"cache read before the calls {parts['before']:.1f} s, calls {parts['calling']:.1f} s "
        f"(ideal {ideal_calls:.1f} s; over it by "
        f"{parts['calling'] - ideal_calls:.1f} s: each chunk's last round of calls not full, "
        f"and each call's time beyond L), cache and verdict writes, accounting and "
        f"counting after them {parts['after']:.1f} s, between deliveries (queue) "
        f"{parts['between']:.1f} s"
    )
    print(f"  the run: {run.pairs_used} pairs; counts {run.counts['outcomes']}")

    least = minimum(runs, sizes, pages, each)
    print("  DynamoDB calls" + "".join(f"{HEADS[op]:>11}" for op in OPERATIONS) + "     total")
    measured = {"request": request_calls, "chunks": chunk_calls_seen, "finish": finish_calls}
    for name in ("request", "chunks", "finish"):
        print(table_row(name, measured[name]))
        print(table_row("  minimum", least[name]))
    print(
        f"  a chunk: {sum(chunk_calls_seen.values()) / job.chunk_count:.1f} DynamoDB calls on "
        f"average (minimum {sum(least['chunks'].values()) / job.chunk_count:.1f}) for "
        f"{expected / job.chunk_count:.0f} judge calls"
    )
    total: Counter[str] = sum(measured.values(), Counter())
    total_least: Counter[str] = sum(least.values(), Counter())
    print(table_row("total", total))
    print(table_row("  minimum", total_least))
    others = {op: c for op, c in total.items() if op not in OPERATIONS}
    if others:
        print(f"  other operations: {shown(Counter(others))}")
    print(
        f"  DynamoDB calls {sum(total.values())} against the minimum "
        f"{sum(total_least.values())}: {sum(total.values()) / sum(total_least.values()):.3f}x; "
        f"SQS (the request) {shown(request_sends)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument(
        "--chunk-calls", type=int, default=None, help="EVALSVC_CHUNK_JUDGE_CALLS (the default's)"
    )
    args = parser.parse_args()
    bench(args.workers, args.concurrency, args.latency, args.pairs, args.runs, args.chunk_calls)


if __name__ == "__main__":
    main()
