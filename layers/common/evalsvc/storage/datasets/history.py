"""A dataset's versions (E7): the one its header names, and those an overwrite replaced, kept
for EVALSVC_VERSION_RETENTION_DAYS so that the results that scored them can list their pairs
and be run again.

    pk                          sk                           what
    T#<tenant>#<kind>#<id>      v#<created_ms:013d>#<ver>    a replaced version: when it was
                                                             made and how (create | overwrite),
                                                             its pairs, where they are (shards),
                                                             when it was replaced, `expires_at`
    T#<tenant>#<kind>#<id>      gone#<ver>                   a replaced version past retention
                                                             whose pairs were removed: when it
                                                             expired

The header is the record of the current version (its `updated_ms` is when the version was made,
`version_kind` how). An overwrite writes the record of the version it replaces in the same
transaction that flips the header, so no version is ever unrecorded and nothing is deleted
then. The record's `expires_at` (epoch seconds) is the table's TTL attribute: when DynamoDB
removes the record, the table's stream hands its old image to the purge (logic/retention.py),
which deletes the version's pairs and leaves the `gone#` tombstone that lets a result say when
what it scored expired. The records sort newest first by their key, so listing is one Query.

A version is readable while the header names it, or its record is kept and not yet expired:
a read of a replaced version checks its record again after reading (TTL removes the record
before any pair is purged).
"""

from __future__ import annotations

from dataclasses import dataclass

from evalsvc.core.identifiers import is_client_id
from evalsvc.core.settings import get_settings
from evalsvc.models.datasets import DatasetHeader, DatasetKind, VersionKind, VersionRecord
from evalsvc.storage import dynamo
from evalsvc.storage.datasets.keys import Stored, dataset_pk, parse_dataset_pk, table
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s

RECORD_PREFIX = "v#"
GONE_PREFIX = "gone#"
DAY_MS = 86_400_000
# The datasets table's TTL attribute (template.yaml, TimeToLiveSpecification): only version
# records carry it.
TTL_ATTRIBUTE = "expires_at"
# The most shards of either part a version can have (EVALSVC_DATASET_SHARDS is at most 64).
MAX_SHARDS = 64


@dataclass(frozen=True, slots=True)
class Gone:
    """A version whose retention ended at `expired_ms`: its pairs are no longer kept."""

    version: str
    expired_ms: int | None


def stored(record: VersionRecord) -> Stored:
    """Where every pair of the version is, appended ones included."""
    return Stored(record.version, record.shards, record.append_shards)


def record_sk(created_ms: int, version: str) -> str:
    return f"{RECORD_PREFIX}{created_ms:013d}#{version}"


def gone_sk(version: str) -> str:
    return f"{GONE_PREFIX}{version}"


def header_kind(header: DatasetHeader) -> VersionKind:
    """How the header's version was made (a header stored before it was kept: a create when
    the dataset was never written again)."""
    if header.version_kind:
        return VersionKind(header.version_kind)
    same = header.created_ms == header.updated_ms
    return VersionKind.CREATE if same else VersionKind.OVERWRITE


def current(header: DatasetHeader) -> VersionRecord:
    """The record of the version the header names (counted: with its appended pairs)."""
    return VersionRecord(
        version=header.version,
        created_ms=header.updated_ms,
        kind=header_kind(header),
        pairs=header.pair_count,
        bytes=header.bytes,
        shards=header.shards,
        append_shards=header.append_shards if header.appended else 0,
    )


def retention_ms() -> int:
    return get_settings().version_retention_days * DAY_MS


def _record_item(tenant: str, kind: DatasetKind, dataset_id: str, record: VersionRecord) -> Item:
    item: Item = {
        "pk": s(dataset_pk(tenant, kind, dataset_id)),
        "sk": s(record_sk(record.created_ms, record.version)),
        "version": s(record.version),
        "created_ms": n(record.created_ms),
        "version_kind": s(record.kind.value),
        "pair_count": n(record.pairs),
        "shards": n(record.shards),
        "append_shards": n(record.append_shards),
    }
    if record.bytes is not None:
        item["bytes"] = n(record.bytes)
    if record.replaced_ms is not None:
        item["replaced_ms"] = n(record.replaced_ms)
    if record.expires_ms is not None:
        item["expires_ms"] = n(record.expires_ms)
        # DynamoDB's TTL reads whole seconds since the epoch; removal follows within days.
        item[TTL_ATTRIBUTE] = n(-(-record.expires_ms // 1000))
    return item


def record_from_item(item: Item) -> VersionRecord:
    return VersionRecord(
        version=get_s(item, "version") or "",
        created_ms=get_n(item, "created_ms"),
        kind=VersionKind(get_s(item, "version_kind") or VersionKind.CREATE.value),
        pairs=get_n(item, "pair_count"),
        bytes=get_n(item, "bytes") if "bytes" in item else None,
        shards=get_n(item, "shards"),
        append_shards=get_n(item, "append_shards"),
        replaced_ms=get_n(item, "replaced_ms") if "replaced_ms" in item else None,
        expires_ms=get_n(item, "expires_ms") if "expires_ms" in item else None,
    )


@dataclass(frozen=True, slots=True)
class KeptVersion:
    """A replaced version of dataset `dataset_id` (`kind`) of `tenant`, as its record says."""

    tenant: str
    kind: DatasetKind
    dataset_id: str
    record: VersionRecord


def kept_version(item: Item) -> KeptVersion | None:
    """The version a record item describes (its old image, as the table's stream hands it over
    when TTL removes it); None when `item` is not a well-formed version record: another item of
    the table, a key that names no dataset, or a record whose fields do not agree with its key
    (nothing in it can then be trusted to name what to delete)."""
    pk, sk = get_s(item, "pk"), get_s(item, "sk")
    if pk is None or sk is None or not sk.startswith(RECORD_PREFIX):
        return None
    dataset = parse_dataset_pk(pk)
    if dataset is None:
        return None
    try:
        record = record_from_item(item)
    except (KeyError, TypeError, ValueError):
        return None
    if not is_client_id(record.version) or sk != record_sk(record.created_ms, record.version):
        return None
    if not (0 <= record.shards <= MAX_SHARDS and 0 <= record.append_shards <= MAX_SHARDS):
        return None
    tenant, kind, dataset_id = dataset
    return KeptVersion(tenant, kind, dataset_id, record)


def retiring(previous: DatasetHeader, replaced_ms: int) -> Item:
    """The transaction action that keeps `previous`'s version (its header as read, counted)
    when an overwrite at `replaced_ms` replaces it, until its retention ends."""
    record = current(previous)
    kept = VersionRecord(
        version=record.version,
        created_ms=record.created_ms,
        kind=record.kind,
        pairs=record.pairs,
        bytes=record.bytes,
        shards=previous.shards,
        # Its append shards whether or not it was seen appended to: an append racing the
        # overwrite is read with it.
        append_shards=previous.append_shards,
        replaced_ms=replaced_ms,
        expires_ms=replaced_ms + retention_ms(),
    )
    item = _record_item(previous.tenant, previous.kind, previous.dataset_id, kept)
    return {"Put": {"TableName": table(), "Item": item}}


def get_record(
    tenant: str, kind: DatasetKind, dataset_id: str, version: str, created_ms: int
) -> VersionRecord | None:
    """The record of replaced version `version` made at `created_ms`, if kept."""
    key = {"pk": s(dataset_pk(tenant, kind, dataset_id)), "sk": s(record_sk(created_ms, version))}
    item = dynamo.get_item(table(), key)
    return record_from_item(item) if item else None


def get_gone(tenant: str, kind: DatasetKind, dataset_id: str, version: str) -> Gone | None:
    """The tombstone of `version`, if its retention ended and its pairs were removed."""
    key = {"pk": s(dataset_pk(tenant, kind, dataset_id)), "sk": s(gone_sk(version))}
    item = dynamo.get_item(table(), key)
    if not item:
        return None
    return Gone(version, get_n(item, "expired_ms") if "expired_ms" in item else None)


def gone_item(tenant: str, kind: DatasetKind, dataset_id: str, record: VersionRecord) -> Item:
    """The tombstone the purge leaves for `record`'s version."""
    item: Item = {
        "pk": s(dataset_pk(tenant, kind, dataset_id)),
        "sk": s(gone_sk(record.version)),
        "version": s(record.version),
        "created_ms": n(record.created_ms),
    }
    if record.expires_ms is not None:
        item["expired_ms"] = n(record.expires_ms)
    return item


def replaced_page(
    tenant: str, kind: DatasetKind, dataset_id: str, limit: int, before: tuple[int, str] | None
) -> tuple[list[VersionRecord], bool]:
    """Up to `limit` records of replaced versions, newest first, made before `before`
    ((created_ms, version) of the last one listed; None: from the newest). Returns them and
    whether more follow."""
    pk = dataset_pk(tenant, kind, dataset_id)
    start: Item = {}
    if before is not None:
        start["ExclusiveStartKey"] = {"pk": s(pk), "sk": s(record_sk(*before))}
    items, more = dynamo.query_bounded(
        max_items=limit,
        max_bytes=2**62,
        TableName=table(),
        KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues={":pk": s(pk), ":prefix": s(RECORD_PREFIX)},
        ScanIndexForward=False,
        ConsistentRead=True,
        **start,
    )
    return [record_from_item(item) for item in items], more
