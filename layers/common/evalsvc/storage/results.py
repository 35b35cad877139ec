"""The results table: one header per evaluation result and one item per scored pair.

    pk                                  sk           what
    T#<tenant>#R#<results_id>           result       dataset, metrics, definitions, statistics…
    T#<tenant>#R#<results_id>           p#<pair_id>  the pair's position, scores and reasons
    T#<tenant>#latest#<kind>#<dataset>  pointer      the dataset's newest result

The scored pairs are written first and the header last, with a condition: until the header
exists the result does not, so a failure part-way stores nothing a reader can see.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import EvaluationResult, LowScore, ScoredPair
from evalsvc.observability import logger
from evalsvc.settings import get_settings
from evalsvc.stats import Summary
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_list, get_n, get_s, n, s

HEADER_SK = "result"
POINTER_SK = "pointer"


def _table() -> str:
    return get_settings().results_table


def result_pk(tenant: str, results_id: str) -> str:
    return f"T#{tenant}#R#{results_id}"


def latest_pk(tenant: str, kind: DatasetKind, dataset_id: str) -> str:
    return f"T#{tenant}#latest#{kind.value}#{dataset_id}"


def latest_for_dataset(tenant: str, kind: DatasetKind, dataset_id: str) -> str | None:
    """The id of the newest evaluation result of that dataset."""
    item = dynamo.get_item(
        _table(), {"pk": s(latest_pk(tenant, kind, dataset_id)), "sk": s(POINTER_SK)}
    )
    return get_s(item, "results_id") if item else None


def _scored_item(pk: str, pair: ScoredPair) -> Item:
    return {
        "pk": s(pk),
        "sk": s(f"p#{pair.pair_id}"),
        "idx": n(pair.index),
        "scores": {"L": [{"N": repr(v)} for v in pair.scores]},
        "reasons": dynamo.ss_list(pair.reasons),
    }


def _scored_from_item(item: Item) -> ScoredPair:
    return ScoredPair(
        pair_id=item["sk"]["S"][2:],
        index=get_n(item, "idx"),
        scores=[float(v["N"]) for v in item["scores"]["L"]],
        reasons=get_list(item, "reasons"),
    )


def _header_item(result: EvaluationResult) -> Item:
    summaries = [
        [x.mean, x.median, x.min, x.max, x.std_dev, x.ci_low, x.ci_high, x.ci_confidence]
        for x in result.summaries
    ]
    lowest = [[[low.pair_id, low.score] for low in metric] for metric in result.lowest]
    return {
        "pk": s(result_pk(result.tenant, result.results_id)),
        "sk": s(HEADER_SK),
        "results_id": s(result.results_id),
        "created_ms": n(result.created_ms),
        "dataset_id": s(result.dataset_id),
        "dataset_kind": s(result.dataset_kind.value),
        "metrics_id": s(result.metrics_id),
        "definitions": dynamo.ss_list(result.definitions),
        "system_prompt": s(result.system_prompt),
        "pair_count": n(result.pair_count),
        "summaries": s(json.dumps(summaries)),
        "lowest": s(json.dumps(lowest)),
    }


def _result_from_item(tenant: str, item: Item) -> EvaluationResult:
    return EvaluationResult(
        tenant=tenant,
        results_id=get_s(item, "results_id") or "",
        created_ms=get_n(item, "created_ms"),
        dataset_id=get_s(item, "dataset_id") or "",
        dataset_kind=DatasetKind(get_s(item, "dataset_kind")),
        metrics_id=get_s(item, "metrics_id") or "",
        definitions=get_list(item, "definitions"),
        system_prompt=get_s(item, "system_prompt", "") or "",
        pair_count=get_n(item, "pair_count"),
        summaries=[Summary(*values) for values in json.loads(get_s(item, "summaries") or "[]")],
        lowest=[
            [LowScore(pair_id, score) for pair_id, score in metric]
            for metric in json.loads(get_s(item, "lowest") or "[]")
        ],
    )


def put(result: EvaluationResult, scored: Sequence[ScoredPair]) -> None:
    """Store the scored pairs, then the header that makes the result exist."""
    pk = result_pk(result.tenant, result.results_id)
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
                        "Item": _header_item(result),
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {"Put": {"TableName": _table(), "Item": pointer}},
            ],
        )
    except BaseException:
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


def get_scored(tenant: str, results_id: str, pair_ids: Sequence[str]) -> dict[str, ScoredPair]:
    """The scored pairs among `pair_ids` (absent ids are simply missing), by id."""
    pk = result_pk(tenant, results_id)
    keys = [{"pk": s(pk), "sk": s(f"p#{pid}")} for pid in dict.fromkeys(pair_ids)]
    pairs = (_scored_from_item(item) for item in dynamo.batch_get(_table(), keys))
    return {pair.pair_id: pair for pair in pairs}


def list_scored(tenant: str, results_id: str) -> list[ScoredPair]:
    """Every scored pair of the result, in dataset order."""
    pairs = [
        _scored_from_item(item)
        for item in dynamo.query_items(
            TableName=_table(),
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": s(result_pk(tenant, results_id)), ":prefix": s("p#")},
            ConsistentRead=True,
        )
    ]
    return sorted(pairs, key=lambda p: p.index)
