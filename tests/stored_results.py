"""Evaluation results made straight from scored pairs, without scoring anything: for tests and
benchmarks that need results of a given shape or size."""

from __future__ import annotations

from collections.abc import Sequence

from evalsvc.core.identifiers import now_ms
from evalsvc.logic.scored_pairs import summarize_result
from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import EvaluationResult, ScoredPair
from evalsvc.storage import results as results_store


def store_result(
    tenant: str,
    results_id: str,
    definitions: list[str],
    scored: Sequence[ScoredPair],
    system_prompt: str = "",
    metrics_id: str | None = None,
) -> EvaluationResult:
    """Store a complete result of `scored` (with its statistics) as an evaluation would."""
    result = EvaluationResult(
        tenant=tenant,
        results_id=results_id,
        created_ms=now_ms(),
        dataset_id=f"ds-{results_id}",
        dataset_kind=DatasetKind.SEED,
        metrics_id=metrics_id or f"m-{results_id}",
        definitions=definitions,
        system_prompt=system_prompt,
        pair_count=len(scored),
        summaries=[],
        pairs_done=len(scored),
    )
    summarize_result(result, scored)
    results_store.put(result, scored)
    return result
