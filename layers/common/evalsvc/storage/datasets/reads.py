"""Reading datasets: whole, in pages, a selection, a key range of one version. A read is whole
when the header names the same version after it (a version's pairs are deleted only after a
newer one is installed)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from evalsvc.core.errors import Conflict, NotFound, StorageUnavailable
from evalsvc.models.datasets import (
    DatasetHeader,
    DatasetKind,
    PageCursor,
    Pair,
    pair_bytes,
)
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
    COUNT_SK,
    HEADER_SK,
    ORDER_INDEX,
    Stored,
    counter_pks,
    dataset_pk,
    fingerprint,
    make_ord,
    pair_pks,
    read_parts,
    table,
)
from evalsvc.storage.dynamo import Item, get_n, get_s, s


class OverBudget(Exception):
    """A read passed the bytes it may hold."""


class TooLarge(Exception):
    """The dataset takes more bytes than the read may hold; `header` says how large it is."""

    def __init__(self, header: DatasetHeader) -> None:
        super().__init__(header.dataset_id)
        self.header = header


def get_header(
    tenant: str, kind: DatasetKind, dataset_id: str, *, counted: bool = True
) -> DatasetHeader | None:
    """The header, with the pairs appended to its version counted in (unless not `counted`:
    then `pair_count` and `bytes` are those of the version's write, and the counters go
    unread)."""
    key = {"pk": s(dataset_pk(tenant, kind, dataset_id)), "sk": s(HEADER_SK)}
    item = dynamo.get_item(table(), key)
    if not item:
        return None
    header = header_from_item(tenant, kind, item)
    if counted and header.appended:
        count, size = appended_counts(header)
        header.pair_count += count
        if header.bytes is not None:
            header.bytes += size
    return header


def appended_counts(header: DatasetHeader) -> tuple[int, int]:
    """The pairs appended to the header's version, and their pair_bytes: the sum of its
    shards' counters (one batch read)."""
    keys = [{"pk": s(pk), "sk": s(COUNT_SK)} for pk in counter_pks(header)]
    counters = list(dynamo.batch_get(table(), keys))
    return sum(get_n(c, "n") for c in counters), sum(get_n(c, "b") for c in counters)


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


def existing_header(
    tenant: str, kind: DatasetKind, dataset_id: str, *, counted: bool = True
) -> DatasetHeader:
    header = get_header(tenant, kind, dataset_id, counted=counted)
    if header is None:
        raise NotFound(f"no {kind.value} dataset with id {dataset_id!r}")
    return header


def _ord(item: Item) -> str:
    return str(item["ord"]["S"])


def _query_pairs(
    header: DatasetHeader,
    *,
    limit: int | None = None,
    after: PageCursor | None = None,
    since_ord: str | None = None,
    until_ord: str | None = None,
    labels: Sequence[str] = (),
    newest_first: bool = False,
    keys_only: bool = False,
    page_bytes: int | None = None,
    budget_bytes: int | None = None,
    members: Collection[bytes] | None = None,
    sizes: list[int] | None = None,
    documented: list[int] | None = None,
) -> tuple[list[Pair], list[str], bool]:
    """Pairs of `header`'s version (from `since_ord` on and up to `until_ord`, when given; only
    those carrying every one of `labels`, and with `members` only those whose ord's fingerprint
    is among them), oldest first unless `newest_first`, at most `limit`, after `after`, and no
    more than make `page_bytes` (as listed: pair_bytes and LISTED_PAIR_BYTES each; at least
    one). Returns them, their ords, and whether more follow. OverBudget as soon as they take
    more than `budget_bytes`. `keys_only` reads ids alone (the pairs come back without their
    texts). The shards that can hold the version's pairs are read as one stream in ord order
    (ords are unique)."""
    parts = [pks for pks in read_parts(header) if pks]
    if not parts:
        return [], [], False
    bounds: list[str] = []
    values: dict[str, Any] = {}
    if after is not None and until_ord is not None:
        # The least string above after.ord (ords are ASCII) up to until_ord.
        bounds.append("#ord BETWEEN :lower AND :upper")
        values.update({":lower": s(after.ord + "\x00"), ":upper": s(until_ord)})
    elif after is not None:
        bounds.append("#ord > :lower")
        values[":lower"] = s(after.ord)
    elif since_ord is not None and until_ord is not None:
        bounds.append("#ord BETWEEN :lower AND :upper")
        values.update({":lower": s(since_ord), ":upper": s(until_ord)})
    elif since_ord is not None:
        bounds.append("#ord >= :lower")
        values[":lower"] = s(since_ord)
    elif until_ord is not None:
        bounds.append("#ord <= :upper")
        values[":upper"] = s(until_ord)
    query: dict[str, Any] = {
        "TableName": table(),
        "IndexName": ORDER_INDEX,
        "KeyConditionExpression": " AND ".join(["pk = :pk", *bounds]),
        "ConsistentRead": True,
        "ScanIndexForward": not newest_first,
    }
    if bounds or keys_only:
        query["ExpressionAttributeNames"] = {"#ord": "ord"}
    if keys_only:
        query["ProjectionExpression"] = "pk, sk, #ord, b, d"
    if labels:
        names = [f":label{i}" for i in range(len(labels))]
        query["FilterExpression"] = " AND ".join(f"contains(labels, {name})" for name in names)
        values.update({name: s(label) for name, label in zip(names, labels, strict=True)})
    queries = []
    for pks in parts:
        part = dict(query)
        if limit is not None and not labels:
            # DynamoDB applies Limit before a filter: with labels, pages are read by size.
            # Without, each shard of a part (written, appended) holds about 1/shards of any run
            # of its ords (ids are hashed), so each is asked for twice its share first; a shard
            # the merge drains is read on from where it stopped.
            wanted = limit + 1
            share = -(-wanted // len(pks))
            part["Limit"] = wanted if len(pks) == 1 else min(wanted, 2 * share + 8)
        queries += [{**part, "ExpressionAttributeValues": {**values, ":pk": s(pk)}} for pk in pks]
    pairs: list[Pair] = []
    ords: list[str] = []
    large: list[tuple[Pair, str, int]] = []
    total = 0
    more = False
    for item in dynamo.merged_query(queries, _ord, reverse=newest_first):
        if members is not None and fingerprint(_ord(item)) not in members:
            continue  # appended after the selection was made
        if limit is not None and len(pairs) >= limit:
            more = True
            break
        if page_bytes is not None or budget_bytes is not None:
            total += listed_pair_bytes(item)
            if budget_bytes is not None and total > budget_bytes:
                raise OverBudget
            if page_bytes is not None and pairs and total > page_bytes:
                more = True
                break
        pair = pair_from_item(item)
        pairs.append(pair)
        ords.append(_ord(item))
        if sizes is not None:
            sizes.append(get_n(item, "b"))
        if documented is not None and "d" in item:
            documented.append(get_n(item, "d"))
        if "parts" in item and not keys_only:
            large.append((pair, item["pk"]["S"], get_n(item, "parts")))
    for pair, pk, part_count in large:
        load_parts(pk, pair, part_count)
    return pairs, ords, more


def read_dataset(
    tenant: str, kind: DatasetKind, dataset_id: str, max_bytes: int
) -> tuple[DatasetHeader, list[Pair]]:
    """The header and every pair, oldest first, as of one version of the dataset. TooLarge,
    before the pairs are read when the header knows their size, when they take more than
    `max_bytes`."""

    def read(header: DatasetHeader) -> list[Pair]:
        listed = (
            None if header.bytes is None else header.bytes + header.pair_count * LISTED_PAIR_BYTES
        )
        if listed is not None and listed > max_bytes:
            raise TooLarge(header)
        if header.pair_count == 0 and not header.appended:
            return []
        try:
            pairs, _, _ = _query_pairs(header, budget_bytes=max_bytes)
        except OverBudget:
            raise TooLarge(header) from None  # pairs appended since the header was read
        return pairs

    header, pairs = _read_one_version(tenant, kind, dataset_id, read)
    # The count the header gave may be behind the pairs appended while they were read.
    header.pair_count = len(pairs)
    if header.bytes is not None:
        header.bytes = sum(pair_bytes(pair) for pair in pairs)
    return header, pairs


T = TypeVar("T")


def _read_one_version(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    read: Callable[[DatasetHeader], T],
    *,
    version: str | None = None,
    counted: bool = True,
    first: DatasetHeader | None = None,
) -> tuple[DatasetHeader, T]:
    """Run `read` against the current version and return its result once the header still
    names that version afterwards (a version's pairs are deleted only after a newer one is
    installed, so the read was whole). With `version`, a newer version is a 409. `first`: the
    header as the caller just read it, taken for the first try instead of reading it again."""
    overwritten = Conflict(
        f"dataset {dataset_id!r} was overwritten since the first page; read it again from the start"
    )
    for _ in range(COMMIT_ATTEMPTS):
        header = first or existing_header(tenant, kind, dataset_id, counted=counted)
        first = None
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


def _empty(header: DatasetHeader) -> bool:
    """Whether the version surely holds no pair (appended pairs are counted after they are
    stored, so a version appended to is always read)."""
    return header.pair_count == 0 and not header.appended


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
    pages are a 409. Pairs appended meanwhile come on later pages."""

    def page(header: DatasetHeader) -> tuple[list[Pair], list[str], bool]:
        if _empty(header):
            return [], [], False
        return _query_pairs(header, limit=limit, after=after, page_bytes=max_bytes)

    # A page needs no counts (pairs appended meanwhile come on later pages): its header's are
    # those of the version's write.
    header, (pairs, ords, more) = _read_one_version(
        tenant,
        kind,
        dataset_id,
        page,
        version=after.version if after else None,
        counted=False,
    )
    return header, pairs, PageCursor(header.version, ords[-1], pairs[-1].id) if more else None


@dataclass(slots=True)
class Selected:
    """A selection as read: the header of the version it came from, the pairs in dataset order
    (ids alone when read keys only), their ords, and their pair_bytes in all."""

    header: DatasetHeader
    pairs: list[Pair]
    ords: list[str]
    bytes: int
    # E10: of the pairs, those with a reference or contexts: how many, and their pair_bytes.
    documented: tuple[int, int] = (0, 0)


def select_pairs(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    *,
    labels: Sequence[str] = (),
    since_ms: int | None = None,
    latest_n: int | None = None,
    keys_only: bool = False,
    header: DatasetHeader | None = None,
) -> Selected:
    """The pairs an evaluation scores, in dataset order, and their ords: those carrying all
    `labels`, created at or after `since_ms`, then the `latest_n` most recent of what remains.
    Key-range queries on the order index; labels are a filter on what that range reads.
    `keys_only`: ids and ords alone, without the texts. `header`: the dataset's header as the
    caller just read it (counted), not read again."""

    documented: list[int] = []

    def select(header: DatasetHeader) -> tuple[list[Pair], list[str], list[int]]:
        documented.clear()
        if _empty(header):
            return [], [], []
        sizes: list[int] = []
        pairs, ords, _ = _query_pairs(
            header,
            limit=latest_n,
            since_ord=make_ord(since_ms, 0) if since_ms is not None else None,
            labels=labels,
            newest_first=latest_n is not None,
            keys_only=keys_only,
            sizes=sizes,
            documented=documented,
        )
        if latest_n is not None:
            pairs.reverse()
            ords.reverse()
        return pairs, ords, sizes

    read, (pairs, ords, sizes) = _read_one_version(tenant, kind, dataset_id, select, first=header)
    return Selected(read, pairs, ords, sum(sizes), (len(documented), sum(documented)))


def stored_header(tenant: str, kind: DatasetKind, dataset_id: str, stored: Stored) -> DatasetHeader:
    """A header that reads the pairs of one version (`stored`), current or not: its counts,
    times and prompt are not known."""
    return DatasetHeader(
        tenant=tenant,
        kind=kind,
        dataset_id=dataset_id,
        system_prompt="",
        created_ms=0,
        updated_ms=0,
        version=stored.version,
        pair_count=0,
        shards=stored.shards,
        append_shards=stored.append_shards,
        appended=stored.append_shards > 0,
    )


def range_page(
    header: DatasetHeader,
    first_ord: str,
    last_ord: str,
    members: Collection[bytes] | None,
    *,
    after_ord: str | None,
    limit: int,
    page_bytes: int,
    keys_only: bool = False,
) -> tuple[list[Pair], list[str], bool]:
    """A page of the pairs of the header's version (stored_header) with `first_ord` <= ord <=
    `last_ord` whose ords' fingerprints are among `members` (None: every pair of the range),
    after `after_ord` when given, in dataset order: at most `limit`, and no more than make
    `page_bytes` as listed (at least one). Returns them, their ords and whether more of the
    range follow. TornRead when a pair's parts went while it was read."""
    after = None if after_ord is None else PageCursor(header.version, after_ord, "")
    return _query_pairs(
        header,
        after=after,
        since_ord=first_ord,
        until_ord=last_ord,
        members=members,
        limit=limit,
        page_bytes=page_bytes,
        keys_only=keys_only,
    )


def read_runs(
    header: DatasetHeader,
    runs: Sequence[tuple[str, str, Collection[bytes]]],
    *,
    keys_only: bool = False,
) -> tuple[list[Pair], list[str], int]:
    """The pairs of the header's version (stored_header) in each run (first ord, last ord, the
    fingerprints of the ords taken), in dataset order: the pairs (ids alone when `keys_only`),
    their ords and their pair_bytes in all. TornRead when a pair's parts went while it was
    read."""
    pairs: list[Pair] = []
    ords: list[str] = []
    sizes: list[int] = []
    for first, last, members in runs:
        got, got_ords, _ = _query_pairs(
            header,
            since_ord=first,
            until_ord=last,
            members=members,
            keys_only=keys_only,
            sizes=sizes,
        )
        pairs += got
        ords += got_ords
    return pairs, ords, sum(sizes)


def read_range(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    stored: Stored,
    first_ord: str,
    last_ord: str,
    members: Collection[bytes] | None,
    labels: Sequence[str] = (),
) -> list[Pair]:
    """The pairs of one version of a dataset (`stored`: the version and the shards its
    selection read, keys.stored_as_read) with `first_ord` <= ord <= `last_ord` that carry every
    one of `labels` and whose ord's fingerprint is among `members` (those a selection took: a
    pair appended later can fall in the range; None takes every pair of the range), in dataset
    order. A version that was since replaced may be part-way deleted: callers compare the count
    with what they expect."""
    header = stored_header(tenant, kind, dataset_id, stored)
    try:
        pairs, _, _ = _query_pairs(
            header, since_ord=first_ord, until_ord=last_ord, labels=labels, members=members
        )
    except TornRead:
        return []
    return pairs


def _pair_keys(header: DatasetHeader, pair_ids: Sequence[str]) -> list[Item]:
    """The keys where the pairs of `pair_ids` can be in the header's version (each is under
    one of its keys at most)."""
    return [
        {"pk": s(pk), "sk": s(f"p#{pid}")}
        for pid in dict.fromkeys(pair_ids)
        for pk in pair_pks(header, pid)
    ]


def get_pairs(header: DatasetHeader, pair_ids: Sequence[str], max_bytes: int) -> dict[str, Pair]:
    """The pairs among `pair_ids` in the header's version (absent ids are missing), by id; a
    TooLarge once they take more than `max_bytes` of text (known from each pair's byte count
    before its parts are read)."""
    found: dict[str, Pair] = {}
    total = 0
    for item in dynamo.batch_get(table(), _pair_keys(header, pair_ids)):
        total += get_n(item, "b")
        if total > max_bytes:
            raise TooLarge(header)
        pair = pair_from_item(item)
        if "parts" in item:
            load_parts(item["pk"]["S"], pair, get_n(item, "parts"))
        found[pair.id] = pair
    return found


def get_pairs_within(
    header: DatasetHeader, pair_ids: Sequence[str], max_bytes: int
) -> tuple[dict[str, Pair], set[str]]:
    """The pairs among `pair_ids` in the header's version, by id, as far as `max_bytes` of text
    goes: a pair that would take them past it is left out (its parts unread) and its id
    returned in the second set. Absent ids are in neither, nor is a pair whose parts went with
    its version while it was read."""
    found: dict[str, Pair] = {}
    skipped: set[str] = set()
    total = 0
    for item in dynamo.batch_get(table(), _pair_keys(header, pair_ids)):
        size = get_n(item, "b")
        if total + size > max_bytes:
            skipped.add(item["sk"]["S"][2:])
            continue
        total += size
        pair = pair_from_item(item)
        if "parts" in item:
            try:
                load_parts(item["pk"]["S"], pair, get_n(item, "parts"))
            except TornRead:
                continue  # its version is being replaced: the pair is on its way out
        found[pair.id] = pair
    return found, skipped
