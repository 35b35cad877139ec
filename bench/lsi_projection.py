"""Capacity units per 10,000 pairs for the pairs' order index (`by_order`, an LSI on `ord`)
under each projection it could have: ALL (today), KEYS_ONLY, and INCLUDE of what the
keys-only reads use (`b`, `labels`).

No AWS account is at hand and moto does not meter capacity, so the units are computed from the
items the service really writes (storage.datasets.codec, sized as DynamoDB sizes them) by
DynamoDB's published rules:
- a write costs 1 WCU per started KB of the item, and an LSI entry is written too, costing 1
  WCU per started KB of the projected entry (keys, `ord`, projected attributes);
- a strongly consistent Query costs 1 RCU per started 4 KB of the items it reads, summed over
  the page; an LSI Query that asks for attributes the index does not project fetches each item
  from the table as well, 1 RCU per started 4 KB of each item (the fetch is per item);
- storage of an item collection (a version's pairs and their LSI entries) is capped at 10 GB.

Three reads are counted: the whole dataset in order (a GET, an evaluation's scoring, a
worker's chunk); the keys only, in order (cutting a large evaluation into chunks); none at
random. Typical pair sizes: 200 B, 1 KB, 4 KB and 40 KB of text.

    .venv/bin/python bench/lsi_projection.py
"""

from __future__ import annotations

import math

from harness import ROOT  # noqa: F401  (sets the offline environment first)

# isort: split

from evalsvc.models.datasets import DatasetKind, Pair
from evalsvc.storage.datasets.codec import pair_items
from evalsvc.storage.datasets.keys import make_ord, version_pk
from evalsvc.storage.dynamo import Item, item_size

PAIRS = 10_000
KB = 1024
SIZES = [200, 1_000, 4_000, 40_000]
KEY_NAMES = ("pk", "sk", "ord")
INCLUDED = ("b", "labels")


def _projected(item: Item, projection: str) -> Item:
    if projection == "ALL":
        return item
    names = KEY_NAMES + (INCLUDED if projection == "INCLUDE" else ())
    return {name: value for name, value in item.items() if name in names}


def units(text_bytes: int, projection: str) -> dict[str, float]:
    pk = version_pk("tenant-name", DatasetKind.SEED, "dataset-id-of-usual-length", "0" * 32)
    heads: list[Item] = []
    parts: list[Item] = []
    for k in range(PAIRS):
        half = "x" * (text_bytes // 2)
        pair = Pair(id=f"pair-{k:06d}", input=half, output=half, labels=["en", "support"])
        head, *rest = pair_items(pk, pair, make_ord(1_795_000_000_000, k))
        heads.append(head)
        parts.extend(rest)
    write = sum(math.ceil(item_size(i) / KB) for i in heads + parts)
    write += sum(math.ceil(item_size(_projected(i, projection)) / KB) for i in heads)
    index_bytes = sum(item_size(_projected(i, projection)) for i in heads)
    fetches = sum(math.ceil(item_size(i) / (4 * KB)) for i in heads)
    parts_read = math.ceil(sum(item_size(i) for i in parts) / (4 * KB))
    # In order, whole: the index pages, each item fetched unless the index holds it all, and
    # the parts of large pairs (read from the table).
    full_read = math.ceil(index_bytes / (4 * KB)) + parts_read
    if projection != "ALL":
        full_read += fetches
    # In order, keys and sizes (`pk, sk, ord, b`): the index pages (sized before projecting);
    # KEYS_ONLY does not hold `b`, so each item is fetched for it.
    keys_read = math.ceil(index_bytes / (4 * KB))
    if projection == "KEYS_ONLY":
        keys_read += fetches
    stored = sum(item_size(i) for i in heads + parts) + index_bytes
    return {
        "write": write,
        "full_read": full_read,
        "keys_read": keys_read,
        "pairs_per_10gb": int(10 * 1024**3 / (stored / PAIRS)),
    }


def main() -> None:
    print(f"capacity units per {PAIRS:,} pairs, by the pairs' text size and the LSI projection")
    print(
        "| text per pair | projection | WCU to write | RCU to read in order | RCU keys only "
        "| pairs per 10 GB version |"
    )
    print("|---|---|---|---|---|---|")
    for size in SIZES:
        for projection in ("ALL", "INCLUDE", "KEYS_ONLY"):
            u = units(size, projection)
            print(
                f"| {size:,} B | {projection} | {u['write']:,.0f} | {u['full_read']:,.0f} | "
                f"{u['keys_read']:,.0f} | {u['pairs_per_10gb']:,} |"
            )


if __name__ == "__main__":
    main()
