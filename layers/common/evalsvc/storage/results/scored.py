"""A result's scored pairs as items, and their writes and reads by pair id.

A scored pair is one item under its result's partition (sk `p#<pair_id>`): its position in the
dataset, its scores and reasons, its clusters and the judge's samples."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence

from evalsvc.core.observability import logger
from evalsvc.models.evaluations import ScoredPair
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_list, get_n, get_s, n, s
from evalsvc.storage.results.keys import result_pk, table


def score_values(item: Item) -> list[float | None]:
    """A stored scored pair's scores: a number per metric, NULL where the metric is not
    applicable to the pair (E10)."""
    return [None if "NULL" in v else float(v["N"]) for v in item["scores"]["L"]]


def _score_value(score: float | None) -> Item:
    return {"NULL": True} if score is None else {"N": repr(score)}


def scored_item(pk: str, pair: ScoredPair) -> Item:
    """A scored pair: `lc`, `ic` and `cc` its label, input and conversation clusters (16
    characters each; no `lc` for an unlabelled pair, no `cc` for a pair without a
    conversation_id, so a pair without one is stored as before E11), `samples` the judge's k
    scores per metric as compact JSON (at most 5 digits per metric) when it was asked more
    than once."""
    item: Item = {
        "pk": s(pk),
        "sk": s(f"p#{pair.pair_id}"),
        "idx": n(pair.index),
        "scores": {"L": [_score_value(v) for v in pair.scores]},
        "reasons": dynamo.ss_list(pair.reasons),
    }
    if pair.label_cluster is not None:
        item["lc"] = s(pair.label_cluster)
    if pair.input_cluster is not None:
        item["ic"] = s(pair.input_cluster)
    if pair.conversation_cluster is not None:
        item["cc"] = s(pair.conversation_cluster)
    if pair.samples is not None:
        item["samples"] = s(json.dumps(pair.samples, separators=(",", ":")))
    if pair.judge_scores is not None:
        # E13: each judge's score per metric (at most 5 judges of 50 metrics: a few KB).
        item["js"] = s(json.dumps(pair.judge_scores, separators=(",", ":")))
    return item


def scored_from_item(item: Item) -> ScoredPair:
    samples = get_s(item, "samples")
    judged = get_s(item, "js")
    return ScoredPair(
        pair_id=item["sk"]["S"][2:],
        index=get_n(item, "idx"),
        scores=score_values(item),
        reasons=get_list(item, "reasons") if "reasons" in item else [""] * len(item["scores"]["L"]),
        label_cluster=get_s(item, "lc"),
        input_cluster=get_s(item, "ic"),
        samples=None if samples is None else [list(map(int, m)) for m in json.loads(samples)],
        conversation_cluster=get_s(item, "cc"),
        judge_scores=None if judged is None else [list(map(float, m)) for m in json.loads(judged)],
    )


def put_scored(tenant: str, results_id: str, scored: Sequence[ScoredPair]) -> None:
    """Store scored pairs (again, harmlessly, when a chunk is delivered twice)."""
    pk = result_pk(tenant, results_id)
    dynamo.batch_write(
        table(), [{"PutRequest": {"Item": scored_item(pk, pair)}} for pair in scored]
    )


def discard_scored(pk: str, scored: Sequence[ScoredPair]) -> None:
    """Remove the scored pairs of a failed evaluation, as best it can (a failure is logged)."""
    try:
        keys = [
            {"DeleteRequest": {"Key": {"pk": s(pk), "sk": s(f"p#{p.pair_id}")}}} for p in scored
        ]
        dynamo.batch_write(table(), keys)
    except Exception:
        logger.exception("could not remove the scored pairs of a failed evaluation")


def _scored_keys(tenant: str, results_id: str, pair_ids: Sequence[str]) -> list[Item]:
    """The keys of the result's scored pairs among `pair_ids`, each once."""
    pk = result_pk(tenant, results_id)
    return [{"pk": s(pk), "sk": s(f"p#{pid}")} for pid in dict.fromkeys(pair_ids)]


def get_scored(tenant: str, results_id: str, pair_ids: Sequence[str]) -> dict[str, ScoredPair]:
    """The scored pairs among `pair_ids` (absent ids are simply missing), by id."""
    keys = _scored_keys(tenant, results_id, pair_ids)
    pairs = (scored_from_item(item) for item in dynamo.batch_get(table(), keys))
    return {pair.pair_id: pair for pair in pairs}


def reasons_of(
    tenant: str, results_id: str, wanted: Mapping[str, Collection[int]]
) -> dict[tuple[str, int], str]:
    """The reasons `wanted` (pair id -> metric positions) of the result's scored pairs, by
    (pair id, position); only those are kept as the pairs are read, one response at a time."""
    keys = _scored_keys(tenant, results_id, list(wanted))
    found: dict[tuple[str, int], str] = {}
    for item in dynamo.batch_get(table(), keys, projection="sk, reasons"):
        pair_id = item["sk"]["S"][2:]
        reasons = item.get("reasons", {}).get("L", [])
        for idx in wanted.get(pair_id, ()):
            if idx < len(reasons):
                found[(pair_id, idx)] = reasons[idx]["S"]
    return found
