"""The critiques table: human votes and comments on scored pairs, one per (pair, metric, user).

pk                          sk                                        what
T#<tenant>#R#<results_id>   c#<metric_idx>#<pair_id>#<sha256(user)>   vote, comment, time
"""

from __future__ import annotations

import hashlib

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


def list_for(tenant: str, results_id: str) -> list[Critique]:
    """Every critique of the result, oldest first."""
    critiques = [
        _from_item(item)
        for item in dynamo.query_items(
            TableName=_table(),
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": s(result_pk(tenant, results_id))},
            ConsistentRead=True,
        )
    ]
    return sorted(critiques, key=lambda c: (c.time_ms, c.id))
