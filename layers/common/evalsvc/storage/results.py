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
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any, Literal, overload

from evalsvc.core.errors import Failure
from evalsvc.core.observability import logger
from evalsvc.core.settings import get_settings
from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import (
    ClusteredScores,
    EvaluationResult,
    ListedResult,
    LowScore,
    ResultInputs,
    ScoredPair,
)
from evalsvc.models.jobs import Piece, Status, members_from_text, members_text
from evalsvc.spending.meter import Usage
from evalsvc.statistics.error_bars import ClusteredMean
from evalsvc.statistics.scores import Summary
from evalsvc.storage import dynamo, texts
from evalsvc.storage.dynamo import Item, get_list, get_n, get_s, n, s
from evalsvc.storage.writes import Writes

HEADER_SK = "result"
POINTER_SK = "pointer"
TENANT_INDEX = "by_tenant"
DATASET_INDEX = "by_dataset"
# The width of created_ms in `list_sk`: milliseconds up to the year 33658.
_LIST_MS_DIGITS = 15


def _table() -> str:
    return get_settings().results_table


def result_pk(tenant: str, results_id: str) -> str:
    return f"T#{tenant}#R#{results_id}"


def latest_pk(tenant: str, kind: DatasetKind, dataset_id: str) -> str:
    return f"T#{tenant}#latest#{kind.value}#{dataset_id}"


def list_pk(tenant: str) -> str:
    return f"T#{tenant}"


def dataset_list_pk(tenant: str, dataset_id: str) -> str:
    return f"T#{tenant}#D#{dataset_id}"


def list_sk(created_ms: int, results_id: str) -> str:
    return f"{created_ms:0{_LIST_MS_DIGITS}d}#{results_id}"


def latest_for_dataset(tenant: str, kind: DatasetKind, dataset_id: str) -> str | None:
    """The id of the newest evaluation result of that dataset."""
    item = dynamo.get_item(
        _table(), {"pk": s(latest_pk(tenant, kind, dataset_id)), "sk": s(POINTER_SK)}
    )
    return get_s(item, "results_id") if item else None


def _scored_item(pk: str, pair: ScoredPair) -> Item:
    """A scored pair: `lc` and `ic` its label and input clusters (16 characters each; no `lc`
    for an unlabelled pair), `samples` the judge's k scores per metric as compact JSON (at
    most 5 digits per metric) when it was asked more than once."""
    item: Item = {
        "pk": s(pk),
        "sk": s(f"p#{pair.pair_id}"),
        "idx": n(pair.index),
        "scores": {"L": [{"N": repr(v)} for v in pair.scores]},
        "reasons": dynamo.ss_list(pair.reasons),
    }
    if pair.label_cluster is not None:
        item["lc"] = s(pair.label_cluster)
    if pair.input_cluster is not None:
        item["ic"] = s(pair.input_cluster)
    if pair.samples is not None:
        item["samples"] = s(json.dumps(pair.samples, separators=(",", ":")))
    return item


def _scored_from_item(item: Item) -> ScoredPair:
    samples = get_s(item, "samples")
    return ScoredPair(
        pair_id=item["sk"]["S"][2:],
        index=get_n(item, "idx"),
        scores=[float(v["N"]) for v in item["scores"]["L"]],
        reasons=get_list(item, "reasons") if "reasons" in item else [""] * len(item["scores"]["L"]),
        label_cluster=get_s(item, "lc"),
        input_cluster=get_s(item, "ic"),
        samples=None if samples is None else [list(map(int, m)) for m in json.loads(samples)],
    )


def _summaries(result: EvaluationResult) -> str:
    return json.dumps(
        [
            [x.mean, x.median, x.min, x.max, x.std_dev, x.ci_low, x.ci_high, x.ci_confidence]
            for x in result.summaries
        ]
    )


def _lowest(result: EvaluationResult) -> str:
    return json.dumps([[[low.pair_id, low.score] for low in metric] for metric in result.lowest])


def _histograms(result: EvaluationResult) -> Item:
    """The header's `histograms` attribute: per metric the five bin counts, as compact JSON
    (at most 50 metrics: about 2 KB); nothing until the result has them."""
    if result.histograms is None:
        return {}
    return {"histograms": s(json.dumps(result.histograms, separators=(",", ":")))}


def _histograms_from_item(item: Item) -> list[list[int]] | None:
    stored = get_s(item, "histograms")
    if stored is None:
        return None  # stored before histograms were kept, or not complete
    return [[int(count) for count in metric] for metric in json.loads(stored)]


def _error_bars(result: EvaluationResult) -> Item:
    """E6's attributes of a header: `cluster_by` and `judge_samples` (k > 1) as asked, and once
    complete `clustered` (per metric [n, G, mean, se, low, high, confidence]) and
    `judge_noise` (per metric the sd or null), compact JSON: at most 50 metrics, a few KB."""
    item: Item = {}
    if result.cluster_by is not None:
        item["cluster_by"] = s(result.cluster_by)
    if result.judge_samples != 1:
        item["judge_samples"] = n(result.judge_samples)
    if result.clustered is not None:
        item["clustered"] = s(
            json.dumps(
                [_clustered_row(c) for c in result.clustered],
                separators=(",", ":"),
            )
        )
    if result.judge_noise is not None:
        item["judge_noise"] = s(json.dumps(result.judge_noise, separators=(",", ":")))
    return item


def _clustered_row(c: ClusteredMean) -> list[float | int | None]:
    return [
        c.n,
        c.clusters,
        c.mean,
        c.se_clustered,
        c.ci_low_clustered,
        c.ci_high_clustered,
        c.confidence,
    ]


def _clustered_from_item(item: Item) -> list[ClusteredMean] | None:
    stored = get_s(item, "clustered")
    if stored is None:
        return None
    return [
        ClusteredMean(int(n_), int(g), mean, se, low, high, confidence)
        for n_, g, mean, se, low, high, confidence in json.loads(stored)
    ]


def _header_item(result: EvaluationResult) -> Item:
    return {
        "pk": s(result_pk(result.tenant, result.results_id)),
        "sk": s(HEADER_SK),
        "list_pk": s(list_pk(result.tenant)),
        "list_dpk": s(dataset_list_pk(result.tenant, result.dataset_id)),
        "list_sk": s(list_sk(result.created_ms, result.results_id)),
        "results_id": s(result.results_id),
        "created_ms": n(result.created_ms),
        "dataset_id": s(result.dataset_id),
        "dataset_kind": s(result.dataset_kind.value),
        "metrics_id": s(result.metrics_id),
        **texts.list_field(_table(), result.tenant, "definitions", result.definitions),
        **texts.text_field(_table(), result.tenant, "system_prompt", result.system_prompt),
        "pair_count": n(result.pair_count),
        "summaries": s(_summaries(result)),
        "lowest": s(_lowest(result)),
        "bytes_done": n(result.scored_bytes or 0),
        "usage": s(json.dumps(result.usage.as_dict())),
        **_histograms(result),
        **_error_bars(result),
        **_inputs(result),
    }


def _inputs(result: EvaluationResult) -> Item:
    if result.inputs is None:
        return {}
    return {"inputs": s(json.dumps(dataclasses.asdict(result.inputs), separators=(",", ":")))}


def _inputs_from_item(item: Item) -> ResultInputs | None:
    if "inputs" not in item:
        return None
    return ResultInputs(**json.loads(get_s(item, "inputs") or "{}"))


def _selection_field(tenant: str, pieces: Sequence[Piece]) -> Item:
    """The attributes that keep the pieces of what a result scored (kept apart, in parts,
    when long: 8 bytes a pair, about 1.1 MB of text for 100,000 pairs)."""
    if not pieces:
        return {}
    rows = [[p.first_ord, p.last_ord, p.count, members_text(p.members)] for p in pieces]
    text = json.dumps(rows, separators=(",", ":"))
    return texts.text_field(_table(), tenant, "selection", text, inline_bytes=SELECTION_INLINE)


# A header keeps the pieces of a selection of up to about 1,000 pairs itself.
SELECTION_INLINE = 12 * 1024


def selection(tenant: str, results_id: str) -> list[Piece] | None:
    """The pieces of the pairs the result scored, in dataset order (None: the result is not
    stored, or was stored before they were kept)."""
    item = dynamo.get_item(
        _table(),
        _header_key(tenant, results_id),
    )
    if item is None or ("selection" not in item and "selection_ref" not in item):
        return None
    rows = json.loads(texts.read_text(_table(), tenant, item, "selection") or "[]")
    pieces = []
    for first, last, count, members in rows:
        kept = members_from_text(members)
        pieces.append(Piece(str(first), str(last), int(count), kept or b""))
    return pieces


def _result_from_item(tenant: str, item: Item) -> EvaluationResult:
    return EvaluationResult(
        tenant=tenant,
        results_id=get_s(item, "results_id") or "",
        created_ms=get_n(item, "created_ms"),
        dataset_id=get_s(item, "dataset_id") or "",
        dataset_kind=DatasetKind(get_s(item, "dataset_kind") or ""),
        metrics_id=get_s(item, "metrics_id") or "",
        definitions=texts.read_list(_table(), tenant, item, "definitions"),
        system_prompt=texts.read_text(_table(), tenant, item, "system_prompt"),
        pair_count=get_n(item, "pair_count"),
        summaries=[Summary(*values) for values in json.loads(get_s(item, "summaries") or "[]")],
        lowest=[
            [LowScore(pair_id, score) for pair_id, score in metric]
            for metric in json.loads(get_s(item, "lowest") or "[]")
        ],
        status=Status(get_s(item, "status") or Status.COMPLETE.value),
        pairs_done=get_n(item, "pairs_done", get_n(item, "pair_count")),
        failure=get_s(item, "failure", "") or "",
        failure_error=get_s(item, "failure_error", "") or "",
        scored_bytes=get_n(item, "bytes_done") if "bytes_done" in item else None,
        usage=Usage.from_dict(json.loads(get_s(item, "usage") or "{}")),
        histograms=_histograms_from_item(item),
        cluster_by=get_s(item, "cluster_by"),
        judge_samples=get_n(item, "judge_samples", 1),
        clustered=_clustered_from_item(item),
        judge_noise=(
            json.loads(get_s(item, "judge_noise") or "null") if "judge_noise" in item else None
        ),
        inputs=_inputs_from_item(item),
    )


# ---- lists of results (the sparse indexes by_tenant and by_dataset) ------------------------------

# What the list indexes project (template.yaml), besides their keys: what a list shows.
LISTED_ATTRIBUTES = (
    "results_id",
    "dataset_id",
    "dataset_kind",
    "metrics_id",
    "status",
    "pair_count",
    "created_ms",
)

# What a listed result adds to GET /evaluations besides its three ids: keys, quotes, the status,
# the pair count and the time.
LISTED_RESULT_BYTES = 160


def _listed_bytes(item: Item) -> int:
    ids = (get_s(item, name) or "" for name in ("results_id", "dataset_id", "metrics_id"))
    return sum(len(value.encode()) for value in ids) + LISTED_RESULT_BYTES


def _listed_from_item(item: Item) -> ListedResult:
    return ListedResult(
        results_id=get_s(item, "results_id") or "",
        created_ms=get_n(item, "created_ms"),
        dataset_id=get_s(item, "dataset_id") or "",
        dataset_kind=DatasetKind(get_s(item, "dataset_kind") or ""),
        metrics_id=get_s(item, "metrics_id") or "",
        status=Status(get_s(item, "status") or Status.COMPLETE.value),
        pair_count=get_n(item, "pair_count"),
    )


def listed_page(
    tenant: str,
    dataset_id: str | None,
    after: tuple[int, str] | None,
    limit: int,
    max_bytes: int,
) -> tuple[list[ListedResult], bool]:
    """The tenant's results newest first (those of `dataset_id` only, when given, whatever its
    kind), after the one created at (created_ms, results_id) `after` (None: from the newest);
    at most `limit` and no more than make `max_bytes` (at least one); and whether more follow.
    One Query of an index (limit + 1 items, to know whether more follow). Every key comes from
    `tenant`: `after` only says where to start within the tenant's own entries."""
    if dataset_id is None:
        index, key, value = TENANT_INDEX, "list_pk", list_pk(tenant)
    else:
        index, key, value = DATASET_INDEX, "list_dpk", dataset_list_pk(tenant, dataset_id)
    query: dict[str, Any] = {
        "TableName": _table(),
        "IndexName": index,
        "KeyConditionExpression": f"{key} = :pk",
        "ExpressionAttributeValues": {":pk": s(value)},
        "ScanIndexForward": False,
    }
    if after is not None:
        created_ms, results_id = after
        query["ExclusiveStartKey"] = {
            key: s(value),
            "list_sk": s(list_sk(created_ms, results_id)),
            **_header_key(tenant, results_id),
        }
    items, more = dynamo.query_bounded(
        max_items=limit, max_bytes=max_bytes, size=_listed_bytes, **query
    )
    return [_listed_from_item(item) for item in items], more


def put(
    result: EvaluationResult, scored: Sequence[ScoredPair], pieces: Sequence[Piece] = ()
) -> None:
    """Store the scored pairs, then the header that makes the result exist (with `pieces`,
    what it scored)."""
    pk = result_pk(result.tenant, result.results_id)
    result.scored_bytes = sum(pair.listed_bytes for pair in scored)
    requests = [{"PutRequest": {"Item": _scored_item(pk, pair)}} for pair in scored]
    try:
        dynamo.batch_write(_table(), requests)
        pointer = {
            "pk": s(latest_pk(result.tenant, result.dataset_kind, result.dataset_id)),
            "sk": s(POINTER_SK),
            "results_id": s(result.results_id),
        }
        dynamo.call(
            "transact_write_items",
            TransactItems=[
                {
                    "Put": {
                        "TableName": _table(),
                        "Item": {
                            **_header_item(result),
                            **_selection_field(result.tenant, pieces),
                        },
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {"Put": {"TableName": _table(), "Item": pointer}},
            ],
        )
    except BaseException:
        stored = get(result.tenant, result.results_id)
        if stored is not None and stored.created_ms == result.created_ms:
            # The commit went through though its answer was lost: the result stands.
            logger.warning("a result commit succeeded unanswered", extra={"id": result.results_id})
            return
        _discard(pk, scored)
        raise


def _discard(pk: str, scored: Sequence[ScoredPair]) -> None:
    try:
        keys = [
            {"DeleteRequest": {"Key": {"pk": s(pk), "sk": s(f"p#{p.pair_id}")}}} for p in scored
        ]
        dynamo.batch_write(_table(), keys)
    except Exception:
        logger.exception("could not remove the scored pairs of a failed evaluation")


def get(tenant: str, results_id: str) -> EvaluationResult | None:
    item = dynamo.get_item(_table(), {"pk": s(result_pk(tenant, results_id)), "sk": s(HEADER_SK)})
    return _result_from_item(tenant, item) if item else None


def _scored_keys(tenant: str, results_id: str, pair_ids: Sequence[str]) -> list[Item]:
    """The keys of the result's scored pairs among `pair_ids`, each once."""
    pk = result_pk(tenant, results_id)
    return [{"pk": s(pk), "sk": s(f"p#{pid}")} for pid in dict.fromkeys(pair_ids)]


def get_scored(tenant: str, results_id: str, pair_ids: Sequence[str]) -> dict[str, ScoredPair]:
    """The scored pairs among `pair_ids` (absent ids are simply missing), by id."""
    keys = _scored_keys(tenant, results_id, pair_ids)
    pairs = (_scored_from_item(item) for item in dynamo.batch_get(_table(), keys))
    return {pair.pair_id: pair for pair in pairs}


def _scored_query(tenant: str, results_id: str) -> dict[str, Any]:
    """The Query of every scored pair of the result, in pair id order."""
    return {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
        "ExpressionAttributeValues": {
            ":pk": s(result_pk(tenant, results_id)),
            ":prefix": s("p#"),
        },
        "ConsistentRead": True,
    }


def list_scored(tenant: str, results_id: str, *, with_reasons: bool = True) -> list[ScoredPair]:
    """Every scored pair of the result, in dataset order; without their reasons (empty) when
    only the scores are needed (far less to hold for a large result)."""
    query = _scored_query(tenant, results_id)
    if not with_reasons:
        query["ProjectionExpression"] = "sk, idx, scores"
    pairs = [_scored_from_item(item) for item in dynamo.query_items(**query)]
    return sorted(pairs, key=lambda p: p.index)


@overload
def score_pages(
    tenant: str, results_id: str, *, clusters: Literal[False] = False
) -> Iterator[list[tuple[str, list[float]]]]: ...


@overload
def score_pages(
    tenant: str, results_id: str, *, clusters: Literal[True]
) -> Iterator[list[ClusteredScores]]: ...


def score_pages(
    tenant: str, results_id: str, *, clusters: bool = False
) -> Iterator[list[tuple[str, list[float]]]] | Iterator[list[ClusteredScores]]:
    """The scored pairs of the result as (pair id, scores), one DynamoDB page at a time, in pair
    id order (by UTF-8 bytes, which is code point order); with `clusters`, as (pair id, scores,
    label cluster, input cluster) (ClusteredScores). Reasons are not read: a page costs the
    same, but what comes back and is held is a small part of it. The clusters are projected
    only when asked for: 32 more characters per pair to hold and pass on."""
    query = _scored_query(tenant, results_id)
    if not clusters:
        query["ProjectionExpression"] = "sk, scores"
        return (
            [(item["sk"]["S"][2:], [float(v["N"]) for v in item["scores"]["L"]]) for item in page]
            for page in dynamo.query_pages(**query)
        )
    query["ProjectionExpression"] = "sk, scores, lc, ic"
    return (
        [
            (
                item["sk"]["S"][2:],
                [float(v["N"]) for v in item["scores"]["L"]],
                get_s(item, "lc"),
                get_s(item, "ic"),
            )
            for item in page
        ]
        for page in dynamo.query_pages(**query)
    )


def reasons_of(
    tenant: str, results_id: str, wanted: Mapping[str, Collection[int]]
) -> dict[tuple[str, int], str]:
    """The reasons `wanted` (pair id -> metric positions) of the result's scored pairs, by
    (pair id, position); only those are kept as the pairs are read, one response at a time."""
    keys = _scored_keys(tenant, results_id, list(wanted))
    found: dict[tuple[str, int], str] = {}
    for item in dynamo.batch_get(_table(), keys, projection="sk, reasons"):
        pair_id = item["sk"]["S"][2:]
        reasons = item.get("reasons", {}).get("L", [])
        for idx in wanted.get(pair_id, ()):
            if idx < len(reasons):
                found[(pair_id, idx)] = reasons[idx]["S"]
    return found


# What listing a scored pair under one metric adds to its reason and id: keys, quotes, score.
LISTED_SCORE_BYTES = 40


def _listed_scored_bytes(item: Item) -> int:
    """What a stored scored pair takes in `all_scored_pairs`: under each metric, its reason,
    its id and LISTED_SCORE_BYTES."""
    pair_id = len(item["sk"]["S"].encode()) - 2
    reasons = [len(v["S"].encode()) for v in item.get("reasons", {}).get("L", [])]
    return sum(reason + pair_id + LISTED_SCORE_BYTES for reason in reasons)


def scored_page(
    tenant: str, results_id: str, after: str, limit: int, max_bytes: int
) -> tuple[list[ScoredPair], bool]:
    """Scored pairs in pair id order after pair id `after` ("" from the first), at most `limit`
    and no more than make `max_bytes` (at least one); and whether more follow."""
    query = _scored_query(tenant, results_id)
    if after:
        query["ExclusiveStartKey"] = {"pk": s(result_pk(tenant, results_id)), "sk": s(f"p#{after}")}
    items, more = dynamo.query_bounded(
        max_items=limit, max_bytes=max_bytes, size=_listed_scored_bytes, **query
    )
    return [_scored_from_item(item) for item in items], more


# ---- queued evaluations (their jobs: logic.jobs) ------------------------------------------------


def _header_key(tenant: str, results_id: str) -> Item:
    return {"pk": s(result_pk(tenant, results_id)), "sk": s(HEADER_SK)}


def running(result: EvaluationResult, pieces: Sequence[Piece] = ()) -> Writes:
    """The write that makes the result exist, running (with its job, and `pieces`, what it
    scores); refused when it exists."""
    item = {**_header_item(result), **_selection_field(result.tenant, pieces)}
    item["status"] = s(Status.RUNNING.value)
    put = {"TableName": _table(), "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
    return Writes([{"Put": put}])


def put_scored(tenant: str, results_id: str, scored: Sequence[ScoredPair]) -> None:
    """Store scored pairs (again, harmlessly, when a chunk is delivered twice)."""
    pk = result_pk(tenant, results_id)
    dynamo.batch_write(
        _table(), [{"PutRequest": {"Item": _scored_item(pk, pair)}} for pair in scored]
    )


def completing(result: EvaluationResult) -> Writes:
    """The writes that store the statistics and score histograms, mark the result complete
    and make it the dataset's newest."""
    pointer = {
        "pk": s(latest_pk(result.tenant, result.dataset_kind, result.dataset_id)),
        "sk": s(POINTER_SK),
        "results_id": s(result.results_id),
    }
    values = {
        ":complete": s(Status.COMPLETE.value),
        ":usage": s(json.dumps(result.usage.as_dict())),
        ":summaries": s(_summaries(result)),
        ":lowest": s(_lowest(result)),
        ":pairs": n(result.pairs_done),
        ":bytes": n(result.scored_bytes or 0),
    }
    expression = (
        "SET #status = :complete, summaries = :summaries, lowest = :lowest, "
        "pairs_done = :pairs, bytes_done = :bytes, #usage = :usage"
    )
    histograms = _histograms(result)
    if histograms:
        expression += ", histograms = :histograms"
        values[":histograms"] = histograms["histograms"]
    figures = {**_error_bars(result), **_inputs(result)}
    names = {"#status": "status", "#usage": "usage"}
    for name in ("clustered", "judge_noise", "inputs"):  # "clustered" is a reserved word
        if name in figures:
            expression += f", #{name} = :{name}"
            names[f"#{name}"] = name
            values[f":{name}"] = figures[name]
    update = {
        "TableName": _table(),
        "Key": _header_key(result.tenant, result.results_id),
        "UpdateExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
    return Writes([{"Update": update}, {"Put": {"TableName": _table(), "Item": pointer}}])


def failing(tenant: str, results_id: str, failure: Failure) -> Writes:
    """The write that marks the result failed, saying why."""
    update = {
        "TableName": _table(),
        "Key": _header_key(tenant, results_id),
        "UpdateExpression": "SET #status = :failed, failure = :reason, failure_error = :error",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {
            ":failed": s(Status.FAILED.value),
            ":reason": s(failure.message),
            ":error": s(failure.error),
        },
    }
    return Writes([{"Update": update}])
