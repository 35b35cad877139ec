"""The datasets table: dataset headers, pairs, and the pointers that find a tenant's latest
dataset and the dataset of a system prompt.

Layout (every key starts with the tenant, so one tenant can never address another's items):

    pk                                  sk              what
    T#<tenant>#<kind>#<id>              dataset         header: version, pair_count, last_ord…
    T#<tenant>#<kind>#<id>#v#<version>  p#<pair_id>     one pair; `ord` sorts it (LSI by_order)
    T#<tenant>#<kind>#<id>#v#<version>  x#<pair_id>#k   part k of a pair too large for one item
    T#<tenant>#latest#<kind>            pointer         the tenant's most recently created dataset
    T#<tenant>#prompt#<sha256>          pointer         the dataset written with that system prompt

A dataset's pairs live under its current `version`. An overwrite writes the new pairs under a
fresh version and then flips the header in one conditional transaction, so readers see the old
dataset or the new one, and a failure before the flip leaves the old one intact. The old
version's pairs are deleted after the flip.

`ord` is `<ms:013d>#<seq:08d>`: creation time, then order within the write. It grows with
every pair added, so "newest N pairs" and "created in the last N seconds" are key-range
queries on the index, and a reader can tell a complete read (every pair with `ord <= last_ord`
counted) from one that raced with the deletion of an old version.
"""

from __future__ import annotations

import hashlib
import json
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from evalsvc import backoff
from evalsvc.errors import Conflict, NotFound, PayloadTooLarge, StorageUnavailable
from evalsvc.identifiers import new_id, now_ms
from evalsvc.models.datasets import (
    MAX_PAIRS,
    DatasetHeader,
    DatasetKind,
    PageCursor,
    Pair,
    pair_bytes,
)
from evalsvc.observability import logger
from evalsvc.settings import get_settings
from evalsvc.storage import dynamo, texts
from evalsvc.storage.dynamo import Item, get_list, get_n, get_s, n, s

HEADER_SK = "dataset"
POINTER_SK = "pointer"
ORDER_INDEX = "by_order"
# Pairs whose stored form is larger than this are compressed and split into part items, so no
# pair ever meets DynamoDB's 400 KB item limit.
INLINE_LIMIT = 300_000
PART_BYTES = 350_000
_COMMIT_ATTEMPTS = 10


def _backoff(attempt: int) -> None:
    """Jittered pause before retrying a write that lost a race for the dataset header."""
    if attempt:
        time.sleep(backoff.delay(attempt, 0.02, 0.5))


def _table() -> str:
    return get_settings().datasets_table


def dataset_pk(tenant: str, kind: DatasetKind, dataset_id: str) -> str:
    return f"T#{tenant}#{kind.value}#{dataset_id}"


def version_pk(tenant: str, kind: DatasetKind, dataset_id: str, version: str) -> str:
    return f"{dataset_pk(tenant, kind, dataset_id)}#v#{version}"


def latest_pk(tenant: str, kind: DatasetKind) -> str:
    return f"T#{tenant}#latest#{kind.value}"


def prompt_hash(system_prompt: str) -> str:
    return hashlib.sha256(system_prompt.encode()).hexdigest()


def prompt_pk(tenant: str, system_prompt: str) -> str:
    return f"T#{tenant}#prompt#{prompt_hash(system_prompt)}"


def make_ord(ms: int, seq: int) -> str:
    return f"{ms:013d}#{seq:08d}"


def split_ord(ord_: str) -> tuple[int, int]:
    ms, seq = ord_.split("#")
    return int(ms), int(seq)


def next_ord(last_ord: str, at_ms: int) -> str:
    """The ord of a pair added after `last_ord`: never earlier, even if clocks disagree."""
    if not last_ord:
        return make_ord(at_ms, 0)
    last_ms, last_seq = split_ord(last_ord)
    if at_ms > last_ms:
        return make_ord(at_ms, 0)
    return make_ord(last_ms, last_seq + 1)


# ---- encoding ----------------------------------------------------------------------------------


def _header_from_item(tenant: str, kind: DatasetKind, item: Item) -> DatasetHeader:
    return DatasetHeader(
        tenant=tenant,
        kind=kind,
        dataset_id=get_s(item, "dataset_id") or "",
        system_prompt=texts.read_text(_table(), tenant, item, "system_prompt"),
        created_ms=get_n(item, "created_ms"),
        updated_ms=get_n(item, "updated_ms"),
        version=get_s(item, "version") or "",
        pair_count=get_n(item, "pair_count"),
        last_ord=get_s(item, "last_ord", "") or "",
        bytes=get_n(item, "bytes") if "bytes" in item else None,
    )


def prompt_field(tenant: str, system_prompt: str) -> Item:
    """The attributes that keep a header's system prompt (a long one is stored apart)."""
    return texts.text_field(_table(), tenant, "system_prompt", system_prompt)


def _header_item(header: DatasetHeader, prompt: Item | None = None) -> Item:
    """The header's item; `prompt` is prompt_field of its system prompt when already made."""
    item: Item = {
        "pk": s(dataset_pk(header.tenant, header.kind, header.dataset_id)),
        "sk": s(HEADER_SK),
        "dataset_id": s(header.dataset_id),
        **(prompt or prompt_field(header.tenant, header.system_prompt)),
        "created_ms": n(header.created_ms),
        "updated_ms": n(header.updated_ms),
        "version": s(header.version),
        "pair_count": n(header.pair_count),
        "last_ord": s(header.last_ord),
    }
    if header.bytes is not None:
        item["bytes"] = n(header.bytes)
    return item


def _pair_body(pair: Pair) -> dict[str, Any]:
    body: dict[str, Any] = {"input": pair.input, "output": pair.output}
    if pair.input_media is not None:
        body["input_media"] = pair.input_media
    if pair.system_prompt_template is not None:
        body["system_prompt_template"] = pair.system_prompt_template
    return body


def _pair_items(pk: str, pair: Pair, ord_: str) -> list[Item]:
    """The item (and, for a very large pair, the part items) that store `pair`."""
    head: Item = {"pk": s(pk), "sk": s(f"p#{pair.id}"), "ord": s(ord_), "b": n(pair_bytes(pair))}
    if pair.labels:
        head["labels"] = dynamo.ss_list(pair.labels)
    body = _pair_body(pair)
    # Characters are at most 4 bytes of UTF-8: count exactly only when that bound is too big.
    size = sum(len(v) for v in body.values()) * 4
    if size >= INLINE_LIMIT:
        size = sum(len(v.encode()) for v in body.values())
    if size < INLINE_LIMIT:
        head.update({k: s(v) for k, v in body.items()})
        return [head]
    blob = zlib.compress(json.dumps(body, separators=(",", ":")).encode(), 6)
    parts = [blob[i : i + PART_BYTES] for i in range(0, len(blob), PART_BYTES)]
    head["parts"] = n(len(parts))
    return [head] + [
        {"pk": s(pk), "sk": s(f"x#{pair.id}#{k:04d}"), "blob": {"B": part}}
        for k, part in enumerate(parts)
    ]


# What listing a pair in a response adds to its texts: keys, quotes, created_at, its metadata.
LISTED_PAIR_BYTES = 120


def _listed_pair_bytes(item: Item) -> int:
    """What the pair a head item stores takes in a listing: pair_bytes (estimated for one
    written before it was kept: its texts, or its compressed parts at most 4 times over) and
    LISTED_PAIR_BYTES."""
    if "b" in item:
        return get_n(item, "b") + LISTED_PAIR_BYTES
    return dynamo.item_size(item) + get_n(item, "parts") * PART_BYTES * 4 + LISTED_PAIR_BYTES


def _pair_from_item(item: Item) -> Pair:
    return Pair(
        id=item["sk"]["S"][2:],
        input=get_s(item, "input", "") or "",
        output=get_s(item, "output", "") or "",
        labels=get_list(item, "labels"),
        input_media=get_s(item, "input_media"),
        system_prompt_template=get_s(item, "system_prompt_template"),
        created_ms=split_ord(item["ord"]["S"])[0],
    )


def _load_parts(pk: str, pair: Pair, part_count: int) -> None:
    prefix = f"x#{pair.id}#"
    chunks = [
        item["blob"]["B"]
        for item in dynamo.query_items(
            TableName=_table(),
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": s(pk), ":prefix": s(prefix)},
            ConsistentRead=True,
        )
    ]
    if len(chunks) != part_count:
        raise _TornRead
    body = json.loads(zlib.decompress(b"".join(chunks)))
    pair.input = body["input"]
    pair.output = body["output"]
    pair.input_media = body.get("input_media")
    pair.system_prompt_template = body.get("system_prompt_template")


class _TornRead(Exception):
    """A read raced with the deletion of the version it was reading."""


class OverBudget(Exception):
    """A read passed the bytes it may hold."""


class TooLarge(Exception):
    """The dataset takes more bytes than the read may hold; `header` says how large it is."""

    def __init__(self, header: DatasetHeader) -> None:
        super().__init__(header.dataset_id)
        self.header = header


# ---- reads -------------------------------------------------------------------------------------


def get_header(tenant: str, kind: DatasetKind, dataset_id: str) -> DatasetHeader | None:
    key = {"pk": s(dataset_pk(tenant, kind, dataset_id)), "sk": s(HEADER_SK)}
    item = dynamo.get_item(_table(), key)
    return _header_from_item(tenant, kind, item) if item else None


def current_version(tenant: str, kind: DatasetKind, dataset_id: str) -> str | None:
    """The version the header names (None without a dataset): one small read."""
    response = dynamo.call(
        "get_item",
        TableName=_table(),
        Key={"pk": s(dataset_pk(tenant, kind, dataset_id)), "sk": s(HEADER_SK)},
        ConsistentRead=True,
        ProjectionExpression="version",
    )
    item = response.get("Item")
    return get_s(item, "version") if item else None


def _existing_header(tenant: str, kind: DatasetKind, dataset_id: str) -> DatasetHeader:
    header = get_header(tenant, kind, dataset_id)
    if header is None:
        raise NotFound(f"no {kind.value} dataset with id {dataset_id!r}")
    return header


def latest_dataset_id(tenant: str, kind: DatasetKind) -> str | None:
    item = dynamo.get_item(_table(), {"pk": s(latest_pk(tenant, kind)), "sk": s(POINTER_SK)})
    return get_s(item, "dataset_id") if item else None


def dataset_id_for_prompt(tenant: str, system_prompt: str) -> str | None:
    key = {"pk": s(prompt_pk(tenant, system_prompt)), "sk": s(POINTER_SK)}
    item = dynamo.get_item(_table(), key)
    return get_s(item, "dataset_id") if item else None


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
        "TableName": _table(),
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
                total += _listed_pair_bytes(item)
                if budget_bytes is not None and total > budget_bytes:
                    raise OverBudget
                if page_bytes is not None and pairs and total > page_bytes:
                    break
            pair = _pair_from_item(item)
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
        _load_parts(pk, pair, part_count)
    return pairs, ords


def read_dataset(
    tenant: str, kind: DatasetKind, dataset_id: str, max_bytes: int
) -> tuple[DatasetHeader, list[Pair]]:
    """The header and every pair, oldest first, as of one version of the dataset. TooLarge,
    before the pairs are read when the header knows their size, when they take more than
    `max_bytes`."""
    for _ in range(_COMMIT_ATTEMPTS):
        header = _existing_header(tenant, kind, dataset_id)
        listed = (
            None if header.bytes is None else header.bytes + header.pair_count * LISTED_PAIR_BYTES
        )
        if listed is not None and listed > max_bytes:
            raise TooLarge(header)
        if header.pair_count == 0:
            return header, []
        try:
            pairs, _ = _query_pairs(header, budget_bytes=max_bytes)
        except _TornRead:
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
    for _ in range(_COMMIT_ATTEMPTS):
        header = _existing_header(tenant, kind, dataset_id)
        if version is not None and header.version != version:
            raise overwritten
        try:
            result = read(header)
        except _TornRead:
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
    except _TornRead:
        return []
    return pairs


# ---- writes ------------------------------------------------------------------------------------


def _put_requests(pk: str, pairs: Sequence[Pair], ms: int) -> list[Item]:
    requests: list[Item] = []
    for seq, pair in enumerate(pairs):
        pair.created_ms = ms
        requests.extend(
            {"PutRequest": {"Item": item}} for item in _pair_items(pk, pair, make_ord(ms, seq))
        )
    return requests


def _delete_version(tenant: str, kind: DatasetKind, dataset_id: str, version: str) -> None:
    pk = version_pk(tenant, kind, dataset_id, version)
    keys = list(
        dynamo.query_items(
            TableName=_table(),
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": s(pk)},
            ProjectionExpression="pk, sk",
        )
    )
    dynamo.batch_write(_table(), [{"DeleteRequest": {"Key": key}} for key in keys])


def write_dataset(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    pairs: Sequence[Pair],
    system_prompt: str,
    *,
    is_new: bool = False,
    on_progress: Callable[[int], None] | None = None,
) -> DatasetHeader:
    """Insert the dataset, or atomically replace it. `is_new` skips the read of an existing
    header when the id was just made by the server. Returns the committed header."""
    ms = now_ms()
    previous = None if is_new else get_header(tenant, kind, dataset_id)
    version = new_id()
    pk = version_pk(tenant, kind, dataset_id, version)
    requests = _put_requests(pk, pairs, ms)
    try:
        dynamo.batch_write(_table(), requests, on_progress=on_progress)
        return _commit(tenant, kind, dataset_id, version, pairs, system_prompt, ms, previous)
    except BaseException:
        installed = _installed(tenant, kind, dataset_id, version)
        if installed is None:
            _discard_version(tenant, kind, dataset_id, version)
            raise
        # The commit went through though its answer was lost (a timeout, a connection reset):
        # the new version stands, and the one it replaced goes.
        logger.warning("a dataset commit succeeded unanswered", extra={"id": dataset_id})
        if previous is not None:
            _discard_version(tenant, kind, dataset_id, previous.version)
        return installed


def _installed(
    tenant: str, kind: DatasetKind, dataset_id: str, version: str
) -> DatasetHeader | None:
    """The header, if it names `version`. Raises (discarding nothing) when that cannot be
    read: a version that may be installed is never deleted."""
    header = get_header(tenant, kind, dataset_id)
    return header if header is not None and header.version == version else None


def _discard_version(tenant: str, kind: DatasetKind, dataset_id: str, version: str) -> None:
    try:
        _delete_version(tenant, kind, dataset_id, version)
    except Exception:
        logger.exception(
            "could not remove the pairs of an abandoned write", extra={"id": dataset_id}
        )


def put_version_pairs(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    version: str,
    pairs: Sequence[Pair],
    ms: int,
    first_seq: int,
) -> None:
    """Write `pairs` under a version not yet installed, at sequence numbers `first_seq`... of
    its write time `ms` (a queued write fills its version a chunk at a time; writing a chunk
    again overwrites the same items)."""
    pk = version_pk(tenant, kind, dataset_id, version)
    requests: list[Item] = []
    for offset, pair in enumerate(pairs):
        pair.created_ms = ms
        ord_ = make_ord(ms, first_seq + offset)
        requests.extend({"PutRequest": {"Item": item}} for item in _pair_items(pk, pair, ord_))
    dynamo.batch_write(_table(), requests)


def install_actions(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    version: str,
    pair_count: int,
    pair_bytes: int,
    system_prompt: str,
    ms: int,
) -> list[Item]:
    """The transaction actions that make the new dataset of the `pair_count` pairs
    (`pair_bytes` in all) put under `version` (put_version_pairs) exist, as the tenant's latest
    of its kind; they fail when the dataset exists already."""
    header = DatasetHeader(
        tenant=tenant,
        kind=kind,
        dataset_id=dataset_id,
        system_prompt=system_prompt,
        created_ms=ms,
        updated_ms=ms,
        version=version,
        pair_count=pair_count,
        last_ord=make_ord(ms, pair_count - 1) if pair_count else "",
        bytes=pair_bytes,
    )
    put = {
        "TableName": _table(),
        "Item": _header_item(header),
        "ConditionExpression": "attribute_not_exists(pk)",
    }
    return [{"Put": put}, {"Put": _latest_pointer(tenant, kind, dataset_id, ms)}]


def discard_version(tenant: str, kind: DatasetKind, dataset_id: str, version: str) -> None:
    """Delete the pairs of a version that will never be installed (best effort)."""
    _discard_version(tenant, kind, dataset_id, version)


def _commit(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    version: str,
    pairs: Sequence[Pair],
    system_prompt: str,
    ms: int,
    previous: DatasetHeader | None,
) -> DatasetHeader:
    """Flip the header to `version` (last writer wins), then delete the replaced version."""
    prompt = prompt_field(tenant, system_prompt)
    for attempt in range(_COMMIT_ATTEMPTS):
        _backoff(attempt)
        header = DatasetHeader(
            tenant=tenant,
            kind=kind,
            dataset_id=dataset_id,
            system_prompt=system_prompt,
            created_ms=previous.created_ms if previous else ms,
            updated_ms=ms,
            version=version,
            pair_count=len(pairs),
            last_ord=make_ord(ms, len(pairs) - 1) if pairs else "",
            bytes=sum(pair_bytes(pair) for pair in pairs),
        )
        put: dict[str, Any] = {"TableName": _table(), "Item": _header_item(header, prompt)}
        if previous is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "version = :version"
            put["ExpressionAttributeValues"] = {":version": s(previous.version)}
        actions: list[Item] = [{"Put": put}]
        if previous is None:
            actions.append({"Put": _latest_pointer(tenant, kind, dataset_id, ms)})
        if kind is DatasetKind.SEED and system_prompt:
            actions.append({"Put": _prompt_pointer(tenant, system_prompt, dataset_id)})
        try:
            dynamo.call("transact_write_items", TransactItems=actions)
        except ClientError as exc:
            if dynamo.failed_conditions(exc) is None:
                raise
            previous = get_header(tenant, kind, dataset_id)
            if previous is not None and previous.version == version:
                return previous  # an earlier attempt of this write committed it
            continue
        if previous is not None:
            _discard_version(tenant, kind, dataset_id, previous.version)
        return header
    raise StorageUnavailable(f"dataset {dataset_id!r} is being written concurrently; retry")


def _latest_pointer(tenant: str, kind: DatasetKind, dataset_id: str, ms: int) -> Item:
    item = {"pk": s(latest_pk(tenant, kind)), "sk": s(POINTER_SK), "dataset_id": s(dataset_id)}
    return {"TableName": _table(), "Item": {**item, "created_ms": n(ms)}}


def _prompt_pointer(
    tenant: str,
    system_prompt: str,
    dataset_id: str,
    *,
    replacing: str | None = None,
    claim: bool = False,
) -> Item:
    put: Item = {
        "TableName": _table(),
        "Item": {
            "pk": s(prompt_pk(tenant, system_prompt)),
            "sk": s(POINTER_SK),
            "dataset_id": s(dataset_id),
        },
    }
    if claim:
        if replacing is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "attribute_not_exists(pk) OR dataset_id = :stale"
            put["ExpressionAttributeValues"] = {":stale": s(replacing)}
    return put


class PromptMismatch(Exception):
    """The dataset's system prompt is no longer the one the pair was filed under."""


def add_pair(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    pair: Pair,
    *,
    expected_prompt: str | None = None,
) -> DatasetHeader:
    """Append one pair to the current version. 404 if the dataset does not exist, 409 if the
    pair id is taken, 413 when the dataset is full. With `expected_prompt`, raise
    PromptMismatch unless the dataset's system prompt is exactly that."""
    for attempt in range(_COMMIT_ATTEMPTS):
        _backoff(attempt)
        header = _existing_header(tenant, kind, dataset_id)
        if expected_prompt is not None and header.system_prompt != expected_prompt:
            raise PromptMismatch
        if header.pair_count >= MAX_PAIRS:
            raise PayloadTooLarge(
                f"dataset {dataset_id!r} already holds {MAX_PAIRS} pairs, the limit"
            )
        ms = now_ms()
        ord_ = next_ord(header.last_ord, ms)
        pair.created_ms = split_ord(ord_)[0]
        pk = version_pk(tenant, kind, dataset_id, header.version)
        items = _pair_items(pk, pair, ord_)
        added = pair_bytes(pair)
        # A header written before sizes were kept has none to add to: it stays unknown.
        counts = "pair_count :one, bytes :bytes" if header.bytes is not None else "pair_count :one"
        values = {
            ":new_ord": s(ord_),
            ":ms": n(ms),
            ":one": n(1),
            ":version": s(header.version),
            ":last_ord": s(header.last_ord),
        }
        if header.bytes is not None:
            values[":bytes"] = n(added)
        update = {
            "Update": {
                "TableName": _table(),
                "Key": {"pk": s(dataset_pk(tenant, kind, dataset_id)), "sk": s(HEADER_SK)},
                "UpdateExpression": f"SET last_ord = :new_ord, updated_ms = :ms ADD {counts}",
                "ConditionExpression": "version = :version AND last_ord = :last_ord",
                "ExpressionAttributeValues": values,
            }
        }
        puts = [
            {
                "Put": {
                    "TableName": _table(),
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(sk)",
                }
            }
            for item in items
        ]
        try:
            dynamo.call("transact_write_items", TransactItems=[update, *puts])
        except (ClientError, StorageUnavailable) as exc:
            cancelled = isinstance(exc, ClientError) and (
                dynamo.error_code(exc) == "TransactionCanceledException"
            )
            if not cancelled:
                # No answer is not no write: the transaction may have committed.
                if not _pair_written(pk, pair.id, ord_):
                    raise
                logger.warning("a pair addition succeeded unanswered", extra={"id": dataset_id})
            else:
                assert isinstance(exc, ClientError)
                failed = dynamo.failed_conditions(exc)
                if failed is None or 0 in failed:
                    # The header moved on (another pair, an overwrite) or a concurrent
                    # transaction held it: try again.
                    continue
                raise Conflict(
                    f"pair id {pair.id!r} already exists in dataset {dataset_id!r}"
                ) from exc
        header.pair_count += 1
        header.last_ord = ord_
        if header.bytes is not None:
            header.bytes += added
        return header
    raise StorageUnavailable(f"dataset {dataset_id!r} is being written concurrently; retry")


def _pair_written(pk: str, pair_id: str, ord_: str) -> bool:
    """Whether the pair is stored under `pk` with order key `ord_` (this very addition)."""
    item = dynamo.get_item(_table(), {"pk": s(pk), "sk": s(f"p#{pair_id}")})
    return item is not None and get_s(item, "ord") == ord_


def create_for_prompt(
    tenant: str, dataset_id: str, system_prompt: str, stale_id: str | None
) -> bool:
    """Create an empty seed dataset that owns `system_prompt`. False when another dataset claimed
    the prompt first (the caller then files the pair there)."""
    ms = now_ms()
    header = DatasetHeader(
        tenant=tenant,
        kind=DatasetKind.SEED,
        dataset_id=dataset_id,
        system_prompt=system_prompt,
        created_ms=ms,
        updated_ms=ms,
        version=new_id(),
        pair_count=0,
        last_ord="",
        bytes=0,
    )
    actions = [
        {
            "Put": {
                "TableName": _table(),
                "Item": _header_item(header),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {"Put": _latest_pointer(tenant, DatasetKind.SEED, dataset_id, ms)},
        {"Put": _prompt_pointer(tenant, system_prompt, dataset_id, replacing=stale_id, claim=True)},
    ]
    try:
        dynamo.call("transact_write_items", TransactItems=actions)
    except ClientError as exc:
        if dynamo.failed_conditions(exc) is not None:
            return False
        raise
    return True
