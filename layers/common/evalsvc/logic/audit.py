"""Audit samples (E2): scored pairs drawn uniformly at random from those the caller has not
voted on for a metric, so that agreement can be measured on votes not chosen by low scores.

The draw ranks every scored pair of the result by a keyed hash of (result, metric, caller,
pair id) and takes the first `n` the caller has not voted on: a uniform random order of the
pairs, fixed for the caller, independent of scores and of anyone's votes. A repeated call gives
the same sample until the caller votes; a vote on one of them lets the next pair in the order
in, and a pair voted on for review (chosen by its low score) simply drops out.
"""

from __future__ import annotations

import hashlib
import heapq
from dataclasses import dataclass

from evalsvc.errors import InvalidInput, PayloadTooLarge
from evalsvc.logic.results import check_metric_idx, existing_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import Pair
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import results as results_store

MAX_SAMPLE = 100
DEFAULT_SAMPLE = 10


@dataclass(frozen=True, slots=True)
class AuditPair:
    pair_id: str
    input: str | None  # None when the pair is no longer in the dataset
    output: str | None
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class AuditSample:
    results_id: str
    metric_idx: int
    metric: str
    unvoted: int  # pairs the caller has not voted on for the metric
    pairs: list[AuditPair]


def _rank(results_id: str, metric_idx: int, user: str, pair_id: str) -> bytes:
    return hashlib.sha256(f"{results_id}\0{metric_idx}\0{user}\0{pair_id}".encode()).digest()


def audit_sample(
    identity: Identity, results_id: str, metric_idx: int, n: int, max_bytes: int
) -> AuditSample:
    result = existing_result(identity, results_id, require_complete=True)
    check_metric_idx(result, metric_idx)
    if not 1 <= n <= MAX_SAMPLE:
        raise InvalidInput(f"n must be 1-{MAX_SAMPLE}, not {n}")
    voted = critiques_store.voted_pairs(identity.tenant, results_id, metric_idx, identity.user)
    unvoted = [
        pid for pid in results_store.pair_ids(identity.tenant, results_id) if pid not in voted
    ]
    chosen = heapq.nsmallest(
        n, unvoted, key=lambda pid: _rank(results_id, metric_idx, identity.user, pid)
    )
    scored = results_store.get_scored(identity.tenant, results_id, chosen)
    pairs: dict[str, Pair] = {}
    header = datasets_store.get_header(identity.tenant, result.dataset_kind, result.dataset_id)
    if header is not None:
        try:
            pairs = datasets_store.get_pairs(header, chosen, max_bytes)
        except datasets_store.TooLarge:
            raise PayloadTooLarge(
                f"these {len(chosen)} pairs are too large for one response: ask for fewer "
                "with a smaller n"
            ) from None
    sample = []
    for pid in chosen:
        pair = pairs.get(pid)
        scores = scored[pid]
        sample.append(
            AuditPair(
                pair_id=pid,
                input=pair.input if pair else None,
                output=pair.output if pair else None,
                score=scores.scores[metric_idx],
                reason=scores.reasons[metric_idx],
            )
        )
    return AuditSample(results_id, metric_idx, result.definitions[metric_idx], len(unvoted), sample)
