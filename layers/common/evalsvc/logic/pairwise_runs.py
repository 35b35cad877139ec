"""Reading a pairwise run (E5): GET /pairwise/{id}'s answer (the run, its statistics once
complete, a page of verdicts, how the judge agrees with people) and PUT /pairwise/{id}/vote.

Apart from logic.pairwise, which starts runs (the judge, the job engine, the dispatch of
work): reading and voting need none of that at their start."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from typing import Any, cast

from evalsvc.core.errors import Conflict, InvalidInput, NotFound
from evalsvc.core.identifiers import check_client_id, now_ms
from evalsvc.models.api_keys import Identity
from evalsvc.models.jobs import Status
from evalsvc.models.pairwise import (
    PAIRWISE,
    Counts,
    OrderVerdict,
    PairwiseRun,
    PairwiseVoteIn,
    Vote,
)
from evalsvc.models.usage import usage_out
from evalsvc.statistics import pairwise as pairwise_stats
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage import pairwise as store

# ---- reading a run -----------------------------------------------------------------------------


def existing_run(identity: Identity, pairwise_id: str) -> PairwiseRun:
    check_client_id(pairwise_id, "pairwise id")
    run = store.get(identity.tenant, pairwise_id)
    if run is None:
        raise NotFound(f"no pairwise run with id {pairwise_id!r}")
    return run


def _cursor(cursor: str | None) -> str:
    if not cursor:
        return ""
    check_client_id(cursor, "cursor")
    return cursor


def _comparisons(run: PairwiseRun) -> dict[tuple[str, str, pairwise_stats.Outcome], int]:
    counts = Counts.from_json(run.counts)
    found: dict[tuple[str, str, pairwise_stats.Outcome], int] = {}
    for key, count in counts.outcomes.items():
        i, j, winner = key.split("|")
        a, b = run.result_ids[int(i)], run.result_ids[int(j)]
        found[(a, b, cast(pairwise_stats.Outcome, winner))] = count
    return found


def _orders(
    run: PairwiseRun,
) -> dict[tuple[pairwise_stats.Judgement, pairwise_stats.Judgement | None], int]:
    counts = Counts.from_json(run.counts)
    found: dict[tuple[pairwise_stats.Judgement, pairwise_stats.Judgement | None], int] = {}
    for key, count in counts.orders.items():
        first, second = key.split("|")
        found[
            (
                cast(pairwise_stats.Judgement, first),
                None if second == "-" else cast(pairwise_stats.Judgement, second),
            )
        ] = count
    return found


def _order_out(order: OrderVerdict | None) -> dict[str, str] | None:
    return None if order is None else {"winner": order.winner, "reason": order.reason}


def _judge_human(identity: Identity, run: PairwiseRun) -> pairwise_stats.JudgeHuman:
    votes = list(store.votes(identity.tenant, run.pairwise_id))
    judged = store.verdicts_of(identity.tenant, run.pairwise_id, [v.pair_id for v in votes])
    counted: Counter[tuple[pairwise_stats.Outcome, pairwise_stats.Outcome]] = Counter()
    for vote in votes:
        verdict = next(
            (v for v in judged.get(vote.pair_id, []) if (v.a, v.b) == (vote.a, vote.b)), None
        )
        if verdict is not None:
            counted[
                (
                    cast(pairwise_stats.Outcome, verdict.winner),
                    cast(pairwise_stats.Outcome, vote.winner),
                )
            ] += 1
    return pairwise_stats.judge_human(counted)


def run_body(
    identity: Identity, run: PairwiseRun, limit: int, cursor: str | None
) -> dict[str, Any]:
    """GET /pairwise/{id}'s answer: the run, its statistics when complete, a page of verdicts
    (at most `limit` pairs' comparisons, from `cursor`: the pair id after which to go on)."""
    done = run.pairs_used
    if run.status is Status.RUNNING:
        job = jobs_store.get(identity.tenant, PAIRWISE, run.pairwise_id)
        done = job.pairs_done if job is not None else 0
    position: dict[str, Any] | None = None
    matchup_rows: list[dict[str, Any]] = []
    board: list[dict[str, Any]] = []
    if run.status is Status.COMPLETE:
        comparisons = _comparisons(run)
        position = asdict(pairwise_stats.position(_orders(run), run.both_orders))
        matchup_rows = [
            asdict(m) for m in pairwise_stats.matchups(run.result_ids, comparisons, run.alpha)
        ]
        board = [asdict(row) for row in pairwise_stats.leaderboard(run.result_ids, comparisons)]
    pages, more = store.verdict_page(identity.tenant, run.pairwise_id, _cursor(cursor), limit)
    verdicts = [
        {
            "pair_id": v.pair_id,
            "a": run.result_ids[v.a],
            "b": run.result_ids[v.b],
            "winner": v.winner,
            "first_order": _order_out(v.first_order),
            "second_order": _order_out(v.second_order),
        }
        for pair in pages
        for v in pair
    ]
    human = _judge_human(identity, run)
    usage = usage_out(run.usage).model_dump()
    return {
        "pairwise_id": run.pairwise_id,
        "status": run.status.value,
        "progress": {"done": done, "total": run.pairs_used},
        "failure": run.failure or None,
        "question": run.question,
        "result_ids": run.result_ids,
        "pairs_used": run.pairs_used,
        "both_orders": run.both_orders,
        "alpha": run.alpha,
        "usage": usage,
        "position": position,
        "matchups": matchup_rows,
        "leaderboard": board,
        "verdicts": verdicts,
        "next_cursor": pages[-1][0].pair_id if more and pages and pages[-1] else None,
        "judge_human": asdict(human),
    }


def vote(identity: Identity, pairwise_id: str, body: PairwiseVoteIn) -> None:
    """A person's vote on one comparison of a complete run (one per person and comparison:
    a new one replaces theirs)."""
    run = existing_run(identity, pairwise_id)
    if run.status is not Status.COMPLETE:
        raise Conflict(
            f"pairwise run {pairwise_id!r} is {run.status.value}: vote once GET /pairwise/"
            f"{pairwise_id} says complete"
        )
    check_client_id(body.pair_id, "pair_id")
    for name, rid in (("a", body.a), ("b", body.b)):
        if rid not in run.result_ids:
            raise InvalidInput(f"{name}: {rid!r} is not one of this run's result_ids")
    if body.a == body.b:
        raise InvalidInput("a and b must be two different runs")
    a, b = run.result_ids.index(body.a), run.result_ids.index(body.b)
    winner: str = body.winner
    if a > b:  # stored as the matchup is, a before b in result_ids order
        a, b = b, a
        winner = {"a": "b", "b": "a", "tie": "tie"}[winner]
    judged = store.verdicts_of(identity.tenant, pairwise_id, [body.pair_id]).get(body.pair_id)
    if not judged or not any((v.a, v.b) == (a, b) for v in judged):
        raise NotFound(f"pair {body.pair_id!r} was not compared in pairwise run {pairwise_id!r}")
    store.put_vote(
        identity.tenant,
        pairwise_id,
        Vote(identity.user, body.pair_id, a, b, winner, body.comment or "", now_ms()),
    )
