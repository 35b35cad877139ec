"""The queue workers, run in this process the way Lambda runs them: receive messages from the
work queue (and its dead-letter queue), hand them to the worker handlers as SQS events, delete
the ones the handler did not report as failed. A reported failure stays on the queue and comes
back when its visibility timeout ends; after the queue's maxReceiveCount, SQS moves it to the
dead-letter queue.

Used by the local server (threads that poll) and by tests (`drain`, which delivers until both
queues are empty).

The work queue's chunks are served fairly across tenants, as SQS fair queues serve them on AWS
(every message carries its tenant as its MessageGroupId): `FairShare` receives every visible
message into a buffer shared by the work queue's consumers, and hands out next the oldest
message of the tenant with the fewest messages being worked on, and among those the one served
least recently. So a tenant's small job is not queued behind another's backlog, however deep:
every waiting message is in the buffer, not only the first ten SQS returns. A message is
received once (its receive count is its delivery's, as Lambda's would be), stays invisible on
the queue while it waits in the buffer (its invisibility renewed before the queue's visibility
timeout ends), and is deleted only once delivered and done: a process that stops loses nothing
the queue would not have lost (the local server's queue is not kept in any case; its restart
sweep queues every running job's missing chunks again).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalsvc.core.observability import logger

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


@dataclass
class WorkerContext:
    """What a Lambda handler reads from its context object."""

    function_name: str = "evalsvc-local-worker"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:000000000000:function:evalsvc-local"
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = "/aws/lambda/evalsvc-local"
    log_stream_name: str = "local"
    timeout_seconds: float = 300.0
    started: float = field(default_factory=time.monotonic)

    def get_remaining_time_in_millis(self) -> int:
        left = self.timeout_seconds - (time.monotonic() - self.started)
        return max(0, int(left * 1000))


def sqs_event(messages: list[dict[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    """The event Lambda's SQS poller gives a function for `messages` (ReceiveMessage entries)."""
    return {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": message.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": message.get("MD5OfBody")
                or hashlib.md5(message["Body"].encode()).hexdigest(),  # noqa: S324 - a checksum
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for message in messages
        ]
    }


@dataclass(slots=True)
class _Waiting:
    message: dict[str, Any]
    group: str
    order: int
    hidden_at: float


class FairShare:
    """One queue's waiting messages, handed out fairly across message groups (tenants): the
    oldest message of the group with the fewest messages in flight, then of the group served
    least recently. Shared by the consumers of the queue; safe across threads.

    With `group_share`, a group never has more than that many in flight: a worker left over
    waits for another tenant's chunk instead of taking a further one of a busy tenant's (a
    chunk is never interrupted, so a small job arriving behind a backlog that holds every
    worker would wait for a whole chunk of it)."""

    # What SQS returns at most per ReceiveMessage.
    RECEIVE_MAX = 10

    def __init__(
        self,
        client: Any,
        queue_url: str,
        clock: Callable[[], float] = time.monotonic,
        *,
        group_share: int | None = None,
    ) -> None:
        if group_share is not None and group_share < 1:
            raise ValueError("a group's share of the workers is at least 1")
        self.client = client
        self.queue_url = queue_url
        self.clock = clock
        self.group_share = group_share
        attributes = client.get_queue_attributes(
            QueueUrl=queue_url, AttributeNames=["VisibilityTimeout"]
        )["Attributes"]
        self.visibility_seconds = int(attributes.get("VisibilityTimeout", 30))
        self._lock = threading.Lock()
        self._waiting: dict[str, _Waiting] = {}  # by message id
        self._in_flight: Counter[str] = Counter()
        self._served: dict[str, int] = {}
        self._ticks = itertools.count(1)
        self._order = itertools.count()

    def take(self) -> dict[str, Any] | None:
        """The next message to deliver (None: the queue has none visible); it counts as in
        flight for its group until `done`."""
        with self._lock:
            self._receive_all()
            self._keep_hidden()
            share = self.group_share
            ready = [
                w
                for w in self._waiting.values()
                if share is None or self._in_flight[w.group] < share
            ]
            if not ready:
                return None
            chosen = min(
                ready,
                key=lambda w: (self._in_flight[w.group], self._served.get(w.group, 0), w.order),
            )
            del self._waiting[chosen.message["MessageId"]]
            self._in_flight[chosen.group] += 1
            self._served[chosen.group] = next(self._ticks)
            return chosen.message

    def done(self, message: dict[str, Any]) -> None:
        """The delivery of `message` (from `take`) is over, whatever its outcome."""
        with self._lock:
            group = group_of(message)
            self._in_flight[group] -= 1
            if self._in_flight[group] <= 0:
                del self._in_flight[group]

    def release(self) -> int:
        """Make every message waiting here visible on the queue again (the consumers stop);
        how many."""
        with self._lock:
            waiting = list(self._waiting.values())
            self._waiting.clear()
        self._change_visibility(waiting, 0)
        return len(waiting)

    def waiting(self) -> int:
        with self._lock:
            return len(self._waiting)

    def _receive_all(self) -> None:
        while True:
            messages = self.client.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=self.RECEIVE_MAX,
                AttributeNames=["All"],
                WaitTimeSeconds=0,
            ).get("Messages", [])
            now = self.clock()
            for message in messages:
                known = self._waiting.get(message["MessageId"])
                if known is not None:
                    # Visible again after all (its invisibility lapsed): the newest receipt.
                    known.message, known.hidden_at = message, now
                    continue
                self._waiting[message["MessageId"]] = _Waiting(
                    message, group_of(message), next(self._order), now
                )
            if len(messages) < self.RECEIVE_MAX:
                return

    def _keep_hidden(self) -> None:
        """Renew the invisibility of the messages that have waited here half the queue's
        visibility timeout (none is received twice while it waits)."""
        now = self.clock()
        old = [w for w in self._waiting.values() if now - w.hidden_at > self.visibility_seconds / 2]
        self._change_visibility(old, self.visibility_seconds)
        for waiting in old:
            waiting.hidden_at = now

    def _change_visibility(self, waiting: list[_Waiting], seconds: int) -> None:
        for start in range(0, len(waiting), self.RECEIVE_MAX):
            batch = waiting[start : start + self.RECEIVE_MAX]
            self.client.change_message_visibility_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {
                        "Id": str(k),
                        "ReceiptHandle": w.message["ReceiptHandle"],
                        "VisibilityTimeout": seconds,
                    }
                    for k, w in enumerate(batch)
                ],
            )


def group_of(message: dict[str, Any]) -> str:
    """A received message's group (its tenant); "" for a message sent without one."""
    return str(message.get("Attributes", {}).get("MessageGroupId", ""))


class QueueConsumer:
    """Delivers one queue's messages to one handler, `batch_size` at a time; with `fair`, one
    at a time, in the order the queue's FairShare gives them."""

    def __init__(
        self,
        client: Any,
        queue_url: str,
        handler: Handler,
        *,
        batch_size: int,
        timeout_seconds: float = 300.0,
        fair: FairShare | None = None,
    ) -> None:
        self.client = client
        self.queue_url = queue_url
        self.handler = handler
        self.batch_size = batch_size
        self.fair = fair
        # The function's timeout, as its context reports it (the worker's is 300 s).
        self.timeout_seconds = timeout_seconds
        attributes = client.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
        self.queue_arn = attributes["Attributes"]["QueueArn"]
        self.region = client.meta.region_name

    def deliver_once(self) -> int:
        """Receive up to one batch and hand it to the handler; the number of messages received."""
        if self.fair is None:
            return self._deliver(self._receive())
        message = self.fair.take()
        if message is None:
            return 0
        try:
            return self._deliver([message])
        finally:
            self.fair.done(message)

    def _receive(self) -> list[dict[str, Any]]:
        messages: list[dict[str, Any]] = self.client.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self.batch_size,
            AttributeNames=["All"],
            WaitTimeSeconds=0,
        ).get("Messages", [])
        return messages

    def _deliver(self, messages: list[dict[str, Any]]) -> int:
        if not messages:
            return 0
        try:
            context = WorkerContext(timeout_seconds=self.timeout_seconds)
            response = self.handler(sqs_event(messages, self.queue_arn, self.region), context)
        except Exception:
            # Lambda counts the whole batch failed when the function errors.
            logger.exception("worker invocation failed; its messages will be delivered again")
            return len(messages)
        failed = {f["itemIdentifier"] for f in (response or {}).get("batchItemFailures", [])}
        done = [m for m in messages if m["MessageId"] not in failed]
        if done:
            self.client.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(k), "ReceiptHandle": m["ReceiptHandle"]} for k, m in enumerate(done)
                ],
            )
        return len(messages)


def local_worker_counts(env: Mapping[str, str]) -> dict[str, int]:
    """The local server's chunk workers: EVALSVC_LOCAL_WORKERS (2) for one tenant's chunks at
    once, and one more, kept for the chunks of the other tenants."""
    share = int(env.get("EVALSVC_LOCAL_WORKERS") or "2")
    if share < 1:
        raise ValueError("EVALSVC_LOCAL_WORKERS must be at least 1")
    return {"workers": share + 1, "tenant_share": share}


class LocalWorkers:
    """The chunk workers and the dead-letter worker, polling in background threads.

    `workers` chunk workers share one fair view of the work queue; with `tenant_share`, one
    tenant's chunks take at most that many of them at once (the rest stay free for other
    tenants' chunks)."""

    def __init__(
        self,
        client: Any,
        queue_url: str,
        dead_letter_url: str,
        *,
        workers: int = 2,
        tenant_share: int | None = None,
        idle_pause: float = 0.2,
    ) -> None:
        from evalsvc.handlers.background import chunk_handler, dead_chunk_handler

        self.fair = FairShare(client, queue_url, group_share=tenant_share)
        self.consumers = [
            QueueConsumer(client, queue_url, chunk_handler, batch_size=1, fair=self.fair)
            for _ in range(workers)
        ]
        self.consumers.append(
            QueueConsumer(client, dead_letter_url, dead_chunk_handler, batch_size=10)
        )
        self.idle_pause = idle_pause
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    def _poll(self, consumer: QueueConsumer) -> None:
        while not self._stopping.is_set():
            try:
                received = consumer.deliver_once()
            except Exception:
                logger.exception("local worker could not poll its queue")
                received = 0
            if not received:
                self._stopping.wait(self.idle_pause)

    def start(self) -> None:
        for k, consumer in enumerate(self.consumers):
            thread = threading.Thread(
                target=self._poll, args=(consumer,), name=f"worker-{k}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop polling; wait up to `timeout` seconds in all for the chunks being worked on."""
        self._stopping.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self._threads.clear()
        try:
            self.fair.release()
        except Exception:
            logger.exception("local workers could not put their waiting messages back")


def drain(consumers: list[QueueConsumer], *, max_rounds: int = 100_000) -> int:
    """Deliver until no consumer receives anything (tests: with retry delays of 0, a failed
    message is visible again at once). Returns the number of deliveries."""
    deliveries = 0
    for _ in range(max_rounds):
        received = sum(consumer.deliver_once() for consumer in consumers)
        if not received:
            return deliveries
        deliveries += received
    raise RuntimeError("the queues never emptied")
