"""What produced an evaluation result (E7), as its answers and report pages show it. Apart from
models.evaluation_out so that the report pages, which show it, do not build the answers'
other models at their start."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from evalsvc.models.evaluations import EvaluationResult


class InputsOut(BaseModel):
    """What produced a result (E7)."""

    dataset_id: str
    dataset_version: str = Field(
        description="The dataset version the result read (GET /data/seed/{id}/versions)"
    )
    pairs_digest: str | None = Field(
        description="SHA-256 (hex) of the pairs the result scored, in the canonical form of "
        'docs/design.md ("Reproducible results"): equal for two results over the same pairs '
        "whatever happened to the dataset between; null until every pair is scored"
    )
    metrics_id: str
    definitions_sha256: str = Field(
        description="SHA-256 (hex) of the metric definitions as scored (JSON list, UTF-8)"
    )
    judge_model: str | None = Field(
        description="The judge's model (provider:model); null without a judged metric"
    )
    judge_prompt_version: str | None = Field(
        description="The version of the judge's prompt; null without a judged metric"
    )
    judge_samples: int
    service_version: str
    prices_date: str = Field(description="The date of the price table costs were counted with")


def inputs_out(result: EvaluationResult) -> InputsOut | None:
    """What produced `result`, as GET /evaluation/{id} shows it (None: not kept)."""
    inputs = result.inputs
    if inputs is None:
        return None
    return InputsOut(
        dataset_id=result.dataset_id,
        dataset_version=inputs.dataset_version,
        pairs_digest=inputs.pairs_digest,
        metrics_id=result.metrics_id,
        definitions_sha256=inputs.definitions_sha256,
        judge_model=inputs.judge_model,
        judge_prompt_version=inputs.judge_prompt_version,
        judge_samples=result.judge_samples,
        service_version=inputs.service_version,
        prices_date=inputs.prices_date,
    )
