"""Chunks are served fairly across tenants: each message carries its tenant as its
MessageGroupId (an SQS fair queue on AWS), and the local workers (and `drain`) hand out next
the oldest chunk of the tenant with the fewest in flight, then of the one served least
recently, so one tenant's backlog does not delay another's small job."""

from __future__ import annotations

import json
from typing import Any

import pytest
from evalsvc.storage import work_queue
from evalsvc_tools.local.workers import FairShare, QueueConsumer, local_worker_counts

from tests.conftest import point_service_at
from tests.integration.conftest import Tenant
from tests.integration.test_queued_evaluations import queue_async, read, seed
from tests.work_queue import Work


@pytest.fixture(autouse=True)
def _chunks(work: Work, monkeypatch: pytest.MonkeyPatch) -> None:
    point_service_at(
        {
            "EVALSVC_CHUNK_CHECKS": "600",  # 3 check metrics: 200 pairs a chunk
            "EVALSVC_INLINE_MAX_CHECKS": "300",
        },
        monkeypatch,
    )


class Recorded:
    """The tenant of every chunk delivered, in order."""

    def __init__(self, work: Work) -> None:
        self.tenants: list[str] = []
        real = work.chunk_handler

        def handler(event: dict[str, Any], context: Any) -> Any:
            self.tenants += [json.loads(r["body"])["tenant"] for r in event["Records"]]
            return real(event, context)

        work.chunk_handler = handler


def backlog(acme: Tenant, globex: Tenant) -> list[str]:
    """Acme's four 1,000-pair evaluations queued (5 chunks each); globex's 120 pairs seeded."""
    seed(acme, 1000)
    seed(globex, 120)
    return [queue_async(acme) for _ in range(4)]


def test_every_chunk_message_carries_its_tenant_as_its_group(acme: Tenant, work: Work) -> None:
    seed(acme, 500)
    queue_async(acme)

    messages = work.client.receive_message(
        QueueUrl=work.queue_url, MaxNumberOfMessages=10, AttributeNames=["All"]
    )["Messages"]

    assert len(messages) == 3
    assert {m["Attributes"]["MessageGroupId"] for m in messages} == {"acme"}


def test_a_tenant_name_sqs_would_refuse_as_a_group_is_sent_as_a_digest() -> None:
    odd = work_queue.message_group("ünïcode tenant")
    assert odd.startswith("sha256:") and odd.isascii() and " " not in odd
    assert odd != work_queue.message_group("unicode tenant")
    assert work_queue.message_group("t" * 129) != work_queue.message_group("t" * 130)
    assert work_queue.message_group("acme") == "acme"


def test_a_small_job_queued_behind_another_tenants_backlog_is_served_next(
    acme: Tenant, globex: Tenant, work: Work
) -> None:
    # Given acme's 20 chunks waiting, then globex's one-chunk evaluation queued after them
    running = backlog(acme, globex)
    small = queue_async(globex)
    delivered = Recorded(work)

    # When two chunks are delivered
    work.deliver(2)

    # Then the second is globex's, whose evaluation is complete while acme's still run
    assert delivered.tenants == ["acme", "globex"]
    assert read(globex, small)["status"] == "complete"
    assert {read(acme, r)["status"] for r in running} == {"running"}


def test_a_small_job_queued_while_a_backlog_is_being_worked_on_is_served_next(
    acme: Tenant, globex: Tenant, work: Work
) -> None:
    # Given acme's backlog already being delivered (every waiting chunk received)
    backlog(acme, globex)
    delivered = Recorded(work)
    work.deliver(3)
    assert delivered.tenants == ["acme"] * 3

    # When globex queues its evaluation, Then its chunk is the next delivered
    small = queue_async(globex)
    work.deliver(1)
    assert delivered.tenants[-1] == "globex"
    assert read(globex, small)["status"] == "complete"

    # and draining delivers every chunk once
    work.drain()
    assert delivered.tenants.count("acme") == 20
    assert delivered.tenants.count("globex") == 1


def test_a_tenant_with_a_chunk_in_flight_waits_for_one_with_none(
    acme: Tenant, globex: Tenant, work: Work
) -> None:
    # Given two workers sharing the queue, one of them busy with a chunk of globex's
    seed(acme, 1000)
    seed(globex, 1000)
    queue_async(globex)
    queue_async(acme)
    fair = FairShare(work.client, work.queue_url)
    busy = fair.take()
    assert busy is not None and json.loads(busy["Body"])["tenant"] == "globex"

    # When the other worker takes a chunk, Then it is acme's, although globex's are older
    following = fair.take()
    assert following is not None and json.loads(following["Body"])["tenant"] == "acme"

    # and once both are done, the one served least recently goes first
    fair.done(busy)
    fair.done(following)
    third = fair.take()
    assert third is not None and json.loads(third["Body"])["tenant"] == "globex"


def test_messages_waiting_in_a_stopped_consumers_buffer_go_back_on_the_queue(
    acme: Tenant, work: Work
) -> None:
    # Given a consumer that received every waiting chunk and delivered one
    seed(acme, 1000)
    results_id = queue_async(acme)
    fair = FairShare(work.client, work.queue_url)
    consumer = QueueConsumer(
        work.client, work.queue_url, work.chunk_handler, batch_size=1, fair=fair
    )
    assert consumer.deliver_once() == 1
    assert fair.waiting() == 4

    # When it stops, Then what it held is visible again, and another consumer finishes the job
    assert fair.release() == 4
    work.drain()
    assert read(acme, results_id)["status"] == "complete"


def test_a_message_waiting_long_in_the_buffer_is_kept_hidden_not_received_again(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a buffer holding four of a job's five chunks
    seed(acme, 1000)
    queue_async(acme)
    now = [0.0]
    fair = FairShare(work.client, work.queue_url, clock=lambda: now[0])
    assert fair.take() is not None and fair.waiting() == 4
    renewed: list[int] = []
    real = work.client.change_message_visibility_batch

    def spy(**kwargs: Any) -> Any:
        renewed.append(len(kwargs["Entries"]))
        return real(**kwargs)

    monkeypatch.setattr(work.client, "change_message_visibility_batch", spy)

    # When they have waited more than half the queue's visibility timeout
    now[0] = fair.visibility_seconds / 2 + 1
    second = fair.take()

    # Then their invisibility was renewed (once each), and none was received a second time
    assert renewed == [4]
    assert second is not None and second["Attributes"]["ApproximateReceiveCount"] == "1"
    assert fair.waiting() == 3


def test_with_a_share_a_busy_tenant_leaves_a_worker_for_the_others(
    acme: Tenant, globex: Tenant, work: Work
) -> None:
    # Given three workers of which one tenant may hold two, and acme's backlog queued
    seed(acme, 1000)
    seed(globex, 120)
    queue_async(acme)
    fair = FairShare(work.client, work.queue_url, group_share=2)
    first, second = fair.take(), fair.take()
    assert first is not None and second is not None

    # When the third worker looks for work, Then acme's waiting chunks are not for it
    assert fair.take() is None

    # and a chunk of globex's, queued after, is taken at once
    queue_async(globex)
    third = fair.take()
    assert third is not None and json.loads(third["Body"])["tenant"] == "globex"

    # and once one of acme's is done, acme may take another
    fair.done(first)
    fourth = fair.take()
    assert fourth is not None and json.loads(fourth["Body"])["tenant"] == "acme"


def test_the_local_server_keeps_one_worker_beyond_a_tenants_share() -> None:
    assert local_worker_counts({}) == {"workers": 3, "tenant_share": 2}
    assert local_worker_counts({"EVALSVC_LOCAL_WORKERS": "1"}) == {"workers": 2, "tenant_share": 1}
    with pytest.raises(ValueError, match="at least 1"):
        local_worker_counts({"EVALSVC_LOCAL_WORKERS": "0"})
