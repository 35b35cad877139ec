"""Judging pairs for pairwise runs (E5), as the request and the queued kind both do it: which
pairs the runs share (a uniform sample beyond max_pairs), their texts, every comparison asked of
the judge in one pool, and the counts the statistics are computed from. See logic.pairwise for
the rules."""

from __future__ import annotations

import hashlib
import heapq
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from evalsvc.core.errors import InvalidInput
from evalsvc.logic import reproduce
from evalsvc.models.datasets import Pair
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.models.pairwise import Counts, OrderVerdict, Verdict
from evalsvc.scoring import preferences
from evalsvc.scoring.judges import CachedJudge, Comparison
from evalsvc.statistics import pairwise as pairwise_stats
from evalsvc.storage import results as results_store

# ---- what is compared ------------------------------------------------------------------------


@dataclass(slots=True)
class Texts:
    """The texts of one pair: the input (the first run's) and each run's output."""

    input: str
    outputs: list[str]


@dataclass(slots=True)
class PairSelection:
    """The pair ids a pairwise run compares, in pair id order, and (unless `keys_only`) their
    texts; `bytes`: the texts' size when read (None: not read)."""

    pair_ids: list[str]
    texts: dict[str, Texts] | None = None
    # Pairs whose texts were not read: they would have passed the bytes a read may take.
    unread: set[str] = field(default_factory=set)

    @property
    def keys_only(self) -> bool:
        return self.texts is None

    @property
    def count(self) -> int:
        return len(self.pair_ids)

    @property
    def bytes(self) -> int | None:
        if self.texts is None:
            return None
        return sum(
            len(t.input.encode()) + sum(len(o.encode()) for o in t.outputs)
            for t in self.texts.values()
        )


def matchups_of(runs: int) -> list[tuple[int, int]]:
    """Every two runs, (i, j) with i < j, in result_ids order."""
    return list(itertools.combinations(range(runs), 2))


def calls_per_pair(runs: int, both_orders: bool) -> int:
    return len(matchups_of(runs)) * (2 if both_orders else 1)


def shared_pair_ids(tenant: str, results: Sequence[EvaluationResult]) -> list[str]:
    """The pair ids every result scored, in pair id order (each result's ids read a DynamoDB
    page at a time, scores projected away beyond the key)."""
    shared: set[str] | None = None
    for result in results:
        ids = {
            pid for page in results_store.score_pages(tenant, result.results_id) for pid, _ in page
        }
        shared = ids if shared is None else shared & ids
        if not shared:
            return []
    return sorted(shared or ())


def sample(pair_ids: Sequence[str], max_pairs: int, pairwise_id: str) -> list[str]:
    """At most `max_pairs` of `pair_ids`, a uniform sample seeded by the pairwise id (the same
    on every retry of the request), in pair id order."""
    if len(pair_ids) <= max_pairs:
        return list(pair_ids)

    def rank(pid: str) -> bytes:
        return hashlib.sha256(f"{pairwise_id}\0{pid}".encode()).digest()

    return sorted(heapq.nsmallest(max_pairs, pair_ids, key=rank))


def read_texts(
    tenant: str, results: Sequence[EvaluationResult], pair_ids: Sequence[str], max_bytes: int
) -> tuple[dict[str, Texts], set[str]]:
    """The texts each result scored of `pair_ids`, read from the dataset version it pinned
    (reproduce.scored_texts: whatever happened to the dataset since), for the pairs every
    result has texts of (see logic.pairwise's docstring), within `max_bytes` of text per
    result; and the pairs left unread for that limit. Gone when a result's version is past its
    retention."""
    per_run: list[dict[str, Pair]] = []
    unread: set[str] = set()
    for result in results:
        scored = reproduce.scored_texts(tenant, result, pair_ids, max_bytes)
        unread |= scored.unread
        per_run.append(scored.pairs)
    texts: dict[str, Texts] = {}
    for pid in pair_ids:
        pairs = [run.get(pid) for run in per_run]
        if pid not in unread and all(pair is not None for pair in pairs):
            kept = cast(list[Pair], pairs)
            texts[pid] = Texts(kept[0].input, [pair.output for pair in kept])
    return texts, unread


# ---- judging -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Judged:
    """The verdicts obtained on some pairs, and whether every comparison was judged (the
    deadline may come first: then only whole pairs are kept)."""

    verdicts: list[Verdict]
    complete: bool


def _winner(code: int) -> str:
    return preferences.winner_of(code)


def _outcome(first: str, second: str | None) -> str:
    return pairwise_stats.outcome(
        cast(pairwise_stats.Judgement, first),
        None if second is None else cast(pairwise_stats.Judgement, second),
    )


def comparisons_of(
    pair_id: str, text: Texts, runs: int, both_orders: bool
) -> list[tuple[Comparison, int, int, int]]:
    """The judge calls one pair takes: for runs i < j whose outputs differ (equal bytes are a
    tie without a call), i's output first (order 1) and, with `both_orders`, j's first (order
    2); each with (i, j, order)."""
    found = []
    for i, j in matchups_of(runs):
        one, two = text.outputs[i], text.outputs[j]
        if one == two:
            continue
        found.append(
            (Comparison(text.input, one, two, f"pair {pair_id!r}, run {i + 1} first"), i, j, 1)
        )
        if both_orders:
            found.append(
                (Comparison(text.input, two, one, f"pair {pair_id!r}, run {j + 1} first"), i, j, 2)
            )
    return found


def judge_pairs(
    judge: CachedJudge | None,
    question: str,
    runs: int,
    both_orders: bool,
    texts: dict[str, Texts],
    pair_ids: Sequence[str],
) -> Judged:
    """Judge every comparison of the pairs (those with texts), through the judge's cache and
    pool; a pair all of whose comparisons were answered has its verdicts, others none."""
    asked: list[Comparison] = []
    where: list[tuple[str, int, int, int]] = []  # (pair id, i, j, order) of each ask
    for pid in pair_ids:
        text = texts.get(pid)
        if text is not None:
            for comparison, i, j, order in comparisons_of(pid, text, runs, both_orders):
                asked.append(comparison)
                where.append((pid, i, j, order))
    answers: dict[int, tuple[int, str]] = {}
    complete = True
    if asked:
        if judge is None:
            raise InvalidInput("pairwise judging needs the judge, and none is configured")
        run = judge.begin_preferences(question, asked)
        try:
            got = run.answers()
        finally:
            run.close()
        answers = {cast(int, item): answer for item, answer in got.by_item.items()}
        complete = got.complete
    by_pair: dict[str, dict[tuple[int, int], dict[int, OrderVerdict]]] = {}
    for index, (pid, i, j, order) in enumerate(where):
        answer = answers.get(index)
        if answer is not None:
            code, reason = answer
            by_pair.setdefault(pid, {}).setdefault((i, j), {})[order] = OrderVerdict(
                _winner(code), reason
            )
    verdicts: list[Verdict] = []
    for pid in pair_ids:
        text = texts.get(pid)
        if text is None:
            continue
        found = by_pair.get(pid, {})
        made: list[Verdict] = []
        for i, j in matchups_of(runs):
            if text.outputs[i] == text.outputs[j]:
                made.append(Verdict(pid, i, j, "tie", None, None))
                continue
            orders = found.get((i, j), {})
            first, second = orders.get(1), orders.get(2)
            if first is None or (both_orders and second is None):
                break
            winner = _outcome(first.winner, second.winner if second else None)
            made.append(Verdict(pid, i, j, winner, first, second))
        else:
            verdicts.extend(made)
    return Judged(verdicts, complete)


def counts_of(verdicts: Iterable[Verdict]) -> Counts:
    counts = Counts()
    for verdict in verdicts:
        counts.add(verdict)
    return counts
