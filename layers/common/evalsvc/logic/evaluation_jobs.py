"""Queued evaluations: a job too large for one request is cut into chunks of pairs, put on the
work queue, scored by workers, and completed by whichever worker counts the last chunk.

    start     the request: the result (running) and one message per chunk
    wait      the request, for a plain POST: until complete, failed, or out of time
    run_chunk a worker: score one chunk's pairs, store them, count the chunk once
    finish    the worker that counted the last chunk: statistics, status complete
    give_up   the dead-letter worker: a chunk that kept failing fails its result

Every step may run twice (SQS delivers at least once, a worker may die anywhere): scored pairs
are idempotent writes, a chunk is counted once (storage.results.count_chunk), and completing
or failing a result is conditional on it still running.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from evalsvc.deadlines import Deadline
from evalsvc.errors import OutOfTime, StillRunning
from evalsvc.logic import chunks
from evalsvc.logic.scored_pairs import score_pairs, summarize_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetHeader, Pair
from evalsvc.models.evaluations import (
    Chunk,
    EvaluationResult,
    Job,
    JobKind,
    ScoredPair,
    Status,
)
from evalsvc.observability import logger, metrics
from evalsvc.scoring import checks
from evalsvc.scoring.judges import configured_judge
from evalsvc.scoring.metric import scorers_for
from evalsvc.settings import get_settings
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import results as results_store


def pairs_per_chunk(definitions: Sequence[str], bytes_per_pair: float | None) -> int:
    """As many pairs as keep a chunk within every chunk limit: check scorings, judge calls, and
    the text its worker reads (EVALSVC_CHUNK_MAX_BYTES, from the dataset's mean pair size)."""
    settings = get_settings()
    checks_count = sum(1 for d in definitions if checks.is_check(d))
    questions = len(definitions) - checks_count
    limits = []
    if checks_count:
        limits.append(settings.chunk_checks // checks_count)
    if questions:
        limits.append(settings.chunk_judge_calls // questions)
    if bytes_per_pair:
        limits.append(int(settings.chunk_max_bytes // bytes_per_pair))
    return max(1, min(limits, default=1))


def start(
    result: EvaluationResult,
    header: DatasetHeader,
    ords: Sequence[str],
    labels: Sequence[str],
) -> EvaluationResult:
    """Store the running result and queue its chunks; the result. If the chunks cannot all be
    queued, the result is failed (workers skip the chunks already queued) and the error raised.
    A result with this id already started (a retry of the same request) is returned as it is."""
    pieces = chunks.cut(
        JobKind.EVALUATION,
        result.tenant,
        result.results_id,
        ords,
        pairs_per_chunk(result.definitions, header.bytes_per_pair),
    )
    job = Job(dataset_version=header.version, labels=list(labels), chunk_count=len(pieces))
    result.status, result.pairs_done = Status.RUNNING, 0
    if not results_store.start(result, job):
        existing = results_store.get(result.tenant, result.results_id)
        if existing is None:
            raise chunks.failure("the evaluation changed while it was started; retry", 503)
        return existing
    chunks.queue(pieces, partial(fail, result.tenant, result.results_id), "evaluate again")
    metrics.add_metric(name="EvaluationsQueued", unit="Count", value=1)
    logger.info(
        "evaluation queued",
        extra={
            "results_id": result.results_id,
            "dataset_id": result.dataset_id,
            "pairs": len(ords),
            "metrics": len(result.definitions),
            "chunks": len(pieces),
        },
    )
    return result


def progress_message(result: EvaluationResult) -> str:
    return (
        f"evaluation {result.results_id!r} is still running ({result.pairs_done} of "
        f"{result.pair_count} pairs scored) and goes on in the background: follow it with "
        f"GET /evaluation/{result.results_id}"
    )


def wait(
    identity: Identity,
    result: EvaluationResult,
    seconds: float,
) -> EvaluationResult:
    """The result once complete. A failed job raises its failure; one still running after
    `seconds` raises StillRunning naming the id to poll."""
    current = chunks.poll(
        lambda: results_store.get(identity.tenant, result.results_id) or result,
        lambda r: r.status is not Status.RUNNING,
        seconds,
    )
    if current.status is Status.FAILED:
        raise chunks.failure(
            f"evaluation {result.results_id!r} failed: {current.failure}", current.failure_status
        )
    if current.status is Status.RUNNING:
        raise StillRunning(
            progress_message(current),
            retry_after_seconds=10,
            location=f"evaluation/{result.results_id}",
        )
    return current


# ---- workers -----------------------------------------------------------------------------------


def run_chunk(chunk: Chunk, attempt: int, deadline: Deadline) -> None:
    """Score one chunk (delivery number `attempt`) before `deadline` and count it; finish the
    result when it is the last. Raises RetryChunk when another attempt may succeed; fails the
    result itself when none can."""
    loaded = results_store.get_with_job(chunk.tenant, chunk.job_id)
    if loaded is None:
        logger.warning("chunk of an unknown result dropped", extra={"results_id": chunk.job_id})
        return
    result, job = loaded
    if result.status is not Status.RUNNING:
        logger.info(
            "chunk of an ended result skipped",
            extra={"results_id": chunk.job_id, "chunk": chunk.index, "status": result.status},
        )
        return
    if chunk.index in job.done:
        # Counted by an earlier delivery, which may have died before finishing the result.
        work = partial(_finish_if_all_counted, chunk.tenant, chunk.job_id, job)
    else:
        work = partial(_run, chunk, attempt, result, job, deadline)
    chunks.run(chunk, attempt, work, _RESULTS)


def _finish_if_all_counted(tenant: str, results_id: str, job: Job) -> None:
    if job.chunks_done >= job.chunk_count:
        finish(tenant, results_id)


class _ResultRecord:
    def fail(self, chunk: Chunk, reason: str, http_status: int) -> None:
        fail(chunk.tenant, chunk.job_id, reason, http_status)

    def note_error(self, chunk: Chunk, text: str, http_status: int) -> None:
        results_store.note_error(chunk.tenant, chunk.job_id, text, http_status)


_RESULTS = _ResultRecord()


def _run(
    chunk: Chunk, attempt: int, result: EvaluationResult, job: Job, deadline: Deadline
) -> None:
    pairs = _read(chunk, result, job)
    positions: Sequence[int] = range(chunk.start, chunk.start + len(pairs))
    stored: dict[str, ScoredPair] = {}
    if chunk.requeues or attempt > 1:
        # An earlier delivery may have stored part of the chunk before its deadline.
        stored = results_store.get_scored(chunk.tenant, chunk.job_id, [p.id for p in pairs])
        todo = [k for k, pair in enumerate(pairs) if pair.id not in stored]
        pairs, positions = [pairs[k] for k in todo], [positions[k] for k in todo]
    needs_judge = any(not checks.is_check(d) for d in result.definitions)
    judge = configured_judge(chunk.tenant, deadline) if needs_judge else None
    metrics_of_set = scorers_for(result.definitions, judge)
    scoring = score_pairs(metrics_of_set, pairs, result.system_prompt, positions, deadline)
    results_store.put_scored(chunk.tenant, chunk.job_id, scoring.scored)
    metrics.add_metric(name="PairsScored", unit="Count", value=len(scoring.scored))
    if not scoring.complete:
        raise OutOfTime(
            f"{chunks.describe(chunk)}: {len(pairs) - len(scoring.scored)} pairs were left when "
            "the worker's time ran out; the scored ones and the judge's verdicts are kept"
        )
    everything = [*stored.values(), *scoring.scored]
    counted = results_store.count_chunk(chunk.tenant, chunk.job_id, chunk.index, everything)
    if counted is None:
        # Counted meanwhile by another delivery of the same chunk, or the result ended.
        again = results_store.get_with_job(chunk.tenant, chunk.job_id)
        if again is not None and again[0].status is Status.RUNNING:
            _finish_if_all_counted(chunk.tenant, chunk.job_id, again[1])
        return
    job.chunks_done, job.chunk_count = counted
    _finish_if_all_counted(chunk.tenant, chunk.job_id, job)


def _read(chunk: Chunk, result: EvaluationResult, job: Job) -> list[Pair]:
    pairs = datasets_store.read_range(
        chunk.tenant,
        result.dataset_kind,
        result.dataset_id,
        job.dataset_version,
        chunk.first_ord,
        chunk.last_ord,
        job.labels,
    )
    if len(pairs) != chunk.count:
        raise chunks.Unrecoverable(
            f"{result.dataset_kind.value} dataset {result.dataset_id!r} was overwritten while "
            "it was being evaluated; evaluate it again"
        )
    return pairs


def finish(tenant: str, results_id: str) -> None:
    """Compute the statistics from every scored pair and mark the result complete (a no-op if
    another worker got there first)."""
    result = results_store.get(tenant, results_id)
    if result is None or result.status is not Status.RUNNING:
        return
    # The statistics need the scores only; the lowest pairs' reasons are read when shown.
    scored = results_store.list_scored(tenant, results_id, with_reasons=False)
    if len(scored) != result.pair_count:
        results_store.fail(
            tenant,
            results_id,
            f"{len(scored)} scored pairs were found for {result.pair_count} selected; "
            "evaluate again",
            chunks.INTERNAL,
        )
        return
    summarize_result(result, scored)
    if results_store.complete(result):
        metrics.add_metric(name="Evaluations", unit="Count", value=1)
        logger.info(
            "queued evaluation complete",
            extra={"results_id": results_id, "pairs": len(scored)},
        )


def fail(tenant: str, results_id: str, reason: str, http_status: int) -> None:
    """Fail a running result, saying why."""
    if results_store.fail(tenant, results_id, reason, http_status):
        metrics.add_metric(name="EvaluationsFailed", unit="Count", value=1)
        logger.warning("evaluation failed", extra={"results_id": results_id, "why": reason})


def give_up(chunk: Chunk) -> None:
    """A chunk that kept failing reached the dead-letter queue: its result fails, saying why."""
    loaded = results_store.get_with_job(chunk.tenant, chunk.job_id)
    if loaded is None:
        return
    _, job = loaded
    if chunk.index in job.done and job.chunks_done < job.chunk_count:
        return  # a copy of a chunk already counted: the job goes on without it
    fail(
        chunk.tenant,
        chunk.job_id,
        *chunks.give_up_reason(chunk, job.last_error, job.last_error_status),
    )


def fail_abandoned(reason: str) -> int:
    """Fail every running result (the local server, at start: its queue did not survive the
    stop). Returns how many."""
    count = 0
    for tenant, results_id in results_store.running():
        count += results_store.fail(tenant, results_id, reason, chunks.INTERNAL)
    return count
