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

import time
from collections.abc import Callable, Sequence

from evalsvc.errors import StillRunning
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
from evalsvc.scoring.metric import Judge, scorers_for
from evalsvc.settings import get_settings
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import results as results_store
from evalsvc.storage import work_queue


def pairs_per_chunk(definitions: Sequence[str]) -> int:
    """As many pairs as keep a chunk within both chunk limits (check scorings, judge calls)."""
    settings = get_settings()
    checks_count = sum(1 for d in definitions if checks.is_check(d))
    questions = len(definitions) - checks_count
    size = settings.chunk_checks // checks_count if checks_count else None
    if questions:
        by_calls = settings.chunk_judge_calls // questions
        size = by_calls if size is None else min(size, by_calls)
    return max(1, size or 1)


def start(
    result: EvaluationResult,
    header: DatasetHeader,
    refs: Sequence[Pair],
    ords: Sequence[str],
    labels: Sequence[str],
) -> None:
    """Store the running result and queue its chunks. If the chunks cannot all be queued, the
    result is failed (workers skip the chunks already queued) and the error raised."""
    pieces = chunks.cut(
        JobKind.EVALUATION,
        result.tenant,
        result.results_id,
        ords,
        pairs_per_chunk(result.definitions),
    )
    job = Job(dataset_version=header.version, labels=list(labels), chunk_count=len(pieces))
    result.status, result.pairs_done = Status.RUNNING, 0
    results_store.start(result, job)
    try:
        work_queue.send(pieces)
    except BaseException:
        results_store.fail(
            result.tenant,
            result.results_id,
            "the work could not be queued; nothing was scored: evaluate again",
            503,
        )
        raise
    metrics.add_metric(name="EvaluationsQueued", unit="Count", value=1)
    logger.info(
        "evaluation queued",
        extra={
            "results_id": result.results_id,
            "dataset_id": result.dataset_id,
            "pairs": len(refs),
            "metrics": len(result.definitions),
            "chunks": len(pieces),
        },
    )


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
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> EvaluationResult:
    """The result once complete. A failed job raises its failure; one still running after
    `seconds` raises StillRunning naming the id to poll."""
    current = chunks.poll(
        lambda: results_store.get(identity.tenant, result.results_id) or result,
        lambda r: r.status is not Status.RUNNING,
        seconds,
        sleep=sleep,
    )
    if current.status is Status.FAILED:
        raise chunks.failure(
            f"evaluation {result.results_id!r} failed: {current.failure}", current.failure_status
        )
    if current.status is Status.RUNNING:
        raise StillRunning(progress_message(current), retry_after_seconds=10)
    return current


# ---- workers -----------------------------------------------------------------------------------


def run_chunk(chunk: Chunk, attempt: int, judge_for: Callable[[str], Judge | None]) -> None:
    """Score one chunk (delivery number `attempt`) and count it; finish the result when it is
    the last. Raises RetryChunk when another attempt may succeed; fails the result itself when
    none can."""
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
    chunks.run(chunk, attempt, lambda: _run(chunk, result, job, judge_for), _RESULTS)


class _ResultRecord:
    def fail(self, chunk: Chunk, reason: str, http_status: int) -> None:
        results_store.fail(chunk.tenant, chunk.job_id, reason, http_status)

    def note_error(self, chunk: Chunk, text: str, http_status: int) -> None:
        results_store.note_error(chunk.tenant, chunk.job_id, text, http_status)


_RESULTS = _ResultRecord()


def _run(
    chunk: Chunk, result: EvaluationResult, job: Job, judge_for: Callable[[str], Judge | None]
) -> None:
    scored = _score(chunk, result, job, judge_for)
    results_store.put_scored(chunk.tenant, chunk.job_id, scored)
    counted = results_store.count_chunk(chunk.tenant, chunk.job_id, chunk.index, chunk.count)
    metrics.add_metric(name="PairsScored", unit="Count", value=len(scored))
    if counted is None:
        # Counted by an earlier delivery, which may have died before finishing the result.
        again = results_store.get_with_job(chunk.tenant, chunk.job_id)
        if again is None or again[0].status is not Status.RUNNING:
            return
        counted = again[1].chunks_done, again[1].chunk_count
    done, total = counted
    if done >= total:
        finish(chunk.tenant, chunk.job_id)


def _score(
    chunk: Chunk, result: EvaluationResult, job: Job, judge_for: Callable[[str], Judge | None]
) -> list[ScoredPair]:
    needs_judge = any(not checks.is_check(d) for d in result.definitions)
    scorers = scorers_for(result.definitions, judge_for(chunk.tenant) if needs_judge else None)
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
    return score_pairs(scorers, pairs, result.system_prompt, chunk.start)


def finish(tenant: str, results_id: str) -> None:
    """Compute the statistics from every scored pair and mark the result complete (a no-op if
    another worker got there first)."""
    result = results_store.get(tenant, results_id)
    if result is None or result.status is not Status.RUNNING:
        return
    scored = results_store.list_scored(tenant, results_id)
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


def give_up(chunk: Chunk) -> None:
    """A chunk that kept failing reached the dead-letter queue: its result fails, saying why."""
    loaded = results_store.get_with_job(chunk.tenant, chunk.job_id)
    if loaded is None:
        return
    _, job = loaded
    reason = job.last_error or (
        f"chunk {chunk.index} (pairs {chunk.start + 1}-{chunk.start + chunk.count}): the worker "
        "stopped without reporting an error (out of time or memory)"
    )
    failed = results_store.fail(
        chunk.tenant,
        chunk.job_id,
        f"a chunk kept failing and was set aside; last error: {reason}",
        job.last_error_status or chunks.INTERNAL,
    )
    if failed:
        metrics.add_metric(name="EvaluationsFailed", unit="Count", value=1)
        logger.warning(
            "evaluation failed: chunk dead-lettered",
            extra={"results_id": chunk.job_id, "chunk": chunk.index, "reason": reason},
        )


def fail_abandoned(reason: str) -> int:
    """Fail every running result (the local server, at start: its queue did not survive the
    stop). Returns how many."""
    count = 0
    for tenant, results_id in results_store.running():
        count += results_store.fail(tenant, results_id, reason, chunks.INTERNAL)
    return count
