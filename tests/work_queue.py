"""The work queue in tests: moto's SQS queues from template.yaml, and delivery of their
messages to the worker functions' handlers the way Lambda delivers them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evalsvc_tools.local.workers import FairShare, QueueConsumer, drain

from tests.lambda_support import handler_of

MAX_RECEIVES = 5  # the work queue's maxReceiveCount in template.yaml


class Work:
    """The work queue and its dead-letter queue, and a way to deliver their messages."""

    def __init__(self, client: Any, urls: dict[str, str]) -> None:
        self.client = client
        self.queue_url = urls["WorkQueue"]
        self.dead_letter_url = urls["WorkDeadLetterQueue"]
        self.chunk_handler: Callable[..., Any] = handler_of("score_chunks")
        # The chunks are delivered fairly across tenants, as the local server's workers do.
        self.fair = FairShare(client, self.queue_url)

    def consumers(self) -> list[QueueConsumer]:
        return [
            QueueConsumer(self.client, self.queue_url, self._chunk, batch_size=1, fair=self.fair),
            QueueConsumer(
                self.client, self.dead_letter_url, handler_of("fail_chunks"), batch_size=10
            ),
        ]

    def _chunk(self, event: dict[str, Any], context: Any) -> Any:
        return self.chunk_handler(event, context)

    def deliver(self, count: int) -> None:
        """Deliver `count` work-queue messages, one at a time."""
        consumer = self.consumers()[0]
        for _ in range(count):
            assert consumer.deliver_once() == 1

    def deliver_dead_letters(self) -> None:
        """Deliver what is on the dead-letter queue (one batch)."""
        self.consumers()[1].deliver_once()

    def drain(self) -> int:
        return drain(self.consumers())

    def lose_visible(self) -> int:
        """Delete every message waiting on the work queue without delivering it, as a local
        server killed with its queue loses them (SQS allows one PurgeQueue a minute); how many
        were lost."""
        return len(self._take_waiting())

    def dead_letter_all(self) -> int:
        """Move every message waiting on the work queue to the dead-letter queue, as SQS does
        with a chunk past its maxReceiveCount; how many."""
        taken = self._take_waiting()
        for body in taken:
            self.client.send_message(QueueUrl=self.dead_letter_url, MessageBody=body)
        return len(taken)

    def _take_waiting(self) -> list[str]:
        """Receive and delete every message waiting on the work queue; their bodies."""
        self.fair.release()
        bodies: list[str] = []
        while True:
            messages = self.client.receive_message(
                QueueUrl=self.queue_url, MaxNumberOfMessages=10
            ).get("Messages", [])
            if not messages:
                return bodies
            for message in messages:
                self.client.delete_message(
                    QueueUrl=self.queue_url, ReceiptHandle=message["ReceiptHandle"]
                )
                bodies.append(message["Body"])

    def waiting(self, url: str | None = None) -> int:
        attributes = self.client.get_queue_attributes(
            QueueUrl=url or self.queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return int(attributes["ApproximateNumberOfMessages"]) + int(
            attributes["ApproximateNumberOfMessagesNotVisible"]
        )


class FailsFirst:
    """Stands in for `real`: the first call raises `error` (a worker dying there), later calls
    go through. `calls` counts them all."""

    def __init__(self, real: Callable[..., Any], error: str = "worker killed") -> None:
        self.real = real
        self.error = error
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError(self.error)
        return self.real(*args, **kwargs)
