"""The work queue (SQS) that carries chunks of queued evaluations to the workers.

A message is one chunk, as compact JSON: which result, which chunk, the key range of its pairs
and their ords' fingerprints (never the pairs themselves, which can be far larger than a
message). A chunk of the most pairs (10,000 one-check pairs) takes about 110 KB; SendMessageBatch
takes 256 KB in all, so messages are batched by size as well as by count.

Every message carries its tenant as its MessageGroupId: on a standard queue that makes it an
SQS fair queue, which serves first the tenants with the fewest messages in flight, so one
tenant's backlog does not hold back another's work (the local server's workers apply the same
rule: evalsvc_tools.local.workers).
"""

from __future__ import annotations

import binascii
import hashlib
import json
import re
from collections.abc import Sequence
from functools import cache
from itertools import accumulate
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from evalsvc.core.errors import StorageUnavailable
from evalsvc.core.observability import LogContextPool, logger
from evalsvc.core.settings import get_settings
from evalsvc.models.jobs import Chunk, members_from_text, members_text

SEND_BATCH_MAX = 10
# What SQS takes in one SendMessageBatch call (262,144 bytes), with room for the attributes.
SEND_BATCH_BYTES = 250_000
MAX_DELAY_SECONDS = 900
MESSAGE_VERSION = 1
_KIND = re.compile(r"\A[a-z][a-z_]{0,31}\Z")
# What SQS takes as a MessageGroupId: 1-128 characters, printable ASCII without the space.
_GROUP = re.compile(r"\A[!-~]{1,128}\Z")


@cache
def _client(endpoint_url: str | None, region: str) -> Any:
    config = Config(
        retries={"mode": "standard", "max_attempts": 5},
        connect_timeout=3,
        read_timeout=25,
        max_pool_connections=16,
    )
    return boto3.client("sqs", region_name=region, endpoint_url=endpoint_url, config=config)


def client() -> Any:
    settings = get_settings()
    return _client(settings.sqs_endpoint_url, settings.region)


def reset_clients() -> None:
    _client.cache_clear()


def queue_url() -> str | None:
    return get_settings().work_queue_url


def encode(chunk: Chunk) -> str:
    return json.dumps(
        {
            "v": MESSAGE_VERSION,
            "kind": chunk.kind,
            "tenant": chunk.tenant,
            "job": chunk.job_id,
            "chunk": chunk.index,
            "start": chunk.start,
            "count": chunk.count,
            "first_ord": chunk.first_ord,
            "last_ord": chunk.last_ord,
            "members": members_text(chunk.members),
            "requeues": chunk.requeues,
        },
        separators=(",", ":"),
    )


class BadMessage(ValueError):
    """A message that is not a chunk this code understands."""


def decode(body: str) -> Chunk:
    try:
        value = json.loads(body)
        if value.get("v") != MESSAGE_VERSION:
            raise BadMessage(f"unknown message version {value.get('v')!r}")
        members = members_from_text(value.get("members"))
        count = int(value["count"])
        if members is not None and len(members) != 8 * count:
            raise BadMessage("the chunk's members do not match its count")
        return Chunk(
            kind=_kind(value["kind"]),
            tenant=str(value["tenant"]),
            job_id=str(value["job"]),
            index=int(value["chunk"]),
            start=int(value["start"]),
            count=count,
            first_ord=str(value["first_ord"]),
            last_ord=str(value["last_ord"]),
            members=members,
            requeues=int(value.get("requeues", 0)),
        )
    except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as exc:
        if isinstance(exc, BadMessage):
            raise
        raise BadMessage(f"not a chunk message: {exc.__class__.__name__}") from exc


def _kind(value: object) -> str:
    """A kind's name as a message carries it (which kinds exist is the engine's to say)."""
    if not isinstance(value, str) or not _KIND.match(value):
        raise BadMessage("the message names no kind of work")
    return value


def job_of(body: str) -> tuple[str, str, str] | None:
    """The kind, tenant and job id a message names, read leniently (for a message `decode`
    refuses, e.g. one of another version); None when it names none."""
    try:
        value = json.loads(body)
        return _kind(value["kind"]), str(value["tenant"]), str(value["job"])
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _call(operation: str, **kwargs: Any) -> Any:
    try:
        return getattr(client(), operation)(**kwargs)
    except (ClientError, BotoCoreError) as exc:
        logger.warning("sqs call failed", extra={"operation": operation, "error": repr(exc)})
        raise StorageUnavailable(
            "the work queue is busy or unavailable; nothing was started, retry shortly"
        ) from exc


def batched(bodies: Sequence[str]) -> list[list[str]]:
    """The bodies in order, cut into SendMessageBatch calls: at most SEND_BATCH_MAX bodies and
    SEND_BATCH_BYTES of them each (a body is never larger: see the module's note)."""
    batches: list[list[str]] = []
    size = 0
    for body in bodies:
        length = len(body.encode())
        if not batches or len(batches[-1]) == SEND_BATCH_MAX or size + length > SEND_BATCH_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(body)
        size += length
    return batches


def message_group(tenant: str) -> str:
    """The tenant's message group: its name when SQS takes it as one, else a digest of it
    (distinct tenants stay distinct groups)."""
    if _GROUP.match(tenant):
        return tenant
    return "sha256:" + hashlib.sha256(tenant.encode()).hexdigest()


def send(chunks: Sequence[Chunk], *, delay_seconds: int = 0, workers: int = 8) -> None:
    """Put every chunk on the queue, up to 10 and SEND_BATCH_BYTES a call, each in its
    tenant's message group, retrying entries SQS reports as failed."""
    url = queue_url()
    if url is None:
        raise StorageUnavailable("no work queue is configured (EVALSVC_WORK_QUEUE_URL)")
    groups = [message_group(chunk.tenant) for chunk in chunks]
    batches = batched([encode(chunk) for chunk in chunks])
    if not batches:
        return
    # batched keeps the order: the k-th body of all is chunk k's.
    firsts = [0, *accumulate(len(batch) for batch in batches[:-1])]

    def send_batch(first: int, batch: Sequence[str]) -> None:
        entries = [
            {
                "Id": str(k),
                "MessageBody": body,
                "MessageGroupId": groups[first + k],
                "DelaySeconds": min(MAX_DELAY_SECONDS, max(0, delay_seconds)),
            }
            for k, body in enumerate(batch)
        ]
        for _ in range(5):
            response = _call("send_message_batch", QueueUrl=url, Entries=entries)
            failed = {f["Id"] for f in response.get("Failed", [])}
            if not failed:
                return
            entries = [e for e in entries if e["Id"] in failed]
        raise StorageUnavailable("the work queue kept refusing messages; retry shortly")

    if len(batches) <= 1:
        for first, batch in zip(firsts, batches, strict=True):
            send_batch(first, batch)
        return
    with LogContextPool(max_workers=min(workers, len(batches))) as pool:
        list(pool.map(send_batch, firsts, batches))


def retry_later(receipt_handle: str, delay_seconds: int) -> None:
    """Make a received message visible again after `delay_seconds` (instead of after the
    queue's whole visibility timeout)."""
    url = queue_url()
    if url is None:
        return
    _call(
        "change_message_visibility",
        QueueUrl=url,
        ReceiptHandle=receipt_handle,
        VisibilityTimeout=min(MAX_DELAY_SECONDS, max(0, delay_seconds)),
    )
