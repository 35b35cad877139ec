"""The datasets table: dataset headers, pairs, and the pointers that find a tenant's latest
dataset and the dataset of a system prompt.

Layout (every key starts with the tenant, so one tenant can never address another's items):

    pk                                        sk              what
    T#<tenant>#<kind>#<id>                    dataset         header: version, shards, counts…
    T#<tenant>#<kind>#<id>#v#<version>#s<kk>  p#<pair_id>     one pair written with the version,
                                                              in shard kk; `ord` sorts it (LSI
                                                              by_order)
    T#<tenant>#<kind>#<id>#v#<version>#a<kk>  p#<pair_id>     one pair appended to it, in append
                                                              shard kk
    either                                    x#<pair_id>#k   part k of a pair too large for an item
    either                                    count           pairs appended to the shard, and bytes
    T#<tenant>#<kind>#<id>                    v#<ms>#<ver>    a replaced version kept until its
                                                              retention ends (history.py)
    T#<tenant>#<kind>#<id>                    gone#<ver>      a replaced version purged after it
    T#<tenant>#latest#<kind>                  pointer         the tenant's latest dataset of a kind
    T#<tenant>#prompt#<sha256>                pointer         the dataset of that system prompt

A version's written pairs take as many shards as their write needs (`shards`: 0 for none, one
per 1,000 write units, at most EVALSVC_DATASET_SHARDS), keyed without `#s<kk>` when there is one.
Its appended pairs spread over EVALSVC_DATASET_SHARDS append shards (`append_shards` on the
header); a version written over that many already, and every version stored before versions were
sized (no `append_shards`), takes its appended pairs in its written shards instead. A pair's
shard in either part is fixed by a hash of its id.

A dataset's pairs live under its current `version`. An overwrite writes the new pairs under a
fresh version and then flips the header in one conditional transaction, so readers see the old
dataset or the new one, and a failure before the flip leaves the old one intact. The old
version is kept, recorded in the flip's transaction, until EVALSVC_VERSION_RETENTION_DAYS end:
then DynamoDB's TTL removes its record, and the purge (logic/retention.py, through the table's
stream) deletes its pairs and leaves a tombstone. A reader checks that the header still names
its version after reading.

`ord` is `<ms:013d>#<seq:08d>` for a written pair and `<ms:013d>#~<pair_id>` for an appended
one: creation time, then order within the write or the id, unique in the version. So "newest N
pairs" and "created in the last N seconds" are key-range queries on the index, merged over the
shards. Appends write no item another append writes (appends.py).

The package follows the seams: keys (keys, shards and order), codec (items), pointers, reads,
versions (the one write-flip-keep path, and the purge), history (the versions kept after an
overwrite, until their retention ends) and appends (one pair at a time).
"""

from evalsvc.storage.datasets.appends import (
    PromptMismatch,
    add_new_pairs,
    add_pair,
    create_empty,
    create_for_prompt,
    no_time,
)
from evalsvc.storage.datasets.codec import LISTED_PAIR_BYTES, TornRead
from evalsvc.storage.datasets.history import replaced_page
from evalsvc.storage.datasets.keys import (
    Stored,
    dataset_pk,
    fingerprint,
    make_ord,
    shards_for,
    stored_as_read,
    version_pk,
    write_units,
)
from evalsvc.storage.datasets.pointers import dataset_id_for_prompt, latest_dataset_id
from evalsvc.storage.datasets.reads import (
    OverBudget,
    Selected,
    TooLarge,
    current_version,
    get_header,
    get_pairs,
    get_pairs_within,
    range_page,
    read_dataset,
    read_page,
    read_range,
    read_runs,
    select_pairs,
    stored_header,
)
from evalsvc.storage.datasets.versions import (
    VersionInUse,
    discard_version,
    installing,
    purge_version,
    put_version_pairs,
    write_dataset,
)

__all__ = [
    "LISTED_PAIR_BYTES",
    "OverBudget",
    "PromptMismatch",
    "Selected",
    "Stored",
    "TooLarge",
    "TornRead",
    "VersionInUse",
    "add_new_pairs",
    "add_pair",
    "create_empty",
    "create_for_prompt",
    "current_version",
    "dataset_id_for_prompt",
    "dataset_pk",
    "discard_version",
    "fingerprint",
    "get_header",
    "get_pairs",
    "get_pairs_within",
    "installing",
    "latest_dataset_id",
    "make_ord",
    "no_time",
    "purge_version",
    "put_version_pairs",
    "range_page",
    "read_dataset",
    "read_page",
    "read_range",
    "read_runs",
    "replaced_page",
    "select_pairs",
    "shards_for",
    "stored_as_read",
    "stored_header",
    "version_pk",
    "write_dataset",
    "write_units",
]
