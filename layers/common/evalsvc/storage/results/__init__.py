"""The results table: one header per evaluation result and one item per scored pair.

    pk                                  sk           what
    T#<tenant>#R#<results_id>           result       dataset, metrics, definitions, statistics…
    T#<tenant>#R#<results_id>           p#<pair_id>  the pair's position, scores and reasons,
                                                     its clusters, the judge's samples
    T#<tenant>#latest#<kind>#<dataset>  pointer      the dataset's newest result

An evaluation scored inside the request writes its scored pairs first and the header last,
with a condition: until the header exists the result does not, so a failure part-way stores
nothing a reader can see.

A queued evaluation writes its header first, with `status` running, in one transaction with
its job (storage.jobs, which keeps the progress). Workers write the scored pairs of their
chunk; whoever counts the last chunk completes the result: statistics and status complete in
the header, the dataset's pointer, and the job's end, together. A header without `status` is a
complete result.

The header keeps the definitions and system prompt the result was scored with; long ones are
kept apart (storage.texts), once however many results share them. A complete result's header
also keeps what finishing counted: per metric the statistics, the lowest pairs and the 1-5
score histogram (`histograms`, absent from results stored before it was kept), so that a report
draws them without reading the scored pairs.

Every header also carries the keys of two sparse indexes that list a tenant's results newest
first (GET /evaluations): `list_pk` (T#<tenant>) for `by_tenant`, `list_dpk`
(T#<tenant>#D#<dataset_id>) for `by_dataset`, and `list_sk` (<created_ms, 15 digits>#<results_id>)
for both, unique so that results created in the same millisecond keep one order. Only headers
carry them: scored pairs, pointers and parts are in no index. Both indexes project what a list
shows, and a header's status follows into them when it changes. Headers stored before the
indexes have none of the keys and are not listed.

The package follows the seams: keys (keys, index names and the dataset's pointer), header (the
header as an item, and its reads: the result, its selection, the dataset's newest), commits
(the writes that make a result exist, complete or fail), scored (scored pairs as items, their
writes and their reads by id), pages (every scored pair of a result, by Query: scores, clustered
scores, bounded pages) and listing (the lists of results).

Callers call through this package (`results_store.get(...)`), so a test that patches a name
here patches what they call; the package's own modules call each other directly.
"""

from evalsvc.storage.results.commits import completing, failing, put, running
from evalsvc.storage.results.header import (
    SELECTION_INLINE,
    get,
    latest_for_dataset,
    selection,
)
from evalsvc.storage.results.keys import (
    DATASET_INDEX,
    HEADER_SK,
    POINTER_SK,
    TENANT_INDEX,
    dataset_list_pk,
    latest_pk,
    list_pk,
    list_sk,
    result_pk,
)
from evalsvc.storage.results.listing import LISTED_ATTRIBUTES, LISTED_RESULT_BYTES, listed_page
from evalsvc.storage.results.pages import LISTED_SCORE_BYTES, list_scored, score_pages, scored_page
from evalsvc.storage.results.scored import get_scored, put_scored, reasons_of

__all__ = [
    "DATASET_INDEX",
    "HEADER_SK",
    "LISTED_ATTRIBUTES",
    "LISTED_RESULT_BYTES",
    "LISTED_SCORE_BYTES",
    "POINTER_SK",
    "SELECTION_INLINE",
    "TENANT_INDEX",
    "completing",
    "dataset_list_pk",
    "failing",
    "get",
    "get_scored",
    "latest_for_dataset",
    "latest_pk",
    "list_pk",
    "list_scored",
    "list_sk",
    "listed_page",
    "put",
    "put_scored",
    "reasons_of",
    "result_pk",
    "running",
    "score_pages",
    "scored_page",
    "selection",
]
