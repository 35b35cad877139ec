"""Reading datasets: whole, in pages, a selection, a key range of one version. A read is whole
when the header names the same version after it (a version's pairs are deleted only after a
newer one is installed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from evalsvc.errors import Conflict, NotFound, StorageUnavailable
from evalsvc.models.datasets import (
    DatasetHeader,
    DatasetKind,
    PageCursor,
    Pair,
)
from evalsvc.observability import logger
from evalsvc.storage import dynamo
from evalsvc.storage.datasets.codec import (
    LISTED_PAIR_BYTES,
    TornRead,
    header_from_item,
    listed_pair_bytes,
    load_parts,
    pair_from_item,
)
from evalsvc.storage.datasets.keys import (
    COMMIT_ATTEMPTS,
    HEADER_SK,
    ORDER_INDEX,
    dataset_pk,
    make_ord,
    table,
    version_pk,
)
from evalsvc.storage.dynamo import get_n, get_s, s


class OverBudget(Exception):
    """A read passed the bytes it may hold."""


class TooLarge(Exception):
    """The dataset takes more bytes than the read may hold; `header` says how large it is."""

    def __init__(self, header: DatasetHeader) -> None:
        super().__init__(header.dataset_id)
        self.header = header


def get_header(tenant: str, kind: DatasetKind, dataset_id: str) -> DatasetHeader | None:
    key = {"pk": s(dataset_pk(tenant, kind, dataset_id)), "sk": s(HEADER_SK)}
    item = dynamo.get_item(table(), key)
    return header_from_item(tenant, kind, item) if item else None


def current_version(tenant: str, kind: DatasetKind, dataset_id: str) -> str | None:
    """The version the header names (None without a dataset): one small read."""
    response = dynamo.call(
        "get_item",
        TableName=table(),
        Key={"pk": s(dataset_pk(tenant, kind, dataset_id)), "sk": s(HEADER_SK)},
        ConsistentRead=True,
        ProjectionExpression="version",
    )
    item = response.get("Item")
    return get_s(item, "version") if item else None


def existing_header(tenant: str, kind: DatasetKind, dataset_id: str) -> DatasetHeader:
    header = get_header(tenant, kind, dataset_id)
    if header is None:
        raise NotFound(f"no {kind.value} dataset with id {dataset_id!r}")
    return header


def _query_pairs(
    header: DatasetHeader,
    *,
    limit: int | None = None,
    after: PageCursor | None = None,
    since_ord: str | None = None,
    labels: Sequence[str] = (),
    newest_first: bool = False,
    until_ord: str | None = None,
    keys_only: bool = False,
    page_bytes: int | None = None,
    budget_bytes: int | None = None,
) -> tuple[list[Pair], list[str]]:
    """Pairs of `header`'s version up to its `last_ord` (or `until_ord`; from `since_ord` on,
    when given; only those carrying every one of `labels`), oldest first unless `newest_first`,
    at most `limit`, after `after`, and no more than make `page_bytes` (as listed: pair_bytes
    and LISTED_PAIR_BYTES each; at least one). Returns them and their ords. OverBudget as soon
    as they take more than `budget_bytes`. `keys_only` reads ids alone (the pairs come back
    without their texts)."""
    pk = version_pk(header.tenant, header.kind, header.dataset_id, header.version)
    values: dict[str, Any] = {":pk": s(pk), ":last": s(until_ord or header.last_ord)}
    condition = "pk = :pk AND #ord <= :last"
    if since_ord is not None:
        condition = "pk = :pk AND #ord BETWEEN :since AND :last"
        values[":since"] = s(since_ord)
    query: dict[str, Any] = {
        "TableName": table(),
        "IndexName": ORDER_INDEX,
        "KeyConditionExpression": condition,
        "ExpressionAttributeNames": {"#ord": "ord"},
        "ExpressionAttributeValues": values,
        "ConsistentRead": True,
        "ScanIndexForward": not newest_first,
    }
    if keys_only:
        query["ProjectionExpression"] = "pk, sk, #ord, b"
    if labels:
        names = [f":label{i}" for i in range(len(labels))]
        query["FilterExpression"] = " AND ".join(f"contains(labels, {name})" for name in names)
        values.update({name: s(label) for name, label in zip(names, labels, strict=True)})
    if after is not None:
        query["ExclusiveStartKey"] = {
            "pk": s(pk),
            "sk": s(f"p#{after.pair_id}"),
            "ord": s(after.ord),
        }
    pairs: list[Pair] = []
    ords: list[str] = []
    large: list[tuple[Pair, int]] = []
    total = 0
    # DynamoDB applies Limit before a filter: with labels, page by size and stop when enough.
    for page in dynamo.query_pages(limit=None if labels else limit, **query):
        for item in page:
            if page_bytes is not None or budget_bytes is not None:
                total += listed_pair_bytes(item)
                if budget_bytes is not None and total > budget_bytes:
                    raise OverBudget
                if page_bytes is not None and pairs and total > page_bytes:
                    break
            pair = pair_from_item(item)
            pairs.append(pair)
            ords.append(item["ord"]["S"])
            if "parts" in item and not keys_only:
                large.append((pair, get_n(item, "parts")))
        else:
            if limit is None or len(pairs) < limit:
                continue
        break
    if limit is not None:
        del pairs[limit:], ords[limit:]
    for pair, part_count in large:
        load_parts(pk, pair, part_count)
    return pairs, ords


def read_dataset(
    tenant: str, kind: DatasetKind, dataset_id: str, max_bytes: int
) -> tuple[DatasetHeader, list[Pair]]:
    """The header and every pair, oldest first, as of one version of the dataset. TooLarge,
    before the pairs are read when the header knows their size, when they take more than
    `max_bytes`."""
    for _ in range(COMMIT_ATTEMPTS):
        header = existing_header(tenant, kind, dataset_id)
        listed = (
            None if header.bytes is None else header.bytes + header.pair_count * LISTED_PAIR_BYTES
        )
        if listed is not None and listed > max_bytes:
            raise TooLarge(header)
        if header.pair_count == 0:
            return header, []
        try:
            pairs, _ = _query_pairs(header, budget_bytes=max_bytes)
        except TornRead:
            pairs = []
        except OverBudget:
            raise TooLarge(header) from None  # a header without a size
        # Fewer pairs than the header counts: the read overlapped the deletion of this version
        # after an overwrite. Read the new version.
        if len(pairs) == header.pair_count:
            return header, pairs
        logger.info("dataset changed during read; reading again", extra={"id": dataset_id})
    raise StorageUnavailable(f"dataset {dataset_id!r} keeps changing while it is read; retry")


T = TypeVar("T")


def _read_one_version(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    read: Callable[[DatasetHeader], T],
    *,
    version: str | None = None,
) -> tuple[DatasetHeader, T]:
    """Run `read` against the current version and return its result once the header still
    names that version afterwards (a version's pairs are deleted only after a newer one is
    installed, so the read was whole). With `version`, a newer version is a 409."""
    overwritten = Conflict(
        f"dataset {dataset_id!r} was overwritten since the first page; read it again from the start"
    )
    for _ in range(COMMIT_ATTEMPTS):
        header = existing_header(tenant, kind, dataset_id)
        if version is not None and header.version != version:
            raise overwritten
        try:
            result = read(header)
        except TornRead:
            continue
        if current_version(tenant, kind, dataset_id) == header.version:
            return header, result
        if version is not None:
            raise overwritten
    raise StorageUnavailable(f"dataset {dataset_id!r} keeps changing while it is read; retry")


def read_page(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    limit: int,
    after: PageCursor | None,
    max_bytes: int,
) -> tuple[DatasetHeader, list[Pair], PageCursor | None]:
    """Up to `limit` pairs after `after` (from the start without it), no more than make
    `max_bytes` (at least one), and the cursor of the next page (None on the last). Every page
    comes from the version the first page read: once the dataset is overwritten, its remaining
    pages are a 409."""

    def page(header: DatasetHeader) -> tuple[list[Pair], str]:
        if header.pair_count == 0:
            return [], ""
        pairs, ords = _query_pairs(header, limit=limit, after=after, page_bytes=max_bytes)
        return pairs, ords[-1] if ords else ""

    header, (pairs, last_ord) = _read_one_version(
        tenant, kind, dataset_id, page, version=after.version if after else None
    )
    more = bool(pairs) and last_ord < header.last_ord
    return header, pairs, PageCursor(header.version, last_ord, pairs[-1].id) if more else None


def select_pairs(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    *,
    labels: Sequence[str] = (),
    since_ms: int | None = None,
    latest_n: int | None = None,
    keys_only: bool = False,
) -> tuple[DatasetHeader, list[Pair], list[str]]:
    """The pairs an evaluation scores, in dataset order, and their ords: those carrying all
    `labels`, created at or after `since_ms`, then the `latest_n` most recent of what remains.
    Key-range queries on the order index; labels are a filter on what that range reads.
    `keys_only`: ids and ords alone, without the texts."""

    def select(header: DatasetHeader) -> tuple[list[Pair], list[str]]:
        if header.pair_count == 0:
            return [], []
        pairs, ords = _query_pairs(
            header,
            limit=latest_n,
            since_ord=make_ord(since_ms, 0) if since_ms is not None else None,
            labels=labels,
            newest_first=latest_n is not None,
            keys_only=keys_only,
        )
        if latest_n is not None:
            pairs.reverse()
            ords.reverse()
        return pairs, ords

    header, (pairs, ords) = _read_one_version(tenant, kind, dataset_id, select)
    return header, pairs, ords


def read_range(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    version: str,
    first_ord: str,
    last_ord: str,
    labels: Sequence[str] = (),
) -> list[Pair]:
    """The pairs of one version of a dataset with `first_ord` <= ord <= `last_ord` that carry
    every one of `labels`, in dataset order. A version that was since replaced may be part-way
    deleted: callers compare the count with what they expect."""
    header = DatasetHeader(
        tenant=tenant,
        kind=kind,
        dataset_id=dataset_id,
        system_prompt="",
        created_ms=0,
        updated_ms=0,
        version=version,
        pair_count=0,
        last_ord=last_ord,
    )
    try:
        pairs, _ = _query_pairs(header, since_ord=first_ord, labels=labels)
    except TornRead:
        return []
    return pairs
