"""The workers' Lambda handlers: an SQS or DynamoDB stream event in, partial batch failures
out (Powertools batch processing), so one bad chunk never makes SQS redeliver its neighbours,
and one failed purge is the only record of its batch retried.

    chunk_handler        the work queue: do a chunk of a job (logic.jobs.run_chunk)
    dead_chunk_handler   the dead-letter queue: a chunk that kept failing fails its job
    sweep_handler        a schedule: stalled jobs moved again or failed (logic.jobs.sweep)
    dispatch_handler     a schedule, every minute: monitors' due runs claimed and started,
                         alerts left pending delivered (logic.monitors.dispatch)
    purge_handler        the datasets table's stream: a version record removed by TTL has its
                         version purged (logic.retention)
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import DynamoDBRecord
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from evalsvc.core.deadlines import Deadline, lambda_remaining
from evalsvc.core.errors import Failure
from evalsvc.core.identifiers import now_ms
from evalsvc.core.observability import invocation_log_context, log_context, logger, metrics, tracer
from evalsvc.logic import chunks, jobs, kinds, monitors, retention
from evalsvc.storage import work_queue

LambdaHandler = Any

# A worker does chunks of every kind of queued work.
kinds.load_all()


def _receives(record: SQSRecord) -> int:
    try:
        return int(record.attributes.approximate_receive_count or 1)
    except (TypeError, ValueError):
        return 1


def _retry_later(record: SQSRecord, delay: int) -> None:
    try:
        work_queue.retry_later(record.receipt_handle, delay)
    except Exception:
        logger.exception("could not shorten the message's wait; the queue's timeout applies")


def _deadline(context: Any) -> Deadline:
    """When a worker stops taking on work: its remaining time less a margin for the calls in
    flight and the writes after them (a fifth of it, 10-60 s)."""
    left = lambda_remaining(context)
    if left is None:
        return Deadline.never()
    return Deadline.after(left - max(10.0, min(60.0, left / 5)))


def score_record(record: SQSRecord, lambda_context: Any = None) -> None:
    """One message of the work queue. A chunk that may succeed later is made visible again
    after its backoff and reported failed; SQS moves it to the dead-letter queue after the
    queue's maxReceiveCount."""
    try:
        chunk = work_queue.decode(record.body)
        if not jobs.is_known(chunk.kind):
            raise work_queue.BadMessage(f"no kind of queued work is called {chunk.kind!r}")
    except work_queue.BadMessage:
        # No attempt can read it: straight back, so it reaches the dead-letter queue soon.
        logger.error("unreadable message on the work queue", extra={"id": record.message_id})
        _retry_later(record, 0)
        raise
    with log_context(tenant=chunk.tenant, results_id=chunk.job_id, chunk=chunk.index):
        try:
            jobs.run_chunk(chunk, _receives(record), _deadline(lambda_context))
        except chunks.RetryChunk as retry:
            logger.warning("chunk will be retried", extra={"delay": retry.delay, "why": str(retry)})
            _retry_later(record, retry.delay)
            raise


def fail_record(record: SQSRecord) -> None:
    """One message of the dead-letter queue."""
    try:
        chunk = work_queue.decode(record.body)
    except work_queue.BadMessage as exc:
        named = work_queue.job_of(record.body)
        logger.error(
            "unreadable message dead-lettered", extra={"id": record.message_id, "job": named}
        )
        if named is not None:
            kind, tenant, job_id = named
            reason = f"a chunk of its work could not be read by the worker ({exc}); start it again"
            jobs.fail(tenant, kind, job_id, Failure(reason))
        return
    jobs.give_up(chunk)


# The time a purge is started with at least: a version of 100,000 pairs is about 4,000
# BatchWriteItem calls. A record reached with less left is reported failed, untouched, and
# comes again in the next invocation, rather than the whole batch timing out.
PURGE_MIN_SECONDS = 120.0


class OutOfTime(Exception):
    """Too little of the invocation is left to start another purge."""


def purge_record(record: DynamoDBRecord, lambda_context: Any = None) -> None:
    """One record of the datasets table's stream (only TTL's removals of version records pass
    its filter; logic.retention checks again)."""
    left = lambda_remaining(lambda_context)
    if left is not None and left < PURGE_MIN_SECONDS:
        raise OutOfTime(f"{left:.0f} s left, fewer than a purge is started with")
    raw = record.raw_event
    change = raw.get("dynamodb") or {}
    removal = retention.Removal(
        event=raw.get("eventName"), by=raw.get("userIdentity"), old_image=change.get("OldImage")
    )
    retention.purge_expired(removal)


def _batch_handler(record_handler: Any, event_type: EventType = EventType.SQS) -> LambdaHandler:
    @invocation_log_context()
    @tracer.capture_lambda_handler(capture_response=False)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        processor = BatchProcessor(event_type=event_type, raise_on_entire_batch_failure=False)
        return dict(
            process_partial_response(
                event=event, record_handler=record_handler, processor=processor, context=context
            )
        )

    return handler


@invocation_log_context()
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def sweep_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The scheduled sweep of stalled jobs; what it did."""
    report = jobs.sweep()
    return {
        "resumed_jobs": report.resumed_jobs,
        "requeued_chunks": report.requeued_chunks,
        "finished_jobs": report.finished_jobs,
        "failed_jobs": report.failed_jobs,
    }


# What the dispatcher keeps of its invocation for the work it took last (an alert's delivery
# takes at most 3 attempts of 5 s, with backoff).
DISPATCH_RESERVE_SECONDS = 30.0


@invocation_log_context()
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def dispatch_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The monitors' dispatch, every minute (E8): what it did."""
    report = monitors.dispatch(
        now_ms(),
        has_time=lambda: (lambda_remaining(context) or 60.0) > DISPATCH_RESERVE_SECONDS,
    )
    return {"runs": len(report.claimed), "alerts": report.alerts, "left": report.left}


chunk_handler = _batch_handler(score_record)
dead_chunk_handler = _batch_handler(fail_record)
purge_handler = _batch_handler(purge_record, EventType.DynamoDBStreams)
