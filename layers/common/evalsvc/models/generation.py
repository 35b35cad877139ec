"""Requests and responses of the generative routes: questions, improve_prompt, augment."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalsvc.models.datasets import MAX_TEXT_CHARS, PairQuery
from evalsvc.models.metric_sets import MAX_DEFINITIONS
from evalsvc.models.usage import UsageOut

MAX_CANDIDATES = 20
MAX_MULTIPLE = 50


class QuestionsIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    system_prompt: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]


class Candidate(BaseModel):
    """One prompt that was compared: its evaluation result, or its per-metric means."""

    model_config = ConfigDict(strict=True, extra="ignore")

    prompt: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]
    eval_results_id: str | None = None
    score_means: list[float] | None = Field(default=None, min_length=1, max_length=MAX_DEFINITIONS)

    @model_validator(mode="after")
    def _has_scores(self) -> Candidate:
        if self.eval_results_id is None and self.score_means is None:
            raise ValueError("a candidate needs eval_results_id or score_means")
        return self


class PromptComparison(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    metrics_id: str | None = None
    candidates: list[Candidate] = Field(min_length=1, max_length=MAX_CANDIDATES)


class ImprovePromptIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    seed_data_id: str
    prompt_comparison_results: PromptComparison


class ImprovePromptOut(BaseModel):
    improved_prompt: str
    original_prompt: str
    metrics_id: str
    usage: UsageOut


class AugmentIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    seed_data_id: str | None = None
    multiple: int = Field(default=1, ge=1, le=MAX_MULTIPLE)
    eval_results_id: str | None = None
    target_metric: Annotated[str, Field(min_length=1, max_length=2_000)] | None = None
    target_metric_idx: int | None = Field(default=None, ge=0)
    pair_query: PairQuery | None = None


class AugmentOut(BaseModel):
    synthetic_data_id: str
    created_at: str
    seed_data_size: int
    synthetic_data_size: int
    system_prompt: str
    target_metrics: list[str]
    usage: UsageOut


class AugmentQueuedOut(BaseModel):
    """The answer to `Prefer: respond-async`: the synthetic dataset to poll with GET
    /data/synthetic/{id} (a 503 while it is generated)."""

    synthetic_data_id: str
    status: str = Field(description="running, complete or failed")
    pairs_done: int
    pairs_total: int
