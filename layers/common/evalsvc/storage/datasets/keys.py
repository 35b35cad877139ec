"""Keys of the datasets table, and the order key of pairs (`ord`)."""

from __future__ import annotations

import hashlib
import time

from evalsvc import backoff
from evalsvc.models.datasets import (
    DatasetKind,
)
from evalsvc.settings import get_settings

HEADER_SK = "dataset"


POINTER_SK = "pointer"


# The sort key of a shard's counter of appended pairs (`n`) and their pair_bytes (`b`).
COUNT_SK = "count"


ORDER_INDEX = "by_order"


COMMIT_ATTEMPTS = 10


def pause(attempt: int) -> None:
    """Jittered pause before retrying a write that lost a race for the dataset header."""
    if attempt:
        time.sleep(backoff.delay(attempt, 0.02, 0.5))


def table() -> str:
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


def new_shards() -> int:
    """The partition keys a version written now spreads its pairs over. Each is one item
    collection, with its own 10 GB and 1,000 write units a second: docs/design.md, "Appends"."""
    return get_settings().dataset_shards


def shard_pk(version_key: str, shards: int, shard: int) -> str:
    """The partition key of shard `shard` of a version stored under `shards` partition keys
    (a version written before pairs were spread has one: the version's own key)."""
    return version_key if shards == 1 else f"{version_key}#s{shard:02d}"


def fingerprint(key: str) -> bytes:
    """8 bytes that stand for a pair id or an ord: which shard holds a pair, and how a queued
    chunk names the pairs it was given (by their ords)."""
    return hashlib.blake2b(key.encode(), digest_size=8).digest()


def shard_of(pair_id: str, shards: int) -> int:
    """The shard that holds pair `pair_id`: fixed by its id, so the id's uniqueness is one
    conditional write on one key."""
    return int.from_bytes(fingerprint(pair_id), "big") % shards


def shard_pks(
    tenant: str, kind: DatasetKind, dataset_id: str, version: str, shards: int
) -> list[str]:
    key = version_pk(tenant, kind, dataset_id, version)
    return [shard_pk(key, shards, k) for k in range(shards)]


def pair_pk(
    tenant: str, kind: DatasetKind, dataset_id: str, version: str, shards: int, pair_id: str
) -> str:
    key = version_pk(tenant, kind, dataset_id, version)
    return shard_pk(key, shards, shard_of(pair_id, shards))


def make_ord(ms: int, seq: int) -> str:
    """The order key of pair `seq` of a write of many pairs at `ms`."""
    return f"{ms:013d}#{seq:08d}"


def append_ord(ms: int, pair_id: str) -> str:
    """The order key of a pair appended at `ms`: its time, then its id, which is unique in the
    version, so no two pairs share an order key and no counter is needed to make one (`~`
    sorts after the digits of a write's sequence numbers)."""
    return f"{ms:013d}#~{pair_id}"


def ord_ms(ord_: str) -> int:
    """The creation time an order key carries."""
    return int(ord_[:13])
