"""The critiques table: human votes and comments on scored pairs, one per (pair, metric, user).

pk                          sk                                        what
T#<tenant>#R#<results_id>   c#<metric_idx>#<pair_id>#<sha256(user)>   vote, comment, time
"""

from __future__ import annotations

import hashlib
from typing import Any

from evalsvc.models.evaluations import Critique
from evalsvc.settings import get_settings
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s
from evalsvc.storage.results import result_pk


def _table() -> str:
    return get_settings().critiques_table


def _from_item(item: Item) -> Critique:
    return Critique(
        id=get_s(item, "id") or "",
        pair_id=get_s(item, "pair_id") or "",
        metric_idx=get_n(item, "metric_idx"),
        comment=get_s(item, "comment", "") or "",
        vote=get_n(item, "vote"),
        user=get_s(item, "user") or "",
        user_email=get_s(item, "user_email") or "",
        time_ms=get_n(item, "time_ms"),
    )


def upsert(tenant: str, results_id: str, critique: Critique) -> Critique:
    """Record the vote; the same user's earlier vote on that pair and metric is replaced (it
    keeps its id and takes the new time)."""
    user_key = hashlib.sha256(critique.user.encode()).hexdigest()[:32]
    response = dynamo.call(
        "update_item",
        TableName=_table(),
        Key={
            "pk": s(result_pk(tenant, results_id)),
            "sk": s(f"c#{critique.metric_idx}#{critique.pair_id}#{user_key}"),
        },
        UpdateExpression=(
            "SET #id = if_not_exists(#id, :id), pair_id = :pair_id, metric_idx = :metric_idx, "
            "#comment = :comment, vote = :vote, #user = :user, user_email = :email, time_ms = :time"
        ),
        ExpressionAttributeNames={"#id": "id", "#comment": "comment", "#user": "user"},
        ExpressionAttributeValues={
            ":id": s(critique.id),
            ":pair_id": s(critique.pair_id),
            ":metric_idx": n(critique.metric_idx),
            ":comment": s(critique.comment),
            ":vote": n(critique.vote),
            ":user": s(critique.user),
            ":email": s(critique.user_email),
            ":time": n(critique.time_ms),
        },
        ReturnValues="ALL_NEW",
    )
    return _from_item(response["Attributes"])


def _query(tenant: str, results_id: str) -> dict[str, Any]:
    return {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk",
        "ExpressionAttributeValues": {":pk": s(result_pk(tenant, results_id))},
        "ConsistentRead": True,
    }


def list_for(tenant: str, results_id: str, max_bytes: int | None = None) -> list[Critique]:
    """Every critique of the result, oldest first. With `max_bytes`, TooMany as soon as they
    take more than that, without reading the rest."""
    query = _query(tenant, results_id)
    if max_bytes is None:
        items = list(dynamo.query_items(**query))
    else:
        items, more = dynamo.query_bounded(max_items=None, max_bytes=max_bytes, **query)
        if more:
            raise TooMany(results_id)
    return sorted(map(_from_item, items), key=lambda c: (c.time_ms, c.id))


def page(
    tenant: str, results_id: str, after: str, limit: int, max_bytes: int
) -> tuple[list[Critique], str | None]:
    """Critiques in key order (metric, pair, user) after key `after` ("" from the first), at
    most `limit` and no more than make `max_bytes` (at least one); and the key to go on after,
    None when none follow."""
    query = _query(tenant, results_id)
    if after:
        query["ExclusiveStartKey"] = {
            "pk": query["ExpressionAttributeValues"][":pk"],
            "sk": s(after),
        }
    items, more = dynamo.query_bounded(max_items=limit, max_bytes=max_bytes, **query)
    return [_from_item(item) for item in items], items[-1]["sk"]["S"] if more else None


class TooMany(Exception):
    """A result's critiques take more than the read may hold."""
