"""Pairwise runs (E5) in the results table, under a key of their own:

    pk                              sk              what
    T#<tenant>#PW#<pairwise_id>     run             question, result ids, settings, status,
                                                    counts (what the statistics are computed
                                                    from), usage
    T#<tenant>#PW#<pairwise_id>     c#<index>       a chunk's pair ids, in order (a queued run)
    T#<tenant>#PW#<pairwise_id>     v#<pair_id>     the pair's verdicts: per matchup the
                                                    outcome and each order's winner and reason
    T#<tenant>#PW#<pairwise_id>     u#<user>#<pair_id>#<a>#<b>
                                                    a person's vote on one comparison

The statistics are not stored: they are computed from the counts when read (a fit of 8 runs
takes about 2 ms), so a change to how they are computed needs no migration.

A verdict item holds at most 28 matchups (8 runs), each with two reasons cut to
MAX_REASON_CHARS characters: 28 x 2 x 1,000 characters x 4 bytes = 224 KB at the field limits,
under DynamoDB's 400 KB.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from evalsvc.core.settings import get_settings
from evalsvc.models.evaluations import MAX_REASON_CHARS
from evalsvc.models.jobs import Status
from evalsvc.models.pairwise import OrderVerdict, PairwiseRun, Verdict, Vote
from evalsvc.spending.meter import Usage
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s
from evalsvc.storage.writes import Writes

RUN_SK = "run"


def _table() -> str:
    return get_settings().results_table


def run_pk(tenant: str, pairwise_id: str) -> str:
    return f"T#{tenant}#PW#{pairwise_id}"


def _run_item(run: PairwiseRun) -> Item:
    item: Item = {
        "pk": s(run_pk(run.tenant, run.pairwise_id)),
        "sk": s(RUN_SK),
        "pairwise_id": s(run.pairwise_id),
        "created_ms": n(run.created_ms),
        "question": s(run.question),
        "result_ids": s(json.dumps(run.result_ids)),
        "both_orders": {"BOOL": run.both_orders},
        "alpha": {"N": repr(run.alpha)},
        "max_pairs": n(run.max_pairs),
        "pairs_used": n(run.pairs_used),
        "status": s(run.status.value),
        "counts": s(json.dumps(run.counts, separators=(",", ":"))),
        "usage": s(json.dumps(run.usage.as_dict())),
    }
    if run.failure:
        item["failure"] = s(run.failure)
    if run.model:
        item["model"] = s(run.model)
    return item


def _run_from_item(tenant: str, item: Item) -> PairwiseRun:
    return PairwiseRun(
        tenant=tenant,
        pairwise_id=get_s(item, "pairwise_id") or "",
        created_ms=get_n(item, "created_ms"),
        question=get_s(item, "question") or "",
        result_ids=list(json.loads(get_s(item, "result_ids") or "[]")),
        both_orders=bool(item["both_orders"]["BOOL"]),
        alpha=float(item["alpha"]["N"]),
        max_pairs=get_n(item, "max_pairs"),
        pairs_used=get_n(item, "pairs_used"),
        status=Status(get_s(item, "status") or Status.COMPLETE.value),
        failure=get_s(item, "failure", "") or "",
        counts=dict(json.loads(get_s(item, "counts") or "{}")),
        usage=Usage.from_dict(json.loads(get_s(item, "usage") or "{}")),
        model=get_s(item, "model"),
    )


def get(tenant: str, pairwise_id: str) -> PairwiseRun | None:
    item = dynamo.get_item(_table(), {"pk": s(run_pk(tenant, pairwise_id)), "sk": s(RUN_SK)})
    return _run_from_item(tenant, item) if item else None


def put_complete(run: PairwiseRun, verdicts: Sequence[Verdict]) -> None:
    """A run done inside its request: its verdicts, then the run item that makes it exist
    (conditional: a run id is written once)."""
    put_verdicts(run.tenant, run.pairwise_id, verdicts)
    dynamo.call(
        "put_item",
        TableName=_table(),
        Item=_run_item(run),
        ConditionExpression="attribute_not_exists(pk)",
    )


def running(run: PairwiseRun) -> Writes:
    """The write that makes a queued run exist, running (committed with its job; refused when
    it exists). Its chunks' pair ids are stored before (put_chunks)."""
    put = {
        "TableName": _table(),
        "Item": _run_item(run),
        "ConditionExpression": "attribute_not_exists(pk)",
    }
    return Writes([{"Put": put}])


def put_chunks(tenant: str, pairwise_id: str, chunk_ids: Sequence[Sequence[str]]) -> None:
    """Each chunk's pair ids, one item per chunk, before the run and its job are committed
    (a transaction holds at most 100 writes; a run may have thousands of chunks). Written
    again identically by a retry of the same request; left unread if the commit never comes."""
    pk = s(run_pk(tenant, pairwise_id))
    dynamo.batch_write(
        _table(),
        [
            {
                "PutRequest": {
                    "Item": {
                        "pk": pk,
                        "sk": s(f"c#{index:06d}"),
                        "ids": {"L": [s(pid) for pid in ids]},
                    }
                }
            }
            for index, ids in enumerate(chunk_ids)
        ],
    )


def chunk_ids(tenant: str, pairwise_id: str, index: int) -> list[str] | None:
    """The pair ids of a queued run's chunk (None when the item is missing)."""
    item = dynamo.get_item(
        _table(), {"pk": s(run_pk(tenant, pairwise_id)), "sk": s(f"c#{index:06d}")}
    )
    if item is None:
        return None
    return [value["S"] for value in item["ids"]["L"]]


def _order_json(order: OrderVerdict | None) -> list[str] | None:
    return None if order is None else [order.winner, order.reason[:MAX_REASON_CHARS]]


def _order_from(value: Any) -> OrderVerdict | None:
    return None if value is None else OrderVerdict(str(value[0]), str(value[1]))


def _verdict_item(pk: str, pair_id: str, verdicts: Sequence[Verdict]) -> Item:
    entries = [
        [v.a, v.b, v.winner, _order_json(v.first_order), _order_json(v.second_order)]
        for v in verdicts
    ]
    return {
        "pk": s(pk),
        "sk": s(f"v#{pair_id}"),
        "verdicts": s(json.dumps(entries, ensure_ascii=False, separators=(",", ":"))),
    }


def _verdicts_from_item(item: Item) -> list[Verdict]:
    pair_id = item["sk"]["S"][2:]
    return [
        Verdict(pair_id, int(a), int(b), str(winner), _order_from(one), _order_from(two))
        for a, b, winner, one, two in json.loads(get_s(item, "verdicts") or "[]")
    ]


def put_verdicts(tenant: str, pairwise_id: str, verdicts: Sequence[Verdict]) -> None:
    """Store verdicts, one item per pair (again, harmlessly, when a chunk is delivered twice)."""
    pk = run_pk(tenant, pairwise_id)
    by_pair: dict[str, list[Verdict]] = {}
    for verdict in verdicts:
        by_pair.setdefault(verdict.pair_id, []).append(verdict)
    dynamo.batch_write(
        _table(),
        [
            {"PutRequest": {"Item": _verdict_item(pk, pair_id, pair_verdicts)}}
            for pair_id, pair_verdicts in by_pair.items()
        ],
    )


def verdicts_of(tenant: str, pairwise_id: str, pair_ids: Sequence[str]) -> dict[str, list[Verdict]]:
    """The stored verdicts of these pairs, by pair id (pairs not judged yet are absent)."""
    pk = s(run_pk(tenant, pairwise_id))
    items = dynamo.batch_get(
        _table(), [{"pk": pk, "sk": s(f"v#{pid}")} for pid in dict.fromkeys(pair_ids)]
    )
    return {item["sk"]["S"][2:]: _verdicts_from_item(item) for item in items}


def verdict_page(
    tenant: str, pairwise_id: str, after: str, limit: int
) -> tuple[list[list[Verdict]], bool]:
    """Up to `limit` pairs' verdicts in pair id order after pair id `after` ("" from the
    first), and whether more follow."""
    pk = run_pk(tenant, pairwise_id)
    query: dict[str, Any] = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :v)",
        "ExpressionAttributeValues": {":pk": s(pk), ":v": s("v#")},
    }
    if after:
        query["ExclusiveStartKey"] = {"pk": s(pk), "sk": s(f"v#{after}")}
    items, more = dynamo.query_bounded(
        max_items=limit, max_bytes=4 * 1024 * 1024, size=_item_bytes, **query
    )
    return [_verdicts_from_item(item) for item in items], more


def _item_bytes(item: Item) -> int:
    return len(get_s(item, "verdicts") or "") + 64


def completing(run: PairwiseRun) -> Writes:
    """The write that stores the counts and usage and marks the run complete."""
    update = {
        "TableName": _table(),
        "Key": {"pk": s(run_pk(run.tenant, run.pairwise_id)), "sk": s(RUN_SK)},
        "UpdateExpression": (
            "SET #status = :complete, #counts = :counts, #usage = :usage, pairs_used = :pairs"
        ),
        "ExpressionAttributeNames": {"#status": "status", "#counts": "counts", "#usage": "usage"},
        "ExpressionAttributeValues": {
            ":complete": s(Status.COMPLETE.value),
            ":counts": s(json.dumps(run.counts, separators=(",", ":"))),
            ":usage": s(json.dumps(run.usage.as_dict())),
            ":pairs": n(run.pairs_used),
        },
    }
    return Writes([{"Update": update}])


def failing(tenant: str, pairwise_id: str, failure: str) -> Writes:
    update = {
        "TableName": _table(),
        "Key": {"pk": s(run_pk(tenant, pairwise_id)), "sk": s(RUN_SK)},
        "UpdateExpression": "SET #status = :failed, failure = :reason",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {":failed": s(Status.FAILED.value), ":reason": s(failure)},
    }
    return Writes([{"Update": update}])


# ---- people's votes ------------------------------------------------------------------------


def put_vote(tenant: str, pairwise_id: str, vote: Vote) -> None:
    """One person's vote on one comparison, replacing theirs before."""
    item: Item = {
        "pk": s(run_pk(tenant, pairwise_id)),
        "sk": s(f"u#{vote.user}#{vote.pair_id}#{vote.a}#{vote.b}"),
        "user": s(vote.user),
        "pair_id": s(vote.pair_id),
        "a": n(vote.a),
        "b": n(vote.b),
        "winner": s(vote.winner),
        "time_ms": n(vote.time_ms),
    }
    if vote.comment:
        item["comment"] = s(vote.comment)
    dynamo.call("put_item", TableName=_table(), Item=item)


def votes(tenant: str, pairwise_id: str) -> Iterator[Vote]:
    """Every vote on the run, a DynamoDB page at a time."""
    query: dict[str, Any] = {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :u)",
        "ExpressionAttributeValues": {":pk": s(run_pk(tenant, pairwise_id)), ":u": s("u#")},
    }
    for page in dynamo.query_pages(**query):
        for item in page:
            yield Vote(
                user=get_s(item, "user") or "",
                pair_id=get_s(item, "pair_id") or "",
                a=get_n(item, "a"),
                b=get_n(item, "b"),
                winner=get_s(item, "winner") or "tie",
                comment=get_s(item, "comment", "") or "",
                time_ms=get_n(item, "time_ms"),
            )
