"""The rules a worker applies when a chunk of queued work (logic.jobs) fails.

throttled LLM (ModelFailed, transient: the judge's or generation's)
                    a fresh copy goes back on the queue, delayed: throttling slows a job,
                    it does not spend the chunk's attempts (up to MAX_REQUEUES times)
past the tenant's monthly limit (OverLimit)
                    while work in flight holds the room: requeued, delayed, like throttling;
                    when what was spent leaves none: the job fails now, with the reason
bad input, provider refused, Unrecoverable (e.g. the dataset was overwritten)
                    the job fails now, with the reason: no attempt can do better
anything else       the error is noted on the job and the chunk retried after a backoff;
                    after the queue's maxReceiveCount it reaches the dead-letter queue,
                    whose worker fails the job with the noted error
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from evalsvc.backoff import delay as backoff_delay
from evalsvc.errors import (
    DomainError,
    InvalidInput,
    ModelFailed,
    OutOfTime,
    OverLimit,
    ProviderUnavailable,
    SpendingUnbounded,
)
from evalsvc.models.jobs import Chunk
from evalsvc.observability import logger, metrics
from evalsvc.settings import get_settings
from evalsvc.storage import work_queue

S = TypeVar("S")

# A chunk whose LLM is throttled goes back on the queue, delayed, up to this many times (at up
# to 15 minutes each: hours of patience) before its job fails.
MAX_REQUEUES = 24
# A chunk past the monthly limit while other work holds its room waits at least this long.
OVER_LIMIT_PAUSE_SECONDS = 60.0
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

    def requeued(self, chunk: Chunk) -> None: ...


def backoff(attempt: int) -> int:
    """Seconds before attempt `attempt + 1`: doubling, jittered, at most 15 minutes."""
    return int(backoff_delay(attempt, get_settings().chunk_retry_base_seconds, 900.0))


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
    except OverLimit as exc:
        if exc.transient:
            _requeue_throttled(chunk, exc.message, record, OVER_LIMIT_PAUSE_SECONDS)
            return
        record.fail(chunk, exc.message, exc.status_code)
        logger.warning("job failed", extra={"job": chunk.job_id, "why": exc.message})
    except (InvalidInput, ProviderUnavailable, SpendingUnbounded, Unrecoverable) as exc:
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
    record.requeued(chunk)
    metrics.add_metric(name="ChunksRequeued", unit="Count", value=1)
    logger.info(
        "chunk requeued",
        extra={"job": chunk.job_id, "chunk": chunk.index, "delay": delay, "why": message},
    )
