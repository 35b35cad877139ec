"""Keys of the datasets table, and the order key of pairs (`ord`)."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from evalsvc.core import backoff
from evalsvc.core.identifiers import is_client_id
from evalsvc.core.settings import get_settings
from evalsvc.models.datasets import (
    DatasetHeader,
    DatasetKind,
)

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


def parse_dataset_pk(pk: str) -> tuple[str, DatasetKind, str] | None:
    """The tenant, kind and dataset id of a dataset's partition key (dataset_pk); None for any
    other key. The split is unambiguous: a tenant and a dataset id are client ids
    (identifiers.is_client_id), which hold no `#`, and no other key has a dataset kind third
    (`T#<tenant>#latest#<kind>`, `#prompt#`, `#text#`; a version's own keys have more parts)."""
    parts = pk.split("#")
    if len(parts) != 4 or parts[0] != "T":
        return None
    _, tenant, kind, dataset_id = parts
    if kind not in {k.value for k in DatasetKind}:
        return None
    if not (is_client_id(tenant) and is_client_id(dataset_id)):
        return None
    return tenant, DatasetKind(kind), dataset_id


def version_pk(tenant: str, kind: DatasetKind, dataset_id: str, version: str) -> str:
    return f"{dataset_pk(tenant, kind, dataset_id)}#v#{version}"


def latest_pk(tenant: str, kind: DatasetKind) -> str:
    return f"T#{tenant}#latest#{kind.value}"


def prompt_hash(system_prompt: str) -> str:
    return hashlib.sha256(system_prompt.encode()).hexdigest()


def prompt_pk(tenant: str, system_prompt: str) -> str:
    return f"T#{tenant}#prompt#{prompt_hash(system_prompt)}"


def max_shards() -> int:
    """The most partition keys a version's written pairs spread over, and the number its
    appended pairs always spread over. Each is one item collection, with its own 10 GB and
    1,000 write units a second: docs/design.md, "Appends"."""
    return get_settings().dataset_shards


# A written version takes one shard per this many write units of its write: one second of a
# partition's 1,000 (docs/design.md, "Datasets in DynamoDB").
SHARD_WRITE_UNITS = 1_000


# What a pair's item holds besides the texts pair_bytes counts: its keys (tenant, kind, dataset
# id, version, shard), `ord`, `b`, the attribute names: 113 bytes in bench/dataset_calls.py,
# more with long tenant and dataset ids.
PAIR_ITEM_OVERHEAD = 200


def write_units(pair_bytes: int) -> int:
    """The write units writing one pair of `pair_bytes` takes: its item and its `by_order` entry
    (projection ALL), one a started KB each (more than a pair stored in compressed parts takes:
    its parts have no index entry)."""
    return 2 * -(-(pair_bytes + PAIR_ITEM_OVERHEAD) // 1024)


def shards_for(pairs: int, units: int) -> int:
    """The shards a version written with `pairs` pairs taking `units` write units spreads them
    over: none for none, one per SHARD_WRITE_UNITS, at most max_shards()."""
    if pairs == 0:
        return 0
    return max(1, min(max_shards(), -(-units // SHARD_WRITE_UNITS)))


def append_shards_for(shards: int) -> int:
    """The shards pairs appended to a version written over `shards` go to, apart from those:
    max_shards() when it has fewer (the appends spread all the same), else 0 (appends go to the
    written shards, as for every version stored before versions were sized)."""
    spread = max_shards()
    return spread if shards < spread else 0


@dataclass(frozen=True, slots=True)
class Stored:
    """Where the pairs of a version are: `shards` partition keys hold those written with it (0:
    none were), and `append_shards` more those appended apart from them (0: none to read, or
    appended into the written shards)."""

    version: str
    shards: int
    append_shards: int = 0


def stored_as_read(header: DatasetHeader) -> Stored:
    """The partition keys a read of the header's version reads: the append shards only once a
    pair was appended (a reader of `header` saw no appended pair otherwise)."""
    return Stored(header.version, header.shards, header.append_shards if header.appended else 0)


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
    """The partition keys of a version's `shards` written shards."""
    key = version_pk(tenant, kind, dataset_id, version)
    return [shard_pk(key, shards, k) for k in range(shards)]


def append_pk(version_key: str, shard: int) -> str:
    """The partition key of append shard `shard` of a version whose appended pairs are kept
    apart from its written ones."""
    return f"{version_key}#a{shard:02d}"


def stored_parts(
    tenant: str, kind: DatasetKind, dataset_id: str, stored: Stored
) -> tuple[list[str], list[str]]:
    """The partition keys of `stored`'s written shards, and of its append shards."""
    key = version_pk(tenant, kind, dataset_id, stored.version)
    written = [shard_pk(key, stored.shards, k) for k in range(stored.shards)]
    return written, [append_pk(key, k) for k in range(stored.append_shards)]


def stored_pks(tenant: str, kind: DatasetKind, dataset_id: str, stored: Stored) -> list[str]:
    """The partition keys of every shard of `stored`: written, then appended."""
    written, appended = stored_parts(tenant, kind, dataset_id, stored)
    return written + appended


def read_parts(header: DatasetHeader) -> tuple[list[str], list[str]]:
    """The partition keys that can hold pairs of the header's version: its written shards, and
    its append shards once a pair was appended."""
    return stored_parts(header.tenant, header.kind, header.dataset_id, stored_as_read(header))


def counter_pks(header: DatasetHeader) -> list[str]:
    """The partition keys whose `count` items count the pairs appended to the header's
    version: its append shards, or its written shards when appends go there."""
    stored = Stored(header.version, header.shards, header.append_shards)
    written, appended = stored_parts(header.tenant, header.kind, header.dataset_id, stored)
    return appended or written


def pair_pk(
    tenant: str, kind: DatasetKind, dataset_id: str, version: str, shards: int, pair_id: str
) -> str:
    """The partition key of pair `pair_id` written with a version over `shards` shards."""
    key = version_pk(tenant, kind, dataset_id, version)
    return shard_pk(key, shards, shard_of(pair_id, shards))


def written_pk(header: DatasetHeader, pair_id: str) -> str | None:
    """Where pair `pair_id` is if it was written with the header's version (None: no pair was)."""
    if not header.shards:
        return None
    return pair_pk(
        header.tenant, header.kind, header.dataset_id, header.version, header.shards, pair_id
    )


def appended_pk(header: DatasetHeader, pair_id: str) -> str:
    """Where pair `pair_id` goes, and is, if appended to the header's version."""
    if not header.append_shards:
        written = written_pk(header, pair_id)
        assert written is not None  # a version with no written shard has append shards
        return written
    key = version_pk(header.tenant, header.kind, header.dataset_id, header.version)
    return append_pk(key, shard_of(pair_id, header.append_shards))


def pair_pks(header: DatasetHeader, pair_id: str) -> list[str]:
    """Every partition key that can hold pair `pair_id` of the header's version (it is in one
    at most: an append checks the written one)."""
    keys = [pk] if (pk := written_pk(header, pair_id)) else []
    if header.append_shards and header.appended:
        keys.append(appended_pk(header, pair_id))
    return keys


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
