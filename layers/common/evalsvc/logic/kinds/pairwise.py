"""Queued pairwise runs (E5), one kind of work of the job engine (logic.jobs): a pairwise run
too large for one request (logic.pairwise) is cut into chunks of pair ids, judged by workers,
and completed from the counts its chunks left.

    queued    the request: each chunk's pair ids (items of their own), then the run (running)
              and its job in one transaction, then the chunks on the queue
    run       a worker: judge one chunk's pairs (every matchup, each order) and store their
              verdicts; its counts (outcomes per matchup, judgements per comparison) are
              counted with the chunk
    complete  whoever counts the last chunk: the counts added up, the run complete
    failed    the run failed, saying why (its verdicts stay: they explain it)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import Failure, Gone, OutOfTime, Unrecoverable
from evalsvc.core.observability import metrics
from evalsvc.core.settings import get_settings
from evalsvc.logic import chunks, jobs
from evalsvc.logic.pairwise_judging import (
    calls_per_pair,
    counts_of,
    judge_pairs,
    read_texts,
)
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.models.jobs import Chunk, Job, Status, Tally
from evalsvc.models.pairwise import PAIRWISE, Counts, PairwiseRun, Verdict
from evalsvc.scoring.judges import configured_judge
from evalsvc.spending.meter import Usage
from evalsvc.storage import judge_cache
from evalsvc.storage import pairwise as store
from evalsvc.storage import results as results_store
from evalsvc.storage.writes import Writes

# The most pairs in a chunk, whatever EVALSVC_CHUNK_JUDGE_CALLS allows: its item of pair ids
# (128 ASCII characters each at most) stays under 300 KB, within DynamoDB's 400 KB.
MAX_CHUNK_PAIRS = 2_000


def pairs_per_chunk(runs: int, both_orders: bool) -> int:
    """As many pairs as keep a chunk within EVALSVC_CHUNK_JUDGE_CALLS judge calls (and
    MAX_CHUNK_PAIRS)."""
    calls = get_settings().chunk_judge_calls // calls_per_pair(runs, both_orders)
    return max(1, min(calls, MAX_CHUNK_PAIRS))


def queued(run: PairwiseRun, pair_ids: Sequence[str], max_cost: Decimal | None = None) -> Job:
    """Start the job of judging `run` (running, stored with its job) over `pair_ids`; the job
    as started, or as it stands when a retry of the same request started it before."""
    size = pairs_per_chunk(len(run.result_ids), run.both_orders)
    groups = [list(pair_ids[k : k + size]) for k in range(0, len(pair_ids), size)]
    pieces = [
        Chunk(
            kind=PAIRWISE,
            tenant=run.tenant,
            job_id=run.pairwise_id,
            index=k,
            start=k * size,
            count=len(group),
            first_ord=group[0],
            last_ord=group[-1],
        )
        for k, group in enumerate(groups)
    ]
    run.status = Status.RUNNING
    store.put_chunks(run.tenant, run.pairwise_id, groups)
    job = Job(
        kind=PAIRWISE,
        tenant=run.tenant,
        job_id=run.pairwise_id,
        chunk_count=len(pieces),
        pairs_total=len(pair_ids),
        created_ms=run.created_ms,
        params=jobs.cap_params(max_cost),
    )
    return jobs.start(job, pieces, store.running(run), "run the pairwise comparison again")


class Pairwise:
    """Queued pairwise runs as the job engine runs them."""

    name = PAIRWISE
    completed_metric = "PairwiseRuns"  # as a run judged inside its request counts

    def run(self, job: Job, chunk: Chunk, attempt: int, deadline: Deadline) -> Tally | None:
        tenant = chunk.tenant
        run = store.get(tenant, chunk.job_id)
        if run is None:
            raise Unrecoverable(f"pairwise run {chunk.job_id!r} is missing")
        pair_ids = store.chunk_ids(tenant, chunk.job_id, chunk.index)
        if pair_ids is None:
            raise Unrecoverable(f"{chunks.describe(chunk)}: its pair ids are missing")
        results = _results(tenant, run)
        stored: dict[str, list[Verdict]] = {}
        if chunk.requeues or attempt > 1:
            # An earlier delivery may have stored part of the chunk before its deadline.
            stored = store.verdicts_of(tenant, run.pairwise_id, pair_ids)
        todo = [pid for pid in pair_ids if pid not in stored]
        judge = configured_judge(tenant, judge_cache, deadline)
        fresh: list[Verdict] = []
        complete = True
        # Texts are read within the chunk's byte limit, in rounds: a round's pairs are judged
        # before the next is read.
        while todo and complete:
            try:
                texts, unread = read_texts(tenant, results, todo, get_settings().chunk_max_bytes)
            except Gone as exc:  # a run's version expired: no later attempt can read it
                raise Unrecoverable(f"{chunks.describe(chunk)}: {exc.message}") from exc
            round_ids = [pid for pid in todo if pid not in unread]
            if not round_ids:  # one pair alone passes the limit: it cannot be read at all
                raise Unrecoverable(
                    f"{chunks.describe(chunk)}: pair {todo[0]!r} is too large to read"
                )
            judged = judge_pairs(
                judge, run.question, len(run.result_ids), run.both_orders, texts, round_ids
            )
            store.put_verdicts(tenant, run.pairwise_id, judged.verdicts)
            fresh.extend(judged.verdicts)
            complete = judged.complete
            todo = [pid for pid in todo if pid in unread]
        metrics.add_metric(
            name="PairsCompared", unit="Count", value=len({v.pair_id for v in fresh})
        )
        if not complete:
            raise OutOfTime(
                f"{chunks.describe(chunk)}: the worker's time ran out before every comparison "
                "was judged; the verdicts given are kept"
            )
        everything = [v for pair in stored.values() for v in pair] + fresh
        return Tally(
            index=chunk.index,
            pairs=len(pair_ids),
            bytes=0,
            totals={
                "counts": counts_of(everything).as_json(),
                "compared": len({v.pair_id for v in everything}),
            },
        )

    def complete(self, job: Job, tallies: Iterable[Tally], spent: Usage) -> Writes:
        run = store.get(job.tenant, job.job_id)
        if run is None:
            raise Unrecoverable(f"pairwise run {job.job_id!r} is missing")
        total = Counts()
        compared = 0
        for tally in tallies:
            total.merge(Counts.from_json(tally.totals.get("counts")))
            compared += int(tally.totals.get("compared", 0))
        run.counts = total.as_json()
        run.pairs_used = compared
        # What the request used before it queued the rest, and every delivery of every chunk.
        run.usage = run.usage + spent
        return store.completing(run)

    def failed(self, job: Job, failure: Failure) -> Writes:
        return store.failing(job.tenant, job.job_id, failure.message)

    def discard(self, job: Job) -> None:
        """The verdicts of a failed run stay: they cost little to keep and explain it."""


PAIRWISE_KIND = jobs.register(Pairwise())


def _results(tenant: str, run: PairwiseRun) -> list[EvaluationResult]:
    results = []
    for rid in run.result_ids:
        result = results_store.get(tenant, rid)
        if result is None:
            raise Unrecoverable(f"evaluation result {rid!r} of the pairwise run is gone")
        results.append(result)
    return results
