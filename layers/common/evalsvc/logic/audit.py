"""Audit samples (E2) and the review queue (E9): scored pairs the caller has not voted on for a
metric, `n` at a time, in one of two orders.

- `random` (the audit sample): the draw ranks every scored pair of the result by a keyed hash of
  (result, metric, caller, pair id) and takes the first `n` the caller has not voted on: a
  uniform random order of the pairs, fixed for the caller, independent of scores and of
  anyone's votes, so that agreement can be measured on votes not chosen by low scores. A
  repeated call gives the same sample until the caller votes; a vote on one of them lets the
  next pair in the order in, and a pair voted on for review simply drops out. Voted with
  "source": "audit".
- `lowest` (the "Lowest scores" queue): the lowest scores on the metric first, ties by pair id.
  Chosen by score, so voted with "source": "review" and left out of audit-only agreement.

Overlap (E12, `random` only): with `overlap` (a share, 0-1; 0 by default) k = overlap * n
(rounded half up) of the sample are pairs someone else voted on with "source": "audit" for the
metric and the caller has not, the first k of them in the caller's own random order; the rest
come from the caller's usual order (those k left out), and when fewer such pairs exist the usual
order fills in. The sample is put in the caller's order, so nothing marks the shared pairs. This
gives people pairs in common, on which their agreement with each other (Krippendorff's alpha on
GET /evaluation/{id}/agreement) is measured.

Only other people's audit votes qualify, never their review votes: an audit vote's pair was
itself drawn without looking at scores, and the overlap looks only at who voted with which
source, never at a score or a vote's value. So every audited pair is still chosen independently
of the scores and of what people said, and the union of everyone's audit samples stays a
random draw of the result's pairs for the anchored estimate (E12). The sample stays the same
until the caller votes, as long as nobody else casts a new audit vote on the metric meanwhile
(that can bring a pair earlier in the caller's order into the shared part).

Both orders read the result's scores once, page by page, and keep only the `n` best-ranked
pairs; only the ranking key differs. Who voted on the metric is read in one Query.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, get_args

from evalsvc.core.errors import InvalidInput, PayloadTooLarge
from evalsvc.logic import reproduce
from evalsvc.logic.results import check_metric_idx, existing_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import Pair
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import results as results_store

MAX_SAMPLE = 100
DEFAULT_SAMPLE = 10
Order = Literal["random", "lowest"]
ORDERS: tuple[Order, ...] = get_args(Order)


@dataclass(frozen=True, slots=True)
class AuditPair:
    pair_id: str
    input: str | None  # None when the pair is no longer in the dataset
    output: str | None
    score: float
    reason: str
    # The pair as stored, for its optional fields (E10's, E11's); None when no longer there.
    pair: Pair | None = None
    # E13, a metric judged by a jury: each judge's score of the pair, by judge (None otherwise).
    judge_scores: dict[str, float] | None = None


@dataclass(frozen=True, slots=True)
class AuditSample:
    results_id: str
    metric_idx: int
    metric: str
    unvoted: int  # pairs the caller has not voted on for the metric
    pairs: list[AuditPair]


def _judge_scores(
    judges: list[str] | None, scores: list[list[float]] | None, metric_idx: int
) -> dict[str, float] | None:
    """Each judge's score of a pair on the metric, by judge (None without a jury's)."""
    if not judges or scores is None or metric_idx >= len(scores):
        return None
    on_metric = scores[metric_idx]
    return dict(zip(judges, on_metric, strict=True)) if len(on_metric) == len(judges) else None


def _rank(results_id: str, metric_idx: int, user: str, pair_id: str) -> bytes:
    return hashlib.sha256(f"{results_id}\0{metric_idx}\0{user}\0{pair_id}".encode()).digest()


# A scored pair as the orders rank it: its id and its score on the metric.
_Candidate = tuple[str, float]


def _ranking(
    order: Order, results_id: str, metric_idx: int, user: str
) -> Callable[[_Candidate], Any]:
    """The key that puts the candidates in `order`, the first to take first."""
    if order == "lowest":
        return lambda candidate: (candidate[1], candidate[0])  # score, then pair id
    return lambda candidate: _rank(results_id, metric_idx, user, candidate[0])


def check_overlap(overlap: float, order: str, n: int) -> int:
    """How many of the `n` pairs come from other people's audit votes: overlap * n rounded half
    up. A 400 when overlap is not a share in 0-1, or is above 0 with an order but random."""
    if not (math.isfinite(overlap) and 0 <= overlap <= 1):
        raise InvalidInput(
            f"overlap must be a share from 0 to 1 (0.2: a fifth of the sample), not {overlap}"
        )
    if overlap > 0 and order != "random":
        raise InvalidInput(
            "overlap goes only with order=random: the pairs in common are drawn from other "
            "people's audit samples"
        )
    return math.floor(overlap * n + 0.5)


def audit_sample(
    identity: Identity,
    results_id: str,
    metric_idx: int,
    n: int,
    max_bytes: int,
    order: str = "random",
    overlap: float = 0.0,
) -> AuditSample:
    result = existing_result(identity, results_id, require_complete=True)
    check_metric_idx(result, metric_idx)
    if not 1 <= n <= MAX_SAMPLE:
        raise InvalidInput(f"n must be 1-{MAX_SAMPLE}, not {n}")
    if order not in ORDERS:
        raise InvalidInput(f"order must be one of {', '.join(ORDERS)}, not {order[:40]!r}")
    shared = check_overlap(overlap, order, n)
    voters = critiques_store.voters_of_metric(identity.tenant, results_id, metric_idx)
    voted = voters.mine(identity.user)
    audited = voters.audited_by_others(identity.user) - voted if shared else set()
    unvoted = 0
    overlapping: list[_Candidate] = []  # as many as other people's audit votes, at most

    def candidates() -> Iterator[_Candidate]:
        nonlocal unvoted
        for page in results_store.score_pages(identity.tenant, results_id):
            for pair_id, scores in page:
                # A pair the metric is not applicable to is never drawn (E10).
                if pair_id not in voted and (score := scores[metric_idx]) is not None:
                    unvoted += 1
                    if pair_id in audited:
                        overlapping.append((pair_id, score))
                    yield pair_id, score

    key = _ranking(order, results_id, metric_idx, identity.user)
    usual = heapq.nsmallest(n, candidates(), key=key)
    taken = heapq.nsmallest(shared, overlapping, key=key)
    taken_ids = {pair_id for pair_id, _ in taken}
    rest = [c for c in usual if c[0] not in taken_ids][: n - len(taken)]
    chosen = [pair_id for pair_id, _ in sorted(taken + rest, key=key)]
    scored = results_store.get_scored(identity.tenant, results_id, chosen)
    pairs: dict[str, Pair] = {}
    # The texts the result scored: from the version it pinned (Gone, naming the day, past its
    # retention); a result stored before it pinned one has only the current version.
    pinned = result.inputs is not None
    header = (
        reproduce.pinned_header(identity.tenant, result)
        if pinned
        else datasets_store.get_header(identity.tenant, result.dataset_kind, result.dataset_id)
    )
    if header is not None:
        try:
            pairs = datasets_store.get_pairs(header, chosen, max_bytes)
        except datasets_store.TooLarge:
            raise PayloadTooLarge(
                f"these {len(chosen)} pairs are too large for one response: ask for fewer "
                "with a smaller n"
            ) from None
        if pinned:
            reproduce.still_readable(identity.tenant, result)
    sample = []
    for pid in chosen:
        pair = pairs.get(pid)
        scores = scored[pid]
        score = scores.scores[metric_idx]
        if score is None:  # drawn only among the pairs the metric applies to
            continue
        sample.append(
            AuditPair(
                pair_id=pid,
                input=pair.input if pair else None,
                output=pair.output if pair else None,
                score=score,
                reason=scores.reasons[metric_idx],
                pair=pair,
                judge_scores=_judge_scores(result.judges, scores.judge_scores, metric_idx),
            )
        )
    return AuditSample(results_id, metric_idx, result.definitions[metric_idx], unvoted, sample)
