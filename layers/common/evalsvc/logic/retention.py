"""The end of a kept version's retention (E7). An overwrite keeps the version it replaces,
recorded under the dataset's key with an expiry (storage.datasets.history); DynamoDB's TTL
removes the record once it expires, and the datasets table's stream hands the removed record
(its old image) to the purge, which deletes the version's items and leaves its tombstone.

Only a removal by TTL purges: the stream's filter lets nothing else through, and this module
checks again (a record deleted by anyone else, or an item that is no version record, is
ignored). A purge run twice deletes nothing more and leaves the same tombstone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalsvc.core.observability import log_context, logger, metrics
from evalsvc.models.datasets import DatasetKind
from evalsvc.storage import datasets as store
from evalsvc.storage.datasets import history
from evalsvc.storage.dynamo import Item, get_s

# Who a stream record says removed an item that DynamoDB's TTL removed.
TTL_REMOVER = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}


@dataclass(frozen=True, slots=True)
class Removal:
    """One record of the datasets table's stream, as the purge reads it: what happened
    (`event`: INSERT, MODIFY or REMOVE), who did it (`by`: the record's userIdentity, absent
    for a caller's own write) and the item as it was before (`old_image`, in DynamoDB's
    attribute values; absent for an insert)."""

    event: str | None
    by: Mapping[str, Any] | None
    old_image: Item | None

    @property
    def by_ttl(self) -> bool:
        by = self.by or {}
        return self.event == "REMOVE" and all(by.get(k) == v for k, v in TTL_REMOVER.items())


@dataclass(frozen=True, slots=True)
class Purged:
    """What a purge removed: version `version` of a dataset, `items` items (pairs, their
    parts, counters; none when an earlier delivery had removed them)."""

    tenant: str
    kind: DatasetKind
    dataset_id: str
    version: str
    items: int


def _key_of(item: Item) -> dict[str, str | None]:
    """The keys of an item, cut short, for a log line (keys hold ids, never texts)."""
    return {name: (get_s(item, name) or "")[:200] or None for name in ("pk", "sk")}


def purge_expired(removal: Removal) -> Purged | None:
    """Purge the version whose record TTL removed; None, doing nothing, for any other record."""
    if not removal.by_ttl:
        logger.info(
            "a stream record that is no removal by TTL was ignored",
            extra={"event": removal.event, "by": dict(removal.by or {}).get("type")},
        )
        return None
    old = removal.old_image or {}
    kept = history.kept_version(old)
    if kept is None:
        logger.warning("an item removed by TTL is no version record; ignored", extra=_key_of(old))
        return None
    record = kept.record
    with log_context(tenant=kept.tenant, dataset_id=kept.dataset_id, version=record.version):
        try:
            items = store.purge_version(kept.tenant, kept.kind, kept.dataset_id, record)
        except Exception:
            logger.exception("could not purge an expired dataset version; it will be retried")
            raise
        logger.info(
            "purged an expired dataset version",
            extra={
                "kind": kept.kind.value,
                "items_deleted": items,
                "pairs": record.pairs,
                "expired_ms": record.expires_ms,
            },
        )
    metrics.add_metric(name="VersionsPurged", unit="Count", value=1)
    metrics.add_metric(name="VersionItemsPurged", unit="Count", value=items)
    return Purged(kept.tenant, kept.kind, kept.dataset_id, record.version, items)
