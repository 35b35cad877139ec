"""The state every queued job keeps on one item (an evaluation result's header, a generation's
job item): `status`, progress counters, the set of chunks counted, the latest chunk error.
Each change is one conditional update, so it holds when two workers race or a chunk is
delivered twice."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from evalsvc.models.evaluations import Status
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s

RUNNING = {":running": s(Status.RUNNING.value)}
STATUS = {"#status": "status"}


def is_condition_failure(exc: ClientError) -> bool:
    """A write refused because its condition was false: the job was not in the state the write
    expected. A transaction cancelled for any other reason (a conflict with a concurrent
    transaction on one of its items) is not: the caller must raise, so the work is retried."""
    code = dynamo.error_code(exc)
    if code == "ConditionalCheckFailedException":
        return True
    if code != "TransactionCanceledException":
        return False
    reasons = exc.response.get("CancellationReasons") or []
    if reasons:
        return any(reason.get("Code") == "ConditionalCheckFailed" for reason in reasons)
    return "ConditionalCheckFailed" in str(exc)


def conditional(operation: str, **kwargs: Any) -> Any | None:
    """Call a DynamoDB write whose condition may be false: its response, or None when the
    condition was false (other errors are raised)."""
    try:
        return dynamo.call(operation, **kwargs)
    except ClientError as exc:
        if is_condition_failure(exc):
            return None
        raise


def create(table: str, item: Item) -> bool:
    """Put `item` unless an item with its key exists; whether it was put."""
    put = conditional(
        "put_item", TableName=table, Item=item, ConditionExpression="attribute_not_exists(pk)"
    )
    return put is not None


def running_items(table: str, sk: str) -> Iterator[Item]:
    """Every running job item (sort key `sk`) of `table`: a whole-table scan, for the local
    server only."""
    for item in dynamo.scan_all(table):
        if item.get("sk", {}).get("S") == sk and get_s(item, "status") == Status.RUNNING.value:
            yield item


def done_chunks(item: Item) -> set[int]:
    """The indexes of the chunks counted so far."""
    return {int(value) for value in item.get("done", {}).get("NS", [])}


def running_fields(chunk_count: int) -> Item:
    """The attributes a job starts with."""
    return {
        "status": s(Status.RUNNING.value),
        "pairs_done": n(0),
        "bytes_done": n(0),
        "chunks_done": n(0),
        "chunk_count": n(chunk_count),
    }


def count_chunk(table: str, key: Item, chunk: int, pairs: int, size: int) -> tuple[int, int] | None:
    """Count chunk `chunk` (of `pairs` pairs, `size` bytes of what the job stores) as done,
    once: (chunks done, chunk count) after counting it; None when it was counted before or the
    job is no longer running."""
    response = conditional(
        "update_item",
        TableName=table,
        Key=key,
        UpdateExpression="ADD pairs_done :pairs, bytes_done :size, chunks_done :one, done :chunk",
        ConditionExpression="#status = :running AND NOT contains(done, :index)",
        ExpressionAttributeNames=STATUS,
        ExpressionAttributeValues={
            ":pairs": n(pairs),
            ":size": n(size),
            ":one": n(1),
            ":chunk": {"NS": [str(chunk)]},
            ":index": n(chunk),
            **RUNNING,
        },
        ReturnValues="ALL_NEW",
    )
    if response is None:
        return None
    item = response["Attributes"]
    return get_n(item, "chunks_done"), get_n(item, "chunk_count")


def fail(table: str, key: Item, reason: str, http_status: int) -> bool:
    """Mark a running job failed, saying why; False when it had already ended."""
    updated = conditional(
        "update_item",
        TableName=table,
        Key=key,
        UpdateExpression="SET #status = :failed, failure = :reason, failure_status = :code "
        "REMOVE done",
        ConditionExpression="#status = :running",
        ExpressionAttributeNames=STATUS,
        ExpressionAttributeValues={
            ":failed": s(Status.FAILED.value),
            ":reason": s(reason),
            ":code": n(http_status),
            **RUNNING,
        },
    )
    return updated is not None


def note_error(table: str, key: Item, message: str, http_status: int) -> None:
    """Remember the latest chunk failure of a running job (the reason it fails with if the
    chunk is given up)."""
    conditional(
        "update_item",
        TableName=table,
        Key=key,
        UpdateExpression="SET last_error = :message, last_error_status = :code",
        ConditionExpression="#status = :running",
        ExpressionAttributeNames=STATUS,
        ExpressionAttributeValues={":message": s(message), ":code": n(http_status), **RUNNING},
    )


def complete_update(table: str, key: Item, set_expression: str, values: Item) -> Item:
    """The transaction action that marks a running job complete, setting `set_expression`
    (e.g. "summaries = :summaries") too."""
    return {
        "Update": {
            "TableName": table,
            "Key": key,
            "UpdateExpression": f"SET #status = :complete, {set_expression} "
            "REMOVE done, last_error, last_error_status",
            "ConditionExpression": "#status = :running",
            "ExpressionAttributeNames": STATUS,
            "ExpressionAttributeValues": {
                ":complete": s(Status.COMPLETE.value),
                **RUNNING,
                **values,
            },
        }
    }
