"""A result's header as an item, and its reads: the result, what it scored (its selection) and
the dataset's pointer to its newest result. What the header keeps: the package's docstring
(storage.results)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence

from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import EvaluationResult, LowScore, ResultInputs
from evalsvc.models.jobs import Piece, Status, members_from_text, members_text
from evalsvc.models.metric_sets import Aggregate
from evalsvc.spending.meter import Usage
from evalsvc.statistics.error_bars import ClusteredMean
from evalsvc.statistics.jury import JuryFigures
from evalsvc.statistics.scores import Summary
from evalsvc.storage import dynamo, texts
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s
from evalsvc.storage.results.keys import (
    HEADER_SK,
    POINTER_SK,
    dataset_list_pk,
    header_key,
    latest_pk,
    list_pk,
    list_sk,
    result_pk,
    table,
)

# A header keeps the pieces of a selection of up to about 1,000 pairs itself.
SELECTION_INLINE = 12 * 1024


def latest_for_dataset(tenant: str, kind: DatasetKind, dataset_id: str) -> str | None:
    """The id of the newest evaluation result of that dataset."""
    item = dynamo.get_item(
        table(), {"pk": s(latest_pk(tenant, kind, dataset_id)), "sk": s(POINTER_SK)}
    )
    return get_s(item, "results_id") if item else None


def get(tenant: str, results_id: str) -> EvaluationResult | None:
    item = dynamo.get_item(table(), {"pk": s(result_pk(tenant, results_id)), "sk": s(HEADER_SK)})
    return _result_from_item(tenant, item) if item else None


def selection(tenant: str, results_id: str) -> list[Piece] | None:
    """The pieces of the pairs the result scored, in dataset order (None: the result is not
    stored, or was stored before they were kept)."""
    item = dynamo.get_item(
        table(),
        header_key(tenant, results_id),
    )
    if item is None or ("selection" not in item and "selection_ref" not in item):
        return None
    rows = json.loads(texts.read_text(table(), tenant, item, "selection") or "[]")
    pieces = []
    for first, last, count, members in rows:
        kept = members_from_text(members)
        pieces.append(Piece(str(first), str(last), int(count), kept or b""))
    return pieces


def selection_field(tenant: str, pieces: Sequence[Piece]) -> Item:
    """The attributes that keep the pieces of what a result scored (kept apart, in parts,
    when long: 8 bytes a pair, about 1.1 MB of text for 100,000 pairs)."""
    if not pieces:
        return {}
    rows = [[p.first_ord, p.last_ord, p.count, members_text(p.members)] for p in pieces]
    text = json.dumps(rows, separators=(",", ":"))
    return texts.text_field(table(), tenant, "selection", text, inline_bytes=SELECTION_INLINE)


def header_item(result: EvaluationResult) -> Item:
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
        **texts.list_field(table(), result.tenant, "definitions", result.definitions),
        **texts.text_field(table(), result.tenant, "system_prompt", result.system_prompt),
        "pair_count": n(result.pair_count),
        "summaries": s(summaries_json(result)),
        "lowest": s(lowest_json(result)),
        "bytes_done": n(result.scored_bytes or 0),
        "usage": s(json.dumps(result.usage.as_dict())),
        **histograms_field(result),
        **error_bars_fields(result),
        **inputs_field(result),
    }


def _result_from_item(tenant: str, item: Item) -> EvaluationResult:
    judges, aggregate = _jury_from_item(item)
    return EvaluationResult(
        tenant=tenant,
        results_id=get_s(item, "results_id") or "",
        created_ms=get_n(item, "created_ms"),
        dataset_id=get_s(item, "dataset_id") or "",
        dataset_kind=DatasetKind(get_s(item, "dataset_kind") or ""),
        metrics_id=get_s(item, "metrics_id") or "",
        definitions=texts.read_list(table(), tenant, item, "definitions"),
        system_prompt=texts.read_text(table(), tenant, item, "system_prompt"),
        pair_count=get_n(item, "pair_count"),
        summaries=[
            None if values is None else Summary(*values)
            for values in json.loads(get_s(item, "summaries") or "[]")
        ],
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
        not_applicable=_not_applicable_from_item(item),
        judges=judges,
        jury=aggregate,
        juries=_juries_from_item(item, judges, aggregate),
    )


def summaries_json(result: EvaluationResult) -> str:
    return json.dumps(
        [
            [x.mean, x.median, x.min, x.max, x.std_dev, x.ci_low, x.ci_high, x.ci_confidence]
            if x is not None
            else None
            for x in result.summaries
        ]
    )


def lowest_json(result: EvaluationResult) -> str:
    return json.dumps([[[low.pair_id, low.score] for low in metric] for metric in result.lowest])


def histograms_field(result: EvaluationResult) -> Item:
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


def error_bars_fields(result: EvaluationResult) -> Item:
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
    if result.not_applicable is not None and any(result.not_applicable):
        item["not_applicable"] = s(json.dumps(result.not_applicable, separators=(",", ":")))
    if result.judges:
        # E13: the jury as the result was asked to use it (its figures once complete).
        item["judges"] = s(json.dumps({"judges": result.judges, "jury": result.jury}))
    if result.juries is not None:
        item["juries"] = s(
            json.dumps(
                [None if j is None else [j.alpha, j.means] for j in result.juries],
                separators=(",", ":"),
            )
        )
    return item


def _jury_from_item(item: Item) -> tuple[list[str] | None, Aggregate]:
    stored = get_s(item, "judges")
    if stored is None:
        return None, "mean"
    value = json.loads(stored)
    return [str(name) for name in value["judges"]], value["jury"]


def _juries_from_item(
    item: Item, judges: list[str] | None, aggregate: str
) -> list[JuryFigures | None] | None:
    stored = get_s(item, "juries")
    if stored is None or judges is None:
        return None
    return [
        None if row is None else JuryFigures(list(judges), aggregate, row[0], list(row[1]))
        for row in json.loads(stored)
    ]


def _clustered_row(c: ClusteredMean | None) -> list[float | int | None] | None:
    if c is None:
        return None
    return [
        c.n,
        c.clusters,
        c.mean,
        c.se_clustered,
        c.ci_low_clustered,
        c.ci_high_clustered,
        c.confidence,
    ]


def _clustered_from_item(item: Item) -> list[ClusteredMean | None] | None:
    stored = get_s(item, "clustered")
    if stored is None:
        return None
    return [
        None if row is None else ClusteredMean(int(row[0]), int(row[1]), *row[2:7])
        for row in json.loads(stored)
    ]


def _not_applicable_from_item(item: Item) -> list[int] | None:
    """Per metric the pairs it was not applicable to; None when none was (or stored before)."""
    stored = get_s(item, "not_applicable")
    return None if stored is None else [int(count) for count in json.loads(stored)]


def inputs_field(result: EvaluationResult) -> Item:
    if result.inputs is None:
        return {}
    return {"inputs": s(json.dumps(dataclasses.asdict(result.inputs), separators=(",", ":")))}


def _inputs_from_item(item: Item) -> ResultInputs | None:
    if "inputs" not in item:
        return None
    return ResultInputs(**json.loads(get_s(item, "inputs") or "{}"))
