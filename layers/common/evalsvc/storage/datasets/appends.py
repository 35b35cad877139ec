"""Adding one pair to a dataset, and creating the empty dataset that owns a system prompt.

An append touches no item that other appends write: the pair goes to its append shard under its
own key (conditional on its id being new there), its order key is its time and id (append_ord),
and the shard's counter takes it with an unconditional ADD. The pairs written with the version
are in shards of their own, fixed once it is installed: one read before the put sees that the
id is not among them. The header is only read: once before (the version, the limit) and once
after, to see that no overwrite installed a newer version while the pair was stored. See
docs/design.md, "Appends"."""

from __future__ import annotations

import functools
from collections.abc import Callable

from botocore.exceptions import ClientError

from evalsvc.core.errors import Conflict, PayloadTooLarge, StorageUnavailable
from evalsvc.core.identifiers import new_id, now_ms
from evalsvc.core.observability import logger
from evalsvc.models.datasets import (
    MAX_PAIRS,
    DatasetHeader,
    DatasetKind,
    Pair,
    pair_bytes,
)
from evalsvc.storage import dynamo
from evalsvc.storage.datasets.codec import header_item, pair_items
from evalsvc.storage.datasets.keys import (
    COMMIT_ATTEMPTS,
    COUNT_SK,
    HEADER_SK,
    append_ord,
    append_shards_for,
    appended_pk,
    counter_pks,
    dataset_pk,
    pause,
    table,
    written_pk,
)
from evalsvc.storage.datasets.pointers import latest_pointer, prompt_pointer
from evalsvc.storage.datasets.reads import current_version, existing_header
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s


class PairTaken(Conflict):
    """The pair's id is taken in the dataset (stored before, or being stored by another
    request)."""


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
    pair id is taken, 413 when the dataset is full (checked before the pair is stored: appends
    running at once can pass the limit by as many as are running). With `expected_prompt`,
    raise PromptMismatch unless the dataset's system prompt is exactly that."""
    for attempt in range(COMMIT_ATTEMPTS):
        pause(attempt)
        header = existing_header(tenant, kind, dataset_id, counted=False)
        if expected_prompt is not None and header.system_prompt != expected_prompt:
            raise PromptMismatch
        pk = appended_pk(header, pair.id)
        taken = _count_and_check(header, pk, pair.id)
        if header.pair_count >= MAX_PAIRS:
            raise PayloadTooLarge(
                f"dataset {dataset_id!r} already holds {MAX_PAIRS} pairs, the limit"
            )
        if taken:
            raise _taken(pair.id, dataset_id)
        # The first append of a version marks the header first, so no reader can miss its
        # counters and append shards.
        if not header.appended and not _mark_appended(header):
            continue  # overwritten since it was read
        ms = now_ms()
        ord_ = append_ord(ms, pair.id)
        pair.created_ms = ms
        items = _store(pk, pair, ord_, dataset_id)
        added = pair_bytes(pair)
        _count(pk, added, dataset_id)
        if current_version(tenant, kind, dataset_id) == header.version:
            header.pair_count += 1
            if header.bytes is not None:
                header.bytes += added
            return header
        # An overwrite installed a newer version while the pair was stored: it may have gone
        # into the old version after that stopped being read. Take it out and add it to the new.
        logger.info(
            "dataset overwritten during a pair addition; adding again", extra={"id": dataset_id}
        )
        _withdraw(items)
    raise StorageUnavailable(f"dataset {dataset_id!r} is being written concurrently; retry")


def _count_and_check(header: DatasetHeader, pk: str, pair_id: str) -> bool:
    """Add the pairs appended to the header's version (read uncounted) to its counts, and tell
    whether `pair_id` is taken where the conditional put of the append cannot see it: among the
    pairs written with the version (in shards of their own, never written once it is
    installed), and, before the version's first append marks its header, under `pk` itself (so
    that a 409 writes nothing). One BatchGetItem of what is needed, or no call."""
    wanted: list[Item] = []
    if header.appended:
        wanted += [{"pk": s(key), "sk": s(COUNT_SK)} for key in counter_pks(header)]
    pair_sk = s(f"p#{pair_id}")
    written = written_pk(header, pair_id) if header.append_shards else None
    if written is not None:
        wanted.append({"pk": s(written), "sk": pair_sk})
    if not header.appended:
        wanted.append({"pk": s(pk), "sk": pair_sk})
    taken = False
    for item in dynamo.batch_get(table(), wanted):
        if item["sk"]["S"] != COUNT_SK:
            taken = True
            continue
        header.pair_count += get_n(item, "n")
        if header.bytes is not None:
            header.bytes += get_n(item, "b")
    return taken


def _taken(pair_id: str, dataset_id: str) -> PairTaken:
    return PairTaken(f"pair id {pair_id!r} already exists in dataset {dataset_id!r}")


def _mark_appended(header: DatasetHeader) -> bool:
    """Note on the header, once per version, that pairs are appended to it (readers then add
    its counters). False when the header no longer names that version."""
    try:
        marked = dynamo.conditional(
            "update_item",
            TableName=table(),
            Key={
                "pk": s(dataset_pk(header.tenant, header.kind, header.dataset_id)),
                "sk": s(HEADER_SK),
            },
            UpdateExpression="SET appended = :yes",
            ConditionExpression="version = :version",
            ExpressionAttributeValues={":yes": {"BOOL": True}, ":version": s(header.version)},
        )
    except ClientError as exc:
        if dynamo.error_code(exc) != "TransactionConflictException":
            raise
        return False  # an overwrite is committing: read the header again
    return marked is not None


def _store(pk: str, pair: Pair, ord_: str, dataset_id: str) -> list[Item]:
    """Store the pair's items under `pk` if its id is new there (and return them); Conflict if
    it is not."""
    items = pair_items(pk, pair, ord_)
    puts: list[Item] = [
        {"TableName": table(), "Item": item, "ConditionExpression": "attribute_not_exists(sk)"}
        for item in items
    ]
    taken = _taken(pair.id, dataset_id)
    try:
        if len(puts) == 1:
            dynamo.call("put_item", **puts[0])
        elif not dynamo.transact([{"Put": put} for put in puts]):
            raise taken
    except ClientError as exc:
        if dynamo.failed_conditions(exc) is not None:
            raise taken from exc
        if dynamo.error_code(exc) == "TransactionConflictException":
            raise PairTaken(
                f"pair id {pair.id!r} is being added to dataset {dataset_id!r} by another request"
            ) from exc
        if not _stored(pk, pair.id, ord_):
            raise
        logger.warning("a pair addition succeeded unanswered", extra={"id": dataset_id})
    except StorageUnavailable:
        # No answer is not no write: the pair may be stored.
        if not _stored(pk, pair.id, ord_):
            raise
        logger.warning("a pair addition succeeded unanswered", extra={"id": dataset_id})
    return items


def add_new_pairs(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    pairs: list[Pair],
    out_of_time: Callable[[], bool],
) -> list[Pair]:
    """Append those of `pairs` (distinct ids) whose ids the dataset does not hold yet, through
    the same contention-free appends as add_pair, and return them: a pair sent again adds
    nothing. The header is read twice for all of them, the taken ids and the counters in one
    BatchGetItem per 100, each pair is one conditional put (its parts one transaction), and
    each append shard's counter one ADD. StorageUnavailable when `out_of_time` says so between
    steps: what was stored stays, and is skipped when sent again."""
    for attempt in range(COMMIT_ATTEMPTS):
        pause(attempt)
        header = existing_header(tenant, kind, dataset_id, counted=False)
        pks = {pair.id: appended_pk(header, pair.id) for pair in pairs}
        taken = _count_and_check_all(header, pairs)
        fresh = [pair for pair in pairs if pair.id not in taken]
        if header.pair_count + len(fresh) > MAX_PAIRS:
            raise PayloadTooLarge(
                f"dataset {dataset_id!r} holds {header.pair_count} pairs: {len(fresh)} more "
                f"would pass the limit of {MAX_PAIRS}"
            )
        if not fresh:
            return []
        if not header.appended and not _mark_appended(header):
            continue  # overwritten since it was read
        if out_of_time():
            raise no_time()
        store = functools.partial(_store_new, pks, now_ms(), dataset_id)
        stored = [
            (pair, items)
            for pair, items in zip(fresh, dynamo.in_parallel(store, fresh), strict=True)
            if items is not None
        ]
        counted: dict[str, tuple[int, int]] = {}
        for pair, _ in stored:
            count, size = counted.get(pks[pair.id], (0, 0))
            counted[pks[pair.id]] = (count + 1, size + pair_bytes(pair))
        for pk, (count, size) in counted.items():
            _count(pk, size, dataset_id, pairs=count)
        if current_version(tenant, kind, dataset_id) == header.version:
            return [pair for pair, _ in stored]
        logger.info(
            "dataset overwritten during pair additions; adding again", extra={"id": dataset_id}
        )
        for _, items in stored:
            _withdraw(items)
    raise StorageUnavailable(f"dataset {dataset_id!r} is being written concurrently; retry")


def _store_new(pks: dict[str, str], ms: int, dataset_id: str, pair: Pair) -> list[Item] | None:
    """_store of one of many pairs appended at `ms`; None when its id is taken."""
    pair.created_ms = ms
    try:
        return _store(pks[pair.id], pair, append_ord(ms, pair.id), dataset_id)
    except PairTaken:
        return None  # stored by an earlier sending of it, or by one running now


def no_time() -> StorageUnavailable:
    return StorageUnavailable(
        "not every pair could be stored in the time of one request; send the same data again: "
        "the pairs stored already are skipped"
    )


def _count_and_check_all(header: DatasetHeader, pairs: list[Pair]) -> set[str]:
    """_count_and_check for many pairs at once: the header's counts completed, and the ids
    among `pairs` that are taken (written with the version, or appended to it)."""
    if header.appended:
        counters = [{"pk": s(key), "sk": s(COUNT_SK)} for key in counter_pks(header)]
        for item in dynamo.batch_get(table(), counters):
            header.pair_count += get_n(item, "n")
            if header.bytes is not None:
                header.bytes += get_n(item, "b")
    wanted: list[Item] = []
    for pair in pairs:
        sk = s(f"p#{pair.id}")
        written = written_pk(header, pair.id) if header.append_shards else None
        if written is not None:
            wanted.append({"pk": s(written), "sk": sk})
        wanted.append({"pk": s(appended_pk(header, pair.id)), "sk": sk})
    # Only the keys: a pair stored inline may be 300 KB.
    return {item["sk"]["S"][2:] for item in dynamo.batch_get(table(), wanted, projection="sk")}


def _pair_item(pk: str, pair_id: str) -> Item | None:
    return dynamo.get_item(table(), {"pk": s(pk), "sk": s(f"p#{pair_id}")})


def _stored(pk: str, pair_id: str, ord_: str) -> bool:
    """Whether the pair is stored under `pk` with order key `ord_` (this very addition)."""
    item = _pair_item(pk, pair_id)
    return item is not None and get_s(item, "ord") == ord_


def _count(pk: str, added: int, dataset_id: str, pairs: int = 1) -> None:
    """Add `pairs` pairs of `added` bytes to their shard's counter. The pairs are stored
    already: a counter that cannot be updated leaves the count low, logged, and the pairs where
    they are."""
    try:
        dynamo.call(
            "update_item",
            TableName=table(),
            Key={"pk": s(pk), "sk": s(COUNT_SK)},
            UpdateExpression="ADD n :pairs, b :bytes",
            ExpressionAttributeValues={":pairs": n(pairs), ":bytes": n(added)},
        )
    except (ClientError, StorageUnavailable):
        logger.exception("a stored pair could not be counted", extra={"id": dataset_id})


def _withdraw(items: list[Item]) -> None:
    """Delete this addition's items from a version that was replaced (best effort: the version
    is being discarded anyway; its counter no longer matters). The head item goes first, only
    if it is still this addition's."""
    head, parts = items[0], items[1:]
    try:
        dynamo.conditional(
            "delete_item",
            TableName=table(),
            Key={"pk": head["pk"], "sk": head["sk"]},
            ConditionExpression="#ord = :ord",
            ExpressionAttributeNames={"#ord": "ord"},
            ExpressionAttributeValues={":ord": head["ord"]},
        )
        deletes = [{"DeleteRequest": {"Key": {"pk": p["pk"], "sk": p["sk"]}}} for p in parts]
        dynamo.batch_write(table(), deletes)
    except (ClientError, StorageUnavailable):
        logger.exception("could not withdraw a pair from a replaced version")


def _new_empty(
    tenant: str, kind: DatasetKind, dataset_id: str, system_prompt: str, ms: int
) -> list[Item]:
    """The puts of a transaction that creates a dataset with no pairs unless it exists: its
    header (conditional on its absence) and the tenant's `latest` pointer."""
    header = DatasetHeader(
        tenant=tenant,
        kind=kind,
        dataset_id=dataset_id,
        system_prompt=system_prompt,
        created_ms=ms,
        updated_ms=ms,
        version=new_id(),
        pair_count=0,
        bytes=0,
        shards=0,
        append_shards=append_shards_for(0),
        version_kind="create",
    )
    return [
        {
            "Put": {
                "TableName": table(),
                "Item": header_item(header),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {"Put": latest_pointer(tenant, kind, dataset_id, ms)},
    ]


def create_empty(tenant: str, kind: DatasetKind, dataset_id: str) -> bool:
    """Create the dataset with no pairs and no system prompt unless it exists (then nothing is
    written): True when this call created it. Its pairs are then appended (E11's traces)."""
    return dynamo.transact(_new_empty(tenant, kind, dataset_id, "", now_ms()))


def create_for_prompt(
    tenant: str, dataset_id: str, system_prompt: str, stale_id: str | None
) -> bool:
    """Create an empty seed dataset that owns `system_prompt`. False when another dataset claimed
    the prompt first (the caller then files the pair there)."""
    ms = now_ms()
    actions = [
        *_new_empty(tenant, DatasetKind.SEED, dataset_id, system_prompt, ms),
        {"Put": prompt_pointer(tenant, system_prompt, dataset_id, replacing=stale_id, claim=True)},
    ]
    try:
        dynamo.call("transact_write_items", TransactItems=actions)
    except ClientError as exc:
        if dynamo.failed_conditions(exc) is not None or dynamo.cancelled(exc):
            return False  # claimed meanwhile, or being claimed: the caller looks again
        raise
    return True
