"""Every scored pair of a result, by Query of its partition: all at once (list_scored), one
DynamoDB page of scores at a time, with their clusters when asked (score_pages), or a bounded
page of whole pairs after a pair id (scored_page)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, overload

from evalsvc.models.evaluations import ClusteredScores, ScoredPair
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_s, s
from evalsvc.storage.results.keys import result_pk, table
from evalsvc.storage.results.scored import score_values, scored_from_item

# What listing a scored pair under one metric adds to its reason and id: keys, quotes, score.
LISTED_SCORE_BYTES = 40


def scored_query(tenant: str, results_id: str) -> dict[str, Any]:
    """The Query of every scored pair of the result, in pair id order."""
    return {
        "TableName": table(),
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
    query = scored_query(tenant, results_id)
    if not with_reasons:
        query["ProjectionExpression"] = "sk, idx, scores"
    pairs = [scored_from_item(item) for item in dynamo.query_items(**query)]
    return sorted(pairs, key=lambda p: p.index)


@overload
def score_pages(
    tenant: str, results_id: str, *, clusters: Literal[False] = False
) -> Iterator[list[tuple[str, list[float | None]]]]: ...


@overload
def score_pages(
    tenant: str, results_id: str, *, clusters: Literal[True]
) -> Iterator[list[ClusteredScores]]: ...


def score_pages(
    tenant: str, results_id: str, *, clusters: bool = False
) -> Iterator[list[tuple[str, list[float | None]]]] | Iterator[list[ClusteredScores]]:
    """The scored pairs of the result as (pair id, scores), one DynamoDB page at a time, in pair
    id order (by UTF-8 bytes, which is code point order); with `clusters`, as (pair id, scores,
    label cluster, input cluster, conversation cluster) (ClusteredScores). Reasons are not
    read: a page costs the same, but what comes back and is held is a small part of it. The
    clusters are projected only when asked for: up to 48 more characters per pair to hold and
    pass on."""
    query = scored_query(tenant, results_id)
    if not clusters:
        query["ProjectionExpression"] = "sk, scores"
        return (
            [(item["sk"]["S"][2:], score_values(item)) for item in page]
            for page in dynamo.query_pages(**query)
        )
    query["ProjectionExpression"] = "sk, scores, lc, ic, cc"
    return (
        [
            (
                item["sk"]["S"][2:],
                score_values(item),
                get_s(item, "lc"),
                get_s(item, "ic"),
                get_s(item, "cc"),
            )
            for item in page
        ]
        for page in dynamo.query_pages(**query)
    )


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
    query = scored_query(tenant, results_id)
    if after:
        query["ExclusiveStartKey"] = {"pk": s(result_pk(tenant, results_id)), "sk": s(f"p#{after}")}
    items, more = dynamo.query_bounded(
        max_items=limit, max_bytes=max_bytes, size=_listed_scored_bytes, **query
    )
    return [scored_from_item(item) for item in items], more
