"""Scoring pairs and summarising the scores: shared by evaluations scored inside a request and
by the workers of queued ones, so both give the same numbers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
