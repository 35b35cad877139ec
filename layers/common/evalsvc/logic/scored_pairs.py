"""Scoring pairs and summarising the scores: shared by evaluations scored inside a request and
by the workers of queued ones, so both give the same numbers."""

from __future__ import annotations

from collections.abc import Sequence

from evalsvc.models.datasets import Pair
from evalsvc.models.evaluations import (
    LOWEST_PER_METRIC,
    MAX_REASON_CHARS,
    EvaluationResult,
    LowScore,
    ScoredPair,
)
from evalsvc.scoring.metric import MetricScorer
from evalsvc.stats import summarize


def _reason(text: str) -> str:
    text = text.strip() or "no reason given"
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def lowest_scoring(scored: Sequence[ScoredPair], metric: int) -> list[LowScore]:
    """The LOWEST_PER_METRIC lowest scores of a metric, lowest first, ties in dataset order."""
    ranked = sorted(scored, key=lambda p: (p.scores[metric], p.index))[:LOWEST_PER_METRIC]
    return [LowScore(p.pair_id, p.scores[metric], p.reasons[metric]) for p in ranked]


def summarize_result(result: EvaluationResult, scored: Sequence[ScoredPair]) -> None:
    """Fill the statistics and lowest pairs of `result` from its scored pairs (dataset order)."""
    count = len(result.definitions)
    result.summaries = [summarize([p.scores[m] for p in scored]) for m in range(count)]
    result.lowest = [lowest_scoring(scored, m) for m in range(count)]


def score_pairs(
    scorers: Sequence[MetricScorer], pairs: Sequence[Pair], system_prompt: str, start: int = 0
) -> list[ScoredPair]:
    """Every pair scored on every metric; `start` is the position of the first pair."""
    per_metric = [scorer.score_all(pairs, system_prompt) for scorer in scorers]
    return [
        ScoredPair(
            pair_id=pair.id,
            index=start + offset,
            scores=[column[offset].value for column in per_metric],
            reasons=[_reason(column[offset].reason) for column in per_metric],
        )
        for offset, pair in enumerate(pairs)
    ]
