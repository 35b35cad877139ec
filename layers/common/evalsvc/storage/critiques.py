"""The critiques table: human votes and comments on scored pairs, one per (pair, metric, user).

pk                          sk                                        what
T#<tenant>#R#<results_id>   c#<metric_idx>#<pair_id>#<sha256(user)>   vote, comment, time,
                                                                      source, the judge's score,
                                                                      js: each juror's (E13)

js, on a metric a jury judged only: the JSON list of each judge's score of the pair as the vote
was cast, in the jury's order (a few bytes a judge: 5 judges add well under 100 bytes), so that
agreement gives each judge's AUC from the votes alone. A vote without a jury has no js.

Index by_metrics_set: every vote under its metrics set, for agreement pooled over its results.

mpk                         msk
T#<tenant>#M#<metrics_id>   <metric_idx:03>#<results_id>#<pair_id>#<sha256(user)>
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

from evalsvc.core.settings import get_settings
from evalsvc.models.evaluations import Critique, VoteObservation
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s
from evalsvc.storage.results import result_pk


def _table() -> str:
    return get_settings().critiques_table


def _score(item: Item) -> float | None:
    """The judge's score a vote was cast on (None for a vote stored before it was kept)."""
    return float(item["score"]["N"]) if "score" in item else None


def _judge_scores(item: Item) -> tuple[float, ...] | None:
    """Each judge's score a vote was cast on (None: no jury, or stored before they were kept)."""
    stored = get_s(item, "js")
    return None if stored is None else tuple(float(x) for x in json.loads(stored))


def _source(item: Item) -> str:
    return get_s(item, "source", "review") or "review"


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
        source=_source(item),
        score=_score(item),
    )


def metrics_set_pk(tenant: str, metrics_id: str) -> str:
    return f"T#{tenant}#M#{metrics_id}"


def upsert(
    tenant: str,
    results_id: str,
    metrics_id: str,
    critique: Critique,
    judge_scores: Sequence[float] | None = None,
) -> Critique:
    """Record the vote, with the judge's score it was cast on (and with a jury, each judge's:
    `judge_scores`, stored only when given and not empty), under the result and its metrics set;
    the same user's earlier vote on that pair and metric is replaced (it keeps its id and takes
    the new time, vote, comment and source)."""
    assert critique.score is not None
    key = user_key(critique.user)
    jury: dict[str, Any] = {}
    if judge_scores:
        jury = {":js": s(json.dumps([float(x) for x in judge_scores], separators=(",", ":")))}
    response = dynamo.call(
        "update_item",
        TableName=_table(),
        Key={
            "pk": s(result_pk(tenant, results_id)),
            "sk": s(f"c#{critique.metric_idx}#{critique.pair_id}#{key}"),
        },
        UpdateExpression=(
            "SET #id = if_not_exists(#id, :id), pair_id = :pair_id, metric_idx = :metric_idx, "
            "#comment = :comment, vote = :vote, #user = :user, user_email = :email, "
            "time_ms = :time, #source = :source, score = :score, mpk = :mpk, msk = :msk"
            + (", js = :js" if jury else "")
        ),
        ExpressionAttributeNames={
            "#id": "id",
            "#comment": "comment",
            "#user": "user",
            "#source": "source",
        },
        ExpressionAttributeValues={
            ":id": s(critique.id),
            ":pair_id": s(critique.pair_id),
            ":metric_idx": n(critique.metric_idx),
            ":comment": s(critique.comment),
            ":vote": n(critique.vote),
            ":user": s(critique.user),
            ":email": s(critique.user_email),
            ":time": n(critique.time_ms),
            ":source": s(critique.source),
            ":score": {"N": repr(critique.score)},
            ":mpk": s(metrics_set_pk(tenant, metrics_id)),
            ":msk": s(f"{critique.metric_idx:03d}#{results_id}#{critique.pair_id}#{key}"),
            **jury,
        },
        ReturnValues="ALL_NEW",
    )
    return _from_item(response["Attributes"])


def user_key(user: str) -> str:
    return hashlib.sha256(user.encode()).hexdigest()[:32]


def voted_pairs(tenant: str, results_id: str, metric_idx: int, user: str) -> set[str]:
    """The pairs `user` voted on for the metric in the result."""
    return voters_of_metric(tenant, results_id, metric_idx).mine(user)


class MetricVoters:
    """Who voted on which pair of one metric of a result, and with which source."""

    def __init__(self) -> None:
        # pair id -> {user key: source}
        self.by_pair: dict[str, dict[str, str]] = {}

    def mine(self, user: str) -> set[str]:
        """The pairs `user` voted on."""
        key = user_key(user)
        return {pair for pair, voters in self.by_pair.items() if key in voters}

    def audited_by_others(self, user: str) -> set[str]:
        """The pairs someone other than `user` voted on with source "audit"."""
        key = user_key(user)
        return {
            pair
            for pair, voters in self.by_pair.items()
            if any(k != key and source == "audit" for k, source in voters.items())
        }


def voters_of_metric(tenant: str, results_id: str, metric_idx: int) -> MetricVoters:
    """Every vote's pair, voter and source on the metric of the result: one Query."""
    query = _query(tenant, results_id)
    query["KeyConditionExpression"] = "pk = :pk AND begins_with(sk, :metric)"
    query["ExpressionAttributeValues"][":metric"] = s(f"c#{metric_idx}#")
    query["ProjectionExpression"] = "sk, #source"
    query["ExpressionAttributeNames"] = {"#source": "source"}
    voters = MetricVoters()
    for item in dynamo.query_items(**query):
        pair_id, key = _pair_and_voter(item["sk"]["S"])
        voters.by_pair.setdefault(pair_id, {})[key] = _source(item)
    return voters


def _pair_and_voter(sk: str) -> tuple[str, str]:
    """The pair id and user key of a vote's sort key c#<metric_idx>#<pair_id>#<user key>."""
    _, _, rest = sk.partition("#")
    _, _, rest = rest.partition("#")
    pair_id, _, key = rest.rpartition("#")
    return pair_id, key


def votes_of_result(tenant: str, results_id: str) -> Iterator[VoteObservation]:
    """Every vote on the result: metric, pair, the judge's score (None for a vote stored before
    scores were kept with votes), vote, source, voter (the user key) and each judge's score
    (E13: None without a jury, or for a vote stored before they were kept)."""
    query = _query(tenant, results_id)
    query["ProjectionExpression"] = "sk, metric_idx, pair_id, score, vote, #source, js"
    query["ExpressionAttributeNames"] = {"#source": "source"}
    for item in dynamo.query_items(**query):
        yield VoteObservation(
            metric_idx=get_n(item, "metric_idx"),
            pair_id=get_s(item, "pair_id") or "",
            score=_score(item),
            vote=get_n(item, "vote"),
            source=_source(item),
            voter=_pair_and_voter(item["sk"]["S"])[1],
            judge_scores=_judge_scores(item),
        )


def votes_of_metrics_set(tenant: str, metrics_id: str) -> Iterator[VoteObservation]:
    """Every vote (with its score and voter) on every result of the metrics set, from its
    index."""
    for _, vote in votes_by_result_of_metrics_set(tenant, metrics_id):
        yield vote


def votes_by_result_of_metrics_set(
    tenant: str, metrics_id: str
) -> Iterator[tuple[str, VoteObservation]]:
    """Every vote on every result of the metrics set, from its index, with the result it is
    on (the same pair id in two results is two pairs). Without each judge's score: the index
    projects score, vote and source only (template.yaml), not js."""
    query = {
        "TableName": _table(),
        "IndexName": "by_metrics_set",
        "KeyConditionExpression": "mpk = :mpk",
        "ExpressionAttributeValues": {":mpk": s(metrics_set_pk(tenant, metrics_id))},
    }
    for item in dynamo.query_items(**query):
        # <metric:03>#<results_id>#<pair_id>#<user key>
        metric, _, rest = item["msk"]["S"].partition("#")
        results_id, _, rest = rest.partition("#")
        pair_id, _, key = rest.rpartition("#")
        yield (
            results_id,
            VoteObservation(
                metric_idx=int(metric),
                pair_id=pair_id,
                score=float(item["score"]["N"]),
                vote=get_n(item, "vote"),
                source=_source(item),
                voter=key,
            ),
        )


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
