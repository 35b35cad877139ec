"""The one path that writes a dataset: pairs under a fresh version, then the header flipped to
it (inserted or replaced, in one conditional transaction, or installed with a queued job's
end). The version an overwrite replaces is kept, recorded in the same transaction, until its
retention ends (storage.datasets.history), then purged whole (purge_version); a version that
lost (never installed) is discarded. An error whose outcome is unknown is checked by reading the
header before anything is discarded."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from botocore.exceptions import ClientError

from evalsvc.core.errors import StorageUnavailable
from evalsvc.core.identifiers import new_id, now_ms
from evalsvc.core.observability import logger
from evalsvc.models.datasets import (
    DatasetHeader,
    DatasetKind,
    Pair,
    VersionKind,
    VersionRecord,
    pair_bytes,
)
from evalsvc.storage import dynamo
from evalsvc.storage.datasets import history
from evalsvc.storage.datasets.codec import header_item, pair_items, prompt_field
from evalsvc.storage.datasets.history import gone_item, retiring
from evalsvc.storage.datasets.keys import (
    COMMIT_ATTEMPTS,
    HEADER_SK,
    Stored,
    append_shards_for,
    dataset_pk,
    make_ord,
    pair_pk,
    pause,
    shards_for,
    stored_pks,
    table,
    write_units,
)
from evalsvc.storage.datasets.pointers import latest_pointer, prompt_pointer
from evalsvc.storage.datasets.reads import current_version, get_header
from evalsvc.storage.dynamo import Item, get_s, s
from evalsvc.storage.writes import Writes


def _delete_version(tenant: str, kind: DatasetKind, dataset_id: str, stored: Stored) -> int:
    """Delete every item under `stored`'s partition keys (pairs, their parts, the append
    counters); the number deleted."""
    keys = [
        key
        for pk in stored_pks(tenant, kind, dataset_id, stored)
        for key in dynamo.query_items(
            TableName=table(),
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": s(pk)},
            ProjectionExpression="pk, sk",
        )
    ]
    dynamo.batch_write(table(), [{"DeleteRequest": {"Key": key}} for key in keys])
    return len(keys)


class VersionInUse(Exception):
    """The dataset's header names the version asked to be purged: it is not purged."""


def _header_version(tenant: str, kind: DatasetKind, dataset_id: str) -> str | None:
    """The version the header names (None without a dataset), by a Query of its one key: the
    purge is granted no GetItem."""
    items = dynamo.query_items(
        TableName=table(),
        KeyConditionExpression="pk = :pk AND sk = :sk",
        ExpressionAttributeValues={
            ":pk": s(dataset_pk(tenant, kind, dataset_id)),
            ":sk": s(HEADER_SK),
        },
        ProjectionExpression="version",
        ConsistentRead=True,
    )
    for item in items:
        return get_s(item, "version")
    return None


def purge_version(tenant: str, kind: DatasetKind, dataset_id: str, record: VersionRecord) -> int:
    """Delete every item of the kept version `record` describes (its written and appended
    pairs, their parts, its append counters), then put its tombstone (`gone#<version>`, with
    when it expired); the number of items deleted. Run again, it finds nothing left to delete
    and puts the same tombstone. VersionInUse, deleting nothing, if the header names the
    version (a record is written only when its version is replaced, so never by the service's
    own writes)."""
    if _header_version(tenant, kind, dataset_id) == record.version:
        raise VersionInUse(record.version)
    deleted = _delete_version(tenant, kind, dataset_id, history.stored(record))
    dynamo.call("put_item", TableName=table(), Item=gone_item(tenant, kind, dataset_id, record))
    return deleted


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
    sizes = [pair_bytes(pair) for pair in pairs]
    version = new_id()
    # As many shards as the write needs (docs/design.md, "Datasets in DynamoDB").
    shards = shards_for(len(pairs), sum(write_units(size) for size in sizes))
    try:
        put_version_pairs(tenant, kind, dataset_id, version, shards, pairs, ms, 0, on_progress)
        return _commit(
            tenant, kind, dataset_id, (version, shards), sizes, system_prompt, ms, previous
        )
    except BaseException:
        installed = _installed(tenant, kind, dataset_id, version)
        if installed is None:
            discard_version(tenant, kind, dataset_id, version, shards)
            raise
        # The commit went through though its answer was lost (a timeout, a connection reset):
        # the new version stands, and the one it replaced was recorded with it.
        logger.warning("a dataset commit succeeded unanswered", extra={"id": dataset_id})
        return installed


def _installed(
    tenant: str, kind: DatasetKind, dataset_id: str, version: str
) -> DatasetHeader | None:
    """The header, if it names `version`. Raises (discarding nothing) when that cannot be
    read: a version that may be installed is never deleted."""
    if current_version(tenant, kind, dataset_id) != version:
        return None
    return get_header(tenant, kind, dataset_id)


def put_version_pairs(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    version: str,
    shards: int,
    pairs: Sequence[Pair],
    ms: int,
    first_seq: int,
    on_progress: Callable[[int], None] | None = None,
) -> None:
    """Write `pairs` under a version not yet installed, at sequence numbers `first_seq`... of
    its write time `ms` (a whole write at once; a queued write a chunk at a time, and writing a
    chunk again overwrites the same items), spread over the version's `shards` partition keys.
    `on_progress` gets the items written so far."""
    requests: list[Item] = []
    for offset, pair in enumerate(pairs):
        pair.created_ms = ms
        ord_ = make_ord(ms, first_seq + offset)
        pk = pair_pk(tenant, kind, dataset_id, version, shards, pair.id)
        requests.extend({"PutRequest": {"Item": item}} for item in pair_items(pk, pair, ord_))
    dynamo.batch_write(table(), requests, on_progress=on_progress)


def installing(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    stored: tuple[str, int],
    pair_count: int,
    pair_bytes: int,
    system_prompt: str,
    ms: int,
) -> Writes:
    """The writes that make the new dataset of the `pair_count` pairs
    (`pair_bytes` in all) put under a version (`stored`: its id and shards; put_version_pairs)
    exist, as the tenant's latest of its kind; they fail when the dataset exists already."""
    version, shards = stored
    header = DatasetHeader(
        tenant=tenant,
        kind=kind,
        dataset_id=dataset_id,
        system_prompt=system_prompt,
        created_ms=ms,
        updated_ms=ms,
        version=version,
        pair_count=pair_count,
        bytes=pair_bytes,
        shards=shards,
        append_shards=append_shards_for(shards),
        version_kind=VersionKind.CREATE.value,
    )
    put = {
        "TableName": table(),
        "Item": header_item(header),
        "ConditionExpression": "attribute_not_exists(pk)",
    }
    return Writes([{"Put": put}, {"Put": latest_pointer(tenant, kind, dataset_id, ms)}])


def discard_version(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    version: str,
    shards: int,
    *,
    append_shards: int = 0,
) -> None:
    """Delete the pairs of a version (written over `shards` partition keys, appended over
    `append_shards` more) that is not, or no longer, installed (best effort: what is left is
    unreachable, never read)."""
    try:
        _delete_version(tenant, kind, dataset_id, Stored(version, shards, append_shards))
    except Exception:
        logger.exception(
            "could not remove the pairs of a discarded version", extra={"id": dataset_id}
        )


def _commit(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    stored: tuple[str, int],
    sizes: Sequence[int],
    system_prompt: str,
    ms: int,
    previous: DatasetHeader | None,
) -> DatasetHeader:
    """Flip the header to the version `stored` (its id and shards) of pairs of `sizes`
    (pair_bytes; last writer wins), recording the version it replaces, which is kept."""
    version, shards = stored
    prompt = prompt_field(tenant, system_prompt)
    for attempt in range(COMMIT_ATTEMPTS):
        pause(attempt)
        header = DatasetHeader(
            tenant=tenant,
            kind=kind,
            dataset_id=dataset_id,
            system_prompt=system_prompt,
            created_ms=previous.created_ms if previous else ms,
            updated_ms=ms,
            version=version,
            pair_count=len(sizes),
            bytes=sum(sizes),
            shards=shards,
            append_shards=append_shards_for(shards),
            version_kind=(VersionKind.OVERWRITE if previous else VersionKind.CREATE).value,
        )
        put: dict[str, Any] = {"TableName": table(), "Item": header_item(header, prompt)}
        if previous is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            # A version first appended to since it was read has pairs in its append shards:
            # the flip fails, and the header is read again, so that its record counts them.
            unmarked = "" if previous.appended else " AND attribute_not_exists(appended)"
            put["ConditionExpression"] = "version = :version" + unmarked
            put["ExpressionAttributeValues"] = {":version": s(previous.version)}
        actions: list[Item] = [{"Put": put}]
        if previous is None:
            actions.append({"Put": latest_pointer(tenant, kind, dataset_id, ms)})
        else:
            actions.append(retiring(previous, ms))
        if kind is DatasetKind.SEED and system_prompt:
            actions.append({"Put": prompt_pointer(tenant, system_prompt, dataset_id)})
        try:
            dynamo.call("transact_write_items", TransactItems=actions)
        except ClientError as exc:
            if dynamo.failed_conditions(exc) is None and not dynamo.cancelled(exc):
                raise
            # The header moved on, or another write held it: read it again and retry.
            previous = get_header(tenant, kind, dataset_id)
            if previous is not None and previous.version == version:
                return previous  # an earlier attempt of this write committed it
            continue
        return header
    raise StorageUnavailable(f"dataset {dataset_id!r} is being written concurrently; retry")
