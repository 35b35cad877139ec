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

import random
import time
from collections.abc import Callable, Sequence

from evalsvc.errors import DomainError, InvalidInput, JudgeFailed, ProviderUnavailable, StillRunning
from evalsvc.logic.scored_pairs import score_pairs, summarize_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetHeader, Pair
from evalsvc.models.evaluations import Chunk, EvaluationResult, Job, ScoredPair, Status
from evalsvc.observability import logger, metrics
from evalsvc.scoring import checks
from evalsvc.scoring.metric import Judge, scorers_for
from evalsvc.settings import get_settings
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import results as results_store
from evalsvc.storage import work_queue

# A chunk whose judge is throttled goes back on the queue, delayed, up to this many times
# (at up to 15 minutes each: hours of patience) before its result fails.
MAX_REQUEUES = 24
# The HTTP status a waiting caller is answered with when a job fails for no better-known
# reason.
INTERNAL = 500


class RetryChunk(Exception):
    """The chunk failed in a way another attempt may fix; `delay` seconds before it."""

    def __init__(self, message: str, delay: int) -> None:
        super().__init__(message)
        self.delay = delay


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


def cut(tenant: str, results_id: str, ords: Sequence[str], size: int) -> list[Chunk]:
    """Consecutive chunks of `size` pairs (the last may be smaller) of the selection whose
    ords, in dataset order, are `ords`."""
    return [
        Chunk(
            tenant=tenant,
            results_id=results_id,
            index=k,
            start=start,
            count=len(ords[start : start + size]),
            first_ord=ords[start],
            last_ord=ords[min(start + size, len(ords)) - 1],
        )
        for k, start in enumerate(range(0, len(ords), size))
    ]


def start(
    result: EvaluationResult,
    header: DatasetHeader,
    refs: Sequence[Pair],
    ords: Sequence[str],
    labels: Sequence[str],
) -> None:
    """Store the running result and queue its chunks. If the chunks cannot all be queued, the
    result is failed (workers skip the chunks already queued) and the error raised."""
    chunks = cut(result.tenant, result.results_id, ords, pairs_per_chunk(result.definitions))
    job = Job(dataset_version=header.version, labels=list(labels), chunk_count=len(chunks))
    result.status, result.pairs_done = Status.RUNNING, 0
    results_store.start(result, job)
    try:
        work_queue.send(chunks)
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
            "chunks": len(chunks),
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
    """The result once complete. A failed job raises its failure;
    one still running after `seconds` raises StillRunning naming the id to poll."""
    deadline = time.monotonic() + seconds
    pause = 0.25
    current = result
    while True:
        loaded = results_store.get(identity.tenant, result.results_id)
        if loaded is not None:
            current = loaded
        if current.status is Status.COMPLETE:
            return current
        if current.status is Status.FAILED:
            raise _failure(current)
        left = deadline - time.monotonic()
        if left <= 0:
            raise StillRunning(progress_message(current), retry_after_seconds=10)
        sleep(min(pause, left))
        pause = min(2.0, pause * 1.5)


def _failure(result: EvaluationResult) -> DomainError:
    error = DomainError(f"evaluation {result.results_id!r} failed: {result.failure}")
    error.status_code = result.failure_status or INTERNAL
    return error


# ---- workers -----------------------------------------------------------------------------------


def _backoff(attempt: int) -> int:
    base = get_settings().chunk_retry_base_seconds
    return int(min(900.0, base * 2 ** max(0, attempt - 1)) * random.uniform(0.5, 1.0))  # noqa: S311


def run_chunk(chunk: Chunk, attempt: int, judge_for: Callable[[str], Judge | None]) -> None:
    """Score one chunk (delivery number `attempt`) and count it; finish the result when it is
    the last. Raises RetryChunk when another attempt may succeed; fails the result itself when
    none can."""
    loaded = results_store.get_with_job(chunk.tenant, chunk.results_id)
    if loaded is None:
        logger.warning("chunk of an unknown result dropped", extra={"results_id": chunk.results_id})
        return
    result, job = loaded
    if result.status is not Status.RUNNING:
        logger.info(
            "chunk of an ended result skipped",
            extra={"results_id": chunk.results_id, "chunk": chunk.index, "status": result.status},
        )
        return
    try:
        _run(chunk, result, job, judge_for)
    except JudgeFailed as exc:
        if exc.transient:
            _requeue_throttled(chunk, exc)
            return
        _note_and_retry(chunk, exc.message, exc.status_code, attempt)
    except (InvalidInput, ProviderUnavailable, _DatasetChanged) as exc:
        # No later attempt can do better: the result fails now, with the reason.
        results_store.fail(chunk.tenant, chunk.results_id, exc.message, exc.status_code)
        logger.warning(
            "evaluation failed", extra={"results_id": chunk.results_id, "why": exc.message}
        )
    except DomainError as exc:
        _note_and_retry(chunk, exc.message, exc.status_code, attempt)
    except Exception as exc:
        logger.exception("chunk failed", extra={"results_id": chunk.results_id})
        _note_and_retry(chunk, f"internal error ({exc.__class__.__name__})", INTERNAL, attempt)


def _run(
    chunk: Chunk, result: EvaluationResult, job: Job, judge_for: Callable[[str], Judge | None]
) -> None:
    scored = _score(chunk, result, job, judge_for)
    results_store.put_scored(chunk.tenant, chunk.results_id, scored)
    counted = results_store.count_chunk(chunk.tenant, chunk.results_id, chunk.index, chunk.count)
    metrics.add_metric(name="PairsScored", unit="Count", value=len(scored))
    if counted is None:
        # Counted by an earlier delivery, which may have died before finishing the result.
        again = results_store.get_with_job(chunk.tenant, chunk.results_id)
        if again is None or again[0].status is not Status.RUNNING:
            return
        counted = again[1].chunks_done, again[1].chunk_count
    done, total = counted
    if done >= total:
        finish(chunk.tenant, chunk.results_id)


class _DatasetChanged(DomainError):
    status_code = 409


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
        raise _DatasetChanged(
            f"{result.dataset_kind.value} dataset {result.dataset_id!r} was overwritten while "
            "it was being evaluated; evaluate it again"
        )
    return score_pairs(scorers, pairs, result.system_prompt, chunk.start)


def _note_and_retry(chunk: Chunk, message: str, status: int, attempt: int) -> None:
    text = (
        f"chunk {chunk.index} (pairs {chunk.start + 1}-{chunk.start + chunk.count}), attempt "
        f"{attempt}: {message}"
    )
    results_store.note_error(chunk.tenant, chunk.results_id, text, status)
    raise RetryChunk(text, _backoff(attempt))


def _requeue_throttled(chunk: Chunk, exc: JudgeFailed) -> None:
    """Throttling slows a job down; it does not use up the chunk's attempts. A fresh copy goes
    back on the queue, delayed; after MAX_REQUEUES the result fails."""
    if chunk.requeues >= MAX_REQUEUES:
        results_store.fail(
            chunk.tenant,
            chunk.results_id,
            f"the judge stayed unavailable for chunk {chunk.index} through {MAX_REQUEUES} "
            f"delayed retries: {exc.message}",
            503,
        )
        return
    copy = Chunk(
        tenant=chunk.tenant,
        results_id=chunk.results_id,
        index=chunk.index,
        start=chunk.start,
        count=chunk.count,
        first_ord=chunk.first_ord,
        last_ord=chunk.last_ord,
        requeues=chunk.requeues + 1,
    )
    delay = _backoff(chunk.requeues + 1)
    work_queue.send([copy], delay_seconds=delay)
    metrics.add_metric(name="ChunksRequeued", unit="Count", value=1)
    logger.info(
        "judge throttled; chunk requeued",
        extra={"results_id": chunk.results_id, "chunk": chunk.index, "delay": delay},
    )


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
            INTERNAL,
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
    loaded = results_store.get_with_job(chunk.tenant, chunk.results_id)
    if loaded is None:
        return
    _, job = loaded
    reason = job.last_error or (
        f"chunk {chunk.index} (pairs {chunk.start + 1}-{chunk.start + chunk.count}): the worker "
        "stopped without reporting an error (out of time or memory)"
    )
    failed = results_store.fail(
        chunk.tenant,
        chunk.results_id,
        f"a chunk kept failing and was set aside; last error: {reason}",
        job.last_error_status or INTERNAL,
    )
    if failed:
        metrics.add_metric(name="EvaluationsFailed", unit="Count", value=1)
        logger.warning(
            "evaluation failed: chunk dead-lettered",
            extra={"results_id": chunk.results_id, "chunk": chunk.index, "reason": reason},
        )


def fail_abandoned(reason: str) -> int:
    """Fail every running result (the local server, at start: its queue did not survive the
    stop). Returns how many."""
    count = 0
    for tenant, results_id in results_store.running():
        count += results_store.fail(tenant, results_id, reason, INTERNAL)
    return count
