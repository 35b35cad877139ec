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

The package follows the seams: keys (keys and order), codec (items), pointers, reads, versions
(the one write-flip-discard path) and appends (one pair at a time).
"""

from evalsvc.storage.datasets.appends import PromptMismatch, add_pair, create_for_prompt
from evalsvc.storage.datasets.keys import dataset_pk, make_ord, next_ord, split_ord, version_pk
from evalsvc.storage.datasets.pointers import dataset_id_for_prompt, latest_dataset_id
from evalsvc.storage.datasets.reads import (
    OverBudget,
    TooLarge,
    current_version,
    get_header,
    read_dataset,
    read_page,
    read_range,
    select_pairs,
)
from evalsvc.storage.datasets.versions import (
    discard_version,
    install_actions,
    put_version_pairs,
    write_dataset,
)

__all__ = [
    "OverBudget",
    "PromptMismatch",
    "TooLarge",
    "add_pair",
    "create_for_prompt",
    "current_version",
    "dataset_id_for_prompt",
    "dataset_pk",
    "discard_version",
    "get_header",
    "install_actions",
    "latest_dataset_id",
    "make_ord",
    "next_ord",
    "put_version_pairs",
    "read_dataset",
    "read_page",
    "read_range",
    "select_pairs",
    "split_ord",
    "version_pk",
    "write_dataset",
]
