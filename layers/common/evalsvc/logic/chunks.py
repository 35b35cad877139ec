"""The rules a worker applies when a chunk of queued work (logic.jobs) fails.

throttled LLM (ModelFailed, transient: the judge's or generation's)
                    a fresh copy goes back on the queue, delayed: throttling slows a job,
                    it does not spend the chunk's attempts (up to MAX_REQUEUES times)
past the tenant's monthly limit (OverLimit)
                    while work in flight holds the room: requeued, delayed, like throttling;
                    when what was spent leaves none: the job fails now, with the reason
bad input, provider refused, Unrecoverable (e.g. the dataset was overwritten)
                    the job fails now, with the reason: no attempt can do better
waiting (Waiting: the chunk waits on work outside it, e.g. a monitor run on its evaluation)
                    a fresh copy goes back on the queue, delayed, and the job is marked as
                    moving (the sweeper leaves it): not an error, and not counted against
                    MAX_REQUEUES; the kind bounds how long it waits
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

from evalsvc.core.backoff import delay as backoff_delay
from evalsvc.core.errors import (
    DomainError,
    Failure,
    InternalError,
    InvalidInput,
    ModelFailed,
    OutOfTime,
    OverLimit,
    ProviderUnavailable,
    SpendingUnbounded,
    Unrecoverable,
)
from evalsvc.core.observability import logger, metrics
from evalsvc.core.settings import get_settings
from evalsvc.models.jobs import Chunk
from evalsvc.storage import work_queue

S = TypeVar("S")

# A chunk whose LLM is throttled goes back on the queue, delayed, up to this many times (at up
# to 15 minutes each: hours of patience) before its job fails.
MAX_REQUEUES = 24
# A chunk past the monthly limit while other work holds its room waits at least this long.
OVER_LIMIT_PAUSE_SECONDS = 60.0


class RetryChunk(Exception):
    """The chunk failed in a way another attempt may fix; `delay` seconds before it."""

    def __init__(self, message: str, delay: int) -> None:
        super().__init__(message)
        self.delay = delay


class JobRecord(Protocol):
    """How the rules record an outcome on the chunk's job (a result, a generation)."""

    def fail(self, chunk: Chunk, failure: Failure) -> None: ...

    def note_error(self, chunk: Chunk, error: Failure) -> None: ...

    def requeued(self, chunk: Chunk) -> None: ...


class Waiting(Exception):
    """The chunk cannot go on until something outside it ends (a job it started): deliver it
    again in `delay` seconds. `what` says what it waits on, for the log."""

    def __init__(self, what: str, delay: int) -> None:
        super().__init__(what)
        self.what = what
        self.delay = delay


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


def describe(chunk: Chunk) -> str:
    return f"chunk {chunk.index} (pairs {chunk.start + 1}-{chunk.start + chunk.count})"


def give_up_reason(chunk: Chunk, last_error: Failure | None) -> Failure:
    """Why a job fails when `chunk` reaches the dead-letter queue."""
    error = last_error or Failure(
        f"{describe(chunk)}: the worker stopped without reporting an error (out of time or memory)"
    )
    reason = f"a chunk kept failing and was set aside; last error: {error.message}"
    return Failure(reason, error.error)


def run(chunk: Chunk, attempt: int, work: Callable[[], None], record: JobRecord) -> None:
    """Do `work` for `chunk` (delivery number `attempt`) under the shared failure rules. Raises
    RetryChunk when the chunk should be delivered again."""
    try:
        work()
    except Waiting as wait:
        work_queue.send([chunk], delay_seconds=max(0, min(900, wait.delay)))
        record.requeued(chunk)
        logger.info(
            "chunk waiting",
            extra={"job": chunk.job_id, "chunk": chunk.index, "on": wait.what, "delay": wait.delay},
        )
    except OutOfTime as exc:
        # Progress was kept (the verdicts given are cached): go again at once, not counting it
        # as an attempt.
        _requeue(chunk, exc, record, delay=0)
    except ModelFailed as exc:
        if exc.transient:
            _requeue_throttled(chunk, exc, record, exc.retry_after)
            return
        _note_and_retry(chunk, exc, attempt, record)
    except OverLimit as exc:
        if exc.transient:
            _requeue_throttled(chunk, exc, record, OVER_LIMIT_PAUSE_SECONDS)
            return
        record.fail(chunk, Failure.of(exc))
        logger.warning("job failed", extra={"job": chunk.job_id, "why": exc.message})
    except (InvalidInput, ProviderUnavailable, SpendingUnbounded, Unrecoverable) as exc:
        record.fail(chunk, Failure.of(exc))
        logger.warning("job failed", extra={"job": chunk.job_id, "why": exc.message})
    except DomainError as exc:
        _note_and_retry(chunk, exc, attempt, record)
    except Exception as exc:
        logger.exception("chunk failed", extra={"job": chunk.job_id})
        _note_and_retry(
            chunk, InternalError(f"internal error ({exc.__class__.__name__})"), attempt, record
        )


def _note_and_retry(chunk: Chunk, error: DomainError, attempt: int, record: JobRecord) -> None:
    text = f"{describe(chunk)}, attempt {attempt}: {error.message}"
    record.note_error(chunk, Failure(text, type(error).__name__))
    raise RetryChunk(text, backoff(attempt))


def _requeue_throttled(
    chunk: Chunk, error: DomainError, record: JobRecord, retry_after: float | None
) -> None:
    """Later, by the backoff, and not before the provider's Retry-After (SQS delays at most
    15 minutes)."""
    delay = max(backoff(chunk.requeues + 1), min(900, math.ceil(retry_after or 0)))
    _requeue(chunk, error, record, delay=delay)


def _requeue(chunk: Chunk, error: DomainError, record: JobRecord, *, delay: int) -> None:
    """A fresh copy of the chunk back on the queue after `delay` seconds (its attempts
    untouched); after MAX_REQUEUES the job fails with the last error's class."""
    message = error.message
    if chunk.requeues >= MAX_REQUEUES:
        text = f"{describe(chunk)} could not be done through {MAX_REQUEUES} delayed retries: "
        record.fail(chunk, Failure(text + message, type(error).__name__))
        return
    work_queue.send([dataclasses.replace(chunk, requeues=chunk.requeues + 1)], delay_seconds=delay)
    record.requeued(chunk)
    metrics.add_metric(name="ChunksRequeued", unit="Count", value=1)
    logger.info(
        "chunk requeued",
        extra={"job": chunk.job_id, "chunk": chunk.index, "delay": delay, "why": message},
    )
