"""What every queued job shares: cutting a selection of pairs into chunks, and the rules a
worker applies when a chunk fails.

    throttled LLM (ModelFailed, transient: the judge's or generation's)
                        a fresh copy goes back on the queue, delayed: throttling slows a job,
                        it does not spend the chunk's attempts (up to MAX_REQUEUES times)
    bad input, provider refused, Unrecoverable (e.g. the dataset was overwritten)
                        the job fails now, with the reason: no attempt can do better
    anything else       the error is noted on the job and the chunk retried after a backoff;
                        after the queue's maxReceiveCount it reaches the dead-letter queue,
                        whose worker fails the job with the noted error
"""

from __future__ import annotations

import dataclasses
import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from evalsvc.errors import (
    DomainError,
    InvalidInput,
    ModelFailed,
    OutOfTime,
    ProviderUnavailable,
)
from evalsvc.models.evaluations import Chunk, JobKind
from evalsvc.observability import logger, metrics
from evalsvc.settings import get_settings
from evalsvc.storage import work_queue

S = TypeVar("S")

# A chunk whose LLM is throttled goes back on the queue, delayed, up to this many times (at up
# to 15 minutes each: hours of patience) before its job fails.
MAX_REQUEUES = 24
# The HTTP status a waiting caller is answered with when a job fails for no better-known reason.
INTERNAL = 500


class RetryChunk(Exception):
    """The chunk failed in a way another attempt may fix; `delay` seconds before it."""

    def __init__(self, message: str, delay: int) -> None:
        super().__init__(message)
        self.delay = delay


class Unrecoverable(DomainError):
    """No later attempt can do this chunk: its job fails with this message."""

    status_code = 409


class JobRecord(Protocol):
    """How the rules record an outcome on the chunk's job (a result, a generation)."""

    def fail(self, chunk: Chunk, reason: str, http_status: int) -> None: ...

    def note_error(self, chunk: Chunk, text: str, http_status: int) -> None: ...


def backoff(attempt: int) -> int:
    """Seconds before attempt `attempt + 1`: doubling, jittered, at most 15 minutes."""
    base = get_settings().chunk_retry_base_seconds
    return int(min(900.0, base * 2 ** max(0, attempt - 1)) * random.uniform(0.5, 1.0))  # noqa: S311


def cut(kind: JobKind, tenant: str, job_id: str, ords: Sequence[str], size: int) -> list[Chunk]:
    """Consecutive chunks of `size` pairs (the last may be smaller) of the selection whose ords,
    in dataset order, are `ords`."""
    return [
        Chunk(
            kind=kind,
            tenant=tenant,
            job_id=job_id,
            index=k,
            start=start,
            count=len(ords[start : start + size]),
            first_ord=ords[start],
            last_ord=ords[min(start + size, len(ords)) - 1],
        )
        for k, start in enumerate(range(0, len(ords), size))
    ]


def poll(
    load: Callable[[], S],
    ended: Callable[[S], bool],
    seconds: float,
) -> S:
    """Load a job's state until it has ended or `seconds` have passed (pauses growing from a
    quarter second to two); the last state loaded."""
    deadline = time.monotonic() + seconds
    pause = 0.25
    while True:
        state = load()
        left = deadline - time.monotonic()
        if ended(state) or left <= 0:
            return state
        time.sleep(min(pause, left))
        pause = min(2.0, pause * 1.5)


def failure(message: str, http_status: int) -> DomainError:
    """The error a caller waiting on a failed job gets."""
    error = DomainError(message)
    error.status_code = http_status or INTERNAL
    return error


def queue(pieces: Sequence[Chunk], fail: Callable[[str, int], object], again: str) -> None:
    """Put every chunk of a just-started job on the queue. If they cannot all be queued, the
    job is failed (workers skip the chunks of a failed job) with a message ending in `again`
    (what to do), and the error raised."""
    try:
        work_queue.send(pieces)
    except BaseException:
        fail(f"the work could not be queued; nothing was done: {again}", 503)
        raise


def describe(chunk: Chunk) -> str:
    return f"chunk {chunk.index} (pairs {chunk.start + 1}-{chunk.start + chunk.count})"


def give_up_reason(chunk: Chunk, last_error: str, last_status: int) -> tuple[str, int]:
    """Why a job fails when `chunk` reaches the dead-letter queue, and the HTTP status for it."""
    error = last_error or (
        f"{describe(chunk)}: the worker stopped without reporting an error (out of time or memory)"
    )
    return f"a chunk kept failing and was set aside; last error: {error}", last_status or INTERNAL


def run(chunk: Chunk, attempt: int, work: Callable[[], None], record: JobRecord) -> None:
    """Do `work` for `chunk` (delivery number `attempt`) under the shared failure rules. Raises
    RetryChunk when the chunk should be delivered again."""
    try:
        work()
    except OutOfTime as exc:
        # Progress was kept (the verdicts given are cached): go again at once, not counting it
        # as an attempt.
        _requeue(chunk, exc.message, record, delay=0)
    except ModelFailed as exc:
        if exc.transient:
            _requeue_throttled(chunk, exc.message, record, exc.retry_after)
            return
        _note_and_retry(chunk, exc.message, exc.status_code, attempt, record)
    except (InvalidInput, ProviderUnavailable, Unrecoverable) as exc:
        record.fail(chunk, exc.message, exc.status_code)
        logger.warning("job failed", extra={"job": chunk.job_id, "why": exc.message})
    except DomainError as exc:
        _note_and_retry(chunk, exc.message, exc.status_code, attempt, record)
    except Exception as exc:
        logger.exception("chunk failed", extra={"job": chunk.job_id})
        message = f"internal error ({exc.__class__.__name__})"
        _note_and_retry(chunk, message, INTERNAL, attempt, record)


def _note_and_retry(
    chunk: Chunk, message: str, status: int, attempt: int, record: JobRecord
) -> None:
    text = f"{describe(chunk)}, attempt {attempt}: {message}"
    record.note_error(chunk, text, status)
    raise RetryChunk(text, backoff(attempt))


def _requeue_throttled(
    chunk: Chunk, message: str, record: JobRecord, retry_after: float | None
) -> None:
    """Later, by the backoff, and not before the provider's Retry-After (SQS delays at most
    15 minutes)."""
    delay = max(backoff(chunk.requeues + 1), min(900, math.ceil(retry_after or 0)))
    _requeue(chunk, message, record, delay=delay)


def _requeue(chunk: Chunk, message: str, record: JobRecord, *, delay: int) -> None:
    """A fresh copy of the chunk back on the queue after `delay` seconds (its attempts
    untouched); after MAX_REQUEUES the job fails."""
    if chunk.requeues >= MAX_REQUEUES:
        record.fail(
            chunk,
            f"{describe(chunk)} could not be done through {MAX_REQUEUES} delayed retries: "
            f"{message}",
            503,
        )
        return
    work_queue.send([dataclasses.replace(chunk, requeues=chunk.requeues + 1)], delay_seconds=delay)
    metrics.add_metric(name="ChunksRequeued", unit="Count", value=1)
    logger.info(
        "chunk requeued",
        extra={"job": chunk.job_id, "chunk": chunk.index, "delay": delay, "why": message},
    )
