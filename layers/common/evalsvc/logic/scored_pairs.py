"""Scoring pairs and summarising the scores: shared by evaluations scored inside a request and
by the workers of queued ones, so both give the same numbers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evalsvc.deadlines import Deadline
from evalsvc.models.datasets import Pair
from evalsvc.models.evaluations import (
    LOWEST_PER_METRIC,
    MAX_REASON_CHARS,
    EvaluationResult,
    LowScore,
    ScoredPair,
)
from evalsvc.scoring.checks import Score
from evalsvc.scoring.metric import Metrics, Verdicts
from evalsvc.stats import histogram, summarize_counts


def _reason(text: str) -> str:
    text = text.strip() or "no reason given"
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def _lowest(scored: Sequence[ScoredPair], metric: int) -> list[ScoredPair]:
    """The LOWEST_PER_METRIC pairs lowest on a metric, lowest first, ties in dataset order."""
    return sorted(scored, key=lambda p: (p.scores[metric], p.index))[:LOWEST_PER_METRIC]


def lowest_scoring(scored: Sequence[ScoredPair], metric: int) -> list[LowScore]:
    """The LOWEST_PER_METRIC lowest scores of a metric, lowest first, ties in dataset order."""
    return [
        LowScore(p.pair_id, p.scores[metric], p.reasons[metric]) for p in _lowest(scored, metric)
    ]


def summarize_result(result: EvaluationResult, scored: Sequence[ScoredPair]) -> None:
    """Fill the statistics, score histograms and lowest pairs of `result` from its scored pairs
    (dataset order)."""
    count = len(result.definitions)
    counts = [Counter(p.scores[m] for p in scored) for m in range(count)]
    result.summaries = [summarize_counts(c) for c in counts]
    result.histograms = [histogram(c) for c in counts]
    result.lowest = [lowest_scoring(scored, m) for m in range(count)]


def totals(scored: Sequence[ScoredPair], metric_count: int) -> dict[str, Any]:
    """What a chunk of scored pairs contributes to its result's statistics, small whatever the
    reasons: per metric, how many times each score occurs (enough for the exact mean, spread
    and median) and its LOWEST_PER_METRIC lowest pairs (id, score, position)."""
    counts = [Counter(p.scores[m] for p in scored) for m in range(metric_count)]
    lowest = [_lowest(scored, m) for m in range(metric_count)]
    return {
        "counts": [sorted(c.items()) for c in counts],
        "lowest": [
            [[p.pair_id, p.scores[m], p.index] for p in metric] for m, metric in enumerate(lowest)
        ],
    }


def summarize_totals(result: EvaluationResult, parts: Sequence[dict[str, Any]]) -> None:
    """Fill the statistics, score histograms and lowest pairs of `result` from the totals of
    all its chunks: exactly what summarize_result gives for the same pairs."""
    count = len(result.definitions)
    result.summaries = []
    result.histograms = []
    result.lowest = []
    for m in range(count):
        counts: Counter[float] = Counter()
        candidates: list[tuple[float, int, str]] = []
        for part in parts:
            for value, times in part["counts"][m]:
                counts[float(value)] += int(times)
            candidates.extend(
                (float(score), int(index), str(pid)) for pid, score, index in part["lowest"][m]
            )
        result.summaries.append(summarize_counts(counts))
        result.histograms.append(histogram(counts))
        candidates.sort(key=lambda c: (c[0], c[1]))
        result.lowest.append(
            [LowScore(pid, score) for score, _, pid in candidates[:LOWEST_PER_METRIC]]
        )


@dataclass(slots=True)
class Scoring:
    """The pairs scored on every metric, in order; `complete` unless the deadline came first
    (then `scored` holds the pairs finished by then)."""

    scored: list[ScoredPair]
    complete: bool


def score_pairs(
    metrics: Metrics,
    pairs: Sequence[Pair],
    system_prompt: str,
    positions: Sequence[int] | None = None,
    deadline: Deadline | None = None,
) -> Scoring:
    """Every pair scored on every metric; `positions` are the pairs' positions in the dataset
    (0, 1, 2… by default). The judge's calls are in flight while the checks are scored here;
    checks stop at `deadline`, the judge's calls at the deadline its LLM was given."""
    if positions is None:
        positions = range(len(pairs))
    judging = None
    if metrics.questions:
        assert metrics.judge is not None
        questions = [question for _, question in metrics.questions]
        judging = metrics.judge.begin(questions, pairs, system_prompt)
    try:
        checked: list[list[Score]] = []
        for pair in pairs:
            if deadline is not None and deadline.passed():
                break
            checked.append([score(pair.input, pair.output) for _, score in metrics.checks])
        verdicts = judging.result() if judging else Verdicts({}, complete=True)
    finally:
        if judging:
            judging.close()
    scored = []
    for offset, check_scores in enumerate(checked):
        by_metric: dict[int, Score] = {
            m: s for (m, _), s in zip(metrics.checks, check_scores, strict=True)
        }
        for q, (m, _) in enumerate(metrics.questions):
            verdict = verdicts.scores.get((q, offset))
            if verdict is not None:
                by_metric[m] = verdict
        if len(by_metric) < metrics.count:
            continue  # a verdict is missing: the deadline came first
        scored.append(
            ScoredPair(
                pair_id=pairs[offset].id,
                index=positions[offset],
                scores=[by_metric[m].value for m in range(metrics.count)],
                reasons=[_reason(by_metric[m].reason) for m in range(metrics.count)],
            )
        )
    return Scoring(scored, complete=len(scored) == len(pairs))
