"""The queue workers, run in this process the way Lambda runs them: receive messages from the
work queue (and its dead-letter queue), hand them to the worker handlers as SQS events, delete
the ones the handler did not report as failed. A reported failure stays on the queue and comes
back when its visibility timeout ends; after the queue's maxReceiveCount, SQS moves it to the
dead-letter queue.

Used by the local server (threads that poll) and by tests (`drain`, which delivers until both
queues are empty).
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evalsvc.observability import logger

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


class QueueConsumer:
    """Delivers one queue's messages to one handler, `batch_size` at a time."""

    def __init__(
        self,
        client: Any,
        queue_url: str,
        handler: Handler,
        *,
        batch_size: int,
        timeout_seconds: float = 300.0,
    ) -> None:
        self.client = client
        self.queue_url = queue_url
        self.handler = handler
        self.batch_size = batch_size
        # The function's timeout, as its context reports it (the worker's is 300 s).
        self.timeout_seconds = timeout_seconds
        attributes = client.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])
        self.queue_arn = attributes["Attributes"]["QueueArn"]
        self.region = client.meta.region_name

    def deliver_once(self) -> int:
        """Receive up to one batch and hand it to the handler; the number of messages received."""
        messages = self.client.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self.batch_size,
            AttributeNames=["All"],
            WaitTimeSeconds=0,
        ).get("Messages", [])
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


class LocalWorkers:
    """The chunk workers and the dead-letter worker, polling in background threads."""

    def __init__(
        self,
        client: Any,
        queue_url: str,
        dead_letter_url: str,
        *,
        workers: int = 2,
        idle_pause: float = 0.2,
    ) -> None:
        from evalsvc.workers import chunk_handler, dead_chunk_handler

        self.consumers = [
            QueueConsumer(client, queue_url, chunk_handler, batch_size=1) for _ in range(workers)
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
