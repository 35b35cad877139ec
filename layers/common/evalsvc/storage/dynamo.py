"""DynamoDB plumbing shared by the repositories: the client, attribute encoding, batch writes
that retry what DynamoDB leaves unprocessed, and paginated queries."""

from __future__ import annotations

import heapq
import re
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any, TypeVar

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from evalsvc.core import backoff
from evalsvc.core.errors import StorageUnavailable
from evalsvc.core.observability import LogContextPool, logger
from evalsvc.core.settings import get_settings

Item = dict[str, Any]
BATCH_WRITE_MAX = 25
BATCH_GET_MAX = 100
# Rounds of a batch read or write before what DynamoDB keeps leaving unprocessed is a 503.
BATCH_ATTEMPTS = 8
_THROTTLING_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "InternalServerError",
        "ServiceUnavailable",
    }
)


@cache
def _client(endpoint_url: str | None, region: str) -> Any:
    config = Config(
        retries={"mode": "standard", "max_attempts": 5},
        connect_timeout=3,
        # A local endpoint (the embedded store, one request at a time) can be slow under load.
        read_timeout=10 if endpoint_url is None else 120,
        max_pool_connections=16,
        tcp_keepalive=True,
    )
    return boto3.client("dynamodb", region_name=region, endpoint_url=endpoint_url, config=config)


def client() -> Any:
    settings = get_settings()
    return _client(settings.dynamodb_endpoint_url, settings.region)


def reset_clients() -> None:
    _client.cache_clear()


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def failed_conditions(exc: ClientError) -> list[int] | None:
    """For a write refused because a condition was false: the indexes of the actions whose
    condition failed ([0] for a single write). None when it was refused for another reason (a
    conflict with a concurrent transaction, throttling): the caller must raise or retry."""
    code = error_code(exc)
    if code == "ConditionalCheckFailedException":
        return [0]
    if code != "TransactionCanceledException":
        return None
    codes = [str(r.get("Code")) for r in exc.response.get("CancellationReasons") or []]
    if not codes:
        # Without the reasons in the response, the message lists them in action order:
        # "Transaction cancelled, ... [ConditionalCheckFailed, None]".
        listed = re.search(
            r"\[([^\]]*)\]\s*$", str(exc.response.get("Error", {}).get("Message", ""))
        )
        codes = [c.strip() for c in listed.group(1).split(",")] if listed else []
    failed = [k for k, c in enumerate(codes) if c == "ConditionalCheckFailed"]
    return failed or None


def cancelled(exc: ClientError) -> bool:
    """A transaction cancelled, for a false condition or a conflict with another transaction
    on one of its items (both worth reading again and retrying)."""
    return error_code(exc) == "TransactionCanceledException"


def conditional(operation: str, **kwargs: Any) -> Any | None:
    """Call a DynamoDB write whose condition may be false: its response, or None when a
    condition was false (other errors are raised)."""
    try:
        return call(operation, **kwargs)
    except ClientError as exc:
        if failed_conditions(exc) is not None:
            return None
        raise


# Tries of a transaction that keeps conflicting with others on the same items.
TRANSACT_ATTEMPTS = 6


def transact(actions: Sequence[Item]) -> bool:
    """Run a transaction whose conditions may be false: True when it committed, False when a
    condition was false. One cancelled by a conflict with a concurrent transaction on one of
    its items (two chunks of a job counted at once) is tried again after a jittered pause; a
    conflict that persists, like any other error, is raised."""
    for attempt in range(1, TRANSACT_ATTEMPTS + 1):
        try:
            call("transact_write_items", TransactItems=list(actions))
            return True
        except ClientError as exc:
            if failed_conditions(exc) is not None:
                return False
            if not cancelled(exc) or attempt == TRANSACT_ATTEMPTS:
                raise
        time.sleep(backoff.delay(attempt, 0.02, 1.0))
    raise AssertionError("unreachable")


def unavailable(exc: Exception) -> StorageUnavailable:
    """The error a caller sees when DynamoDB stays busy or unreachable after retries."""
    logger.warning("dynamodb unavailable", extra={"error": repr(exc)})
    return StorageUnavailable("storage is busy or unavailable; nothing was changed, retry shortly")


def call(operation: str, *, via: Any = None, **kwargs: Any) -> Any:
    """Call one DynamoDB operation (on `via`, a client, or the configured one); throttling and
    transport failures become StorageUnavailable."""
    try:
        return getattr(via or client(), operation)(**kwargs)
    except ClientError as exc:
        if error_code(exc) in _THROTTLING_CODES:
            raise unavailable(exc) from exc
        raise
    except BotoCoreError as exc:
        raise unavailable(exc) from exc


# ---- attribute values ------------------------------------------------------------------------


def s(value: str) -> dict[str, str]:
    return {"S": value}


def n(value: int) -> dict[str, str]:
    return {"N": str(value)}


def ss_list(values: Sequence[str]) -> dict[str, list[dict[str, str]]]:
    return {"L": [{"S": v} for v in values]}


def get_s(item: Item, name: str, default: str | None = None) -> str | None:
    value = item.get(name)
    return value["S"] if value is not None else default


def get_n(item: Item, name: str, default: int = 0) -> int:
    value = item.get(name)
    return int(value["N"]) if value is not None else default


def get_list(item: Item, name: str) -> list[str]:
    value = item.get(name)
    return [v["S"] for v in value["L"]] if value is not None else []


def item_size(item: Item) -> int:
    """An item's size as DynamoDB counts it: attribute names plus values (UTF-8 strings,
    number digits, raw bytes), lists with their small per-element overhead."""
    total = 0
    for name, value in item.items():
        total += len(name.encode()) + _value_size(value)
    return total


def _value_size(value: dict[str, Any]) -> int:
    ((kind, raw),) = value.items()
    if kind == "S":
        return len(raw.encode())
    if kind == "B":
        return len(raw)
    if kind == "L":
        return 3 + sum(1 + _value_size(v) for v in raw)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + _value_size(v) for k, v in raw.items())
    return len(str(raw).encode())


# ---- batch writes and queries ----------------------------------------------------------------


def batch_write(
    table: str,
    requests: Sequence[Item],
    *,
    on_progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    max_attempts: int = BATCH_ATTEMPTS,
    via: Any = None,
) -> None:
    """Write `requests` (PutRequest/DeleteRequest entries) in batches of 25, retrying the items
    DynamoDB leaves unprocessed with jittered exponential backoff. `on_progress` gets the number
    of requests done so far. Batches go `workers` at a time (default: the write_threads
    setting)."""
    workers = workers or get_settings().write_threads
    chunks = [requests[i : i + BATCH_WRITE_MAX] for i in range(0, len(requests), BATCH_WRITE_MAX)]
    if not chunks:
        return

    def write_chunk(chunk: Sequence[Item]) -> int:
        pending = list(chunk)
        for attempt in range(max_attempts):
            response = call("batch_write_item", via=via, RequestItems={table: pending})
            pending = response.get("UnprocessedItems", {}).get(table, [])
            if not pending:
                return len(chunk)
            time.sleep(backoff.delay(attempt + 1, 0.05, 2.0))
        raise StorageUnavailable(
            f"storage kept refusing {len(pending)} writes after {max_attempts} attempts; retry"
        )

    done = 0
    if len(chunks) == 1 or workers <= 1:
        for chunk in chunks:
            done += write_chunk(chunk)
            if on_progress:
                on_progress(done)
        return
    with LogContextPool(max_workers=min(workers, len(chunks))) as pool:
        for count in pool.map(write_chunk, chunks):
            done += count
            if on_progress:
                on_progress(done)


def query_pages(*, limit: int | None = None, **kwargs: Any) -> Iterator[list[Item]]:
    """Yield each page of a Query (1 MB of items per page), stopping after `limit` items when
    given."""
    remaining = limit
    while True:
        if remaining is not None:
            kwargs["Limit"] = remaining
        response = call("query", **kwargs)
        items = response.get("Items", [])
        yield items
        if remaining is not None:
            remaining -= len(items)
            if remaining <= 0:
                return
        last = response.get("LastEvaluatedKey")
        if not last:
            return
        kwargs["ExclusiveStartKey"] = last


# Threads that ask for the first pages of a merged query at once, kept for the process.
_QUERY_THREADS = 16
_query_pool: ThreadPoolExecutor | None = None


def _first_pages(queries: Sequence[Item]) -> list[Item]:
    global _query_pool
    if len(queries) == 1:
        return [call("query", **queries[0])]
    if _query_pool is None:
        _query_pool = LogContextPool(_QUERY_THREADS, thread_name_prefix="query")
    return list(_query_pool.map(lambda query: call("query", **query), queries))


T = TypeVar("T")
R = TypeVar("R")

# Threads that write many items at once (pairs appended together), kept for the process.
_WRITE_THREADS = 16
_write_pool: ThreadPoolExecutor | None = None


def in_parallel(work: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """`work` of each of `items` on the process's writing threads, results in their order; the
    first exception, in their order, is raised (work already started runs on)."""
    global _write_pool
    if len(items) <= 1:
        return [work(item) for item in items]
    if _write_pool is None:
        _write_pool = LogContextPool(_WRITE_THREADS, thread_name_prefix="write")
    return list(_write_pool.map(work, items))


def merged_query(
    queries: Sequence[Item], order: Callable[[Item], str], *, reverse: bool = False
) -> Iterator[Item]:
    """The items of several Queries (one per partition, each already in `order`) as one stream
    in `order`. The first page of every query is asked for at once; later pages only when the
    stream reaches them, so a reader that stops early reads little past what it took."""

    def stream(query: Item, first: Item) -> Iterator[Item]:
        yield from first.get("Items", [])
        last = first.get("LastEvaluatedKey")
        if last:
            for page in query_pages(**query, ExclusiveStartKey=last):
                yield from page

    streams = [stream(q, r) for q, r in zip(queries, _first_pages(queries), strict=True)]
    if len(streams) == 1:
        return streams[0]
    return heapq.merge(*streams, key=order, reverse=reverse)


def query_bounded(
    *,
    max_items: int | None,
    max_bytes: int,
    size: Callable[[Item], int] = item_size,
    **kwargs: Any,
) -> tuple[list[Item], bool]:
    """The items of a Query, in order, until `max_items` of them or until the next would take
    them past `max_bytes` (by `size`; the first item is always taken). Returns them and whether
    more items follow. Reads at most one DynamoDB page past what it returns."""
    items: list[Item] = []
    total = 0
    for page in query_pages(limit=None if max_items is None else max_items + 1, **kwargs):
        for item in page:
            if max_items is not None and len(items) >= max_items:
                return items, True
            total += size(item)
            if items and total > max_bytes:
                return items, True
            items.append(item)
    return items, False


def query_items(**kwargs: Any) -> Iterator[Item]:
    """Every item a Query returns, across its pages."""
    for page in query_pages(**kwargs):
        yield from page


def get_item(table: str, key: Item, *, consistent: bool = True) -> Item | None:
    """One item by key (strongly consistent by default), or None."""
    response = call("get_item", TableName=table, Key=key, ConsistentRead=consistent)
    item: Item | None = response.get("Item")
    return item


def batch_get(
    table: str, keys: Sequence[Item], *, consistent: bool = True, projection: str | None = None
) -> Iterator[Item]:
    """The items among `keys` that exist (only the attributes `projection` names, when given),
    100 keys a call, retrying unprocessed keys."""
    for start in range(0, len(keys), BATCH_GET_MAX):
        request: dict[str, Any] = {
            table: {"Keys": list(keys[start : start + BATCH_GET_MAX]), "ConsistentRead": consistent}
        }
        if projection is not None:
            request[table]["ProjectionExpression"] = projection
        for attempt in range(BATCH_ATTEMPTS):
            response = call("batch_get_item", RequestItems=request)
            yield from response.get("Responses", {}).get(table, [])
            request = response.get("UnprocessedKeys") or {}
            if not request:
                break
            time.sleep(backoff.delay(attempt + 1, 0.05, 2.0))
        else:
            raise StorageUnavailable("storage kept refusing reads; retry shortly")


def scan_all(table: str) -> Iterator[Item]:
    kwargs: dict[str, Any] = {"TableName": table}
    while True:
        response = call("scan", **kwargs)
        yield from response.get("Items", [])
        last = response.get("LastEvaluatedKey")
        if not last:
            return
        kwargs["ExclusiveStartKey"] = last
