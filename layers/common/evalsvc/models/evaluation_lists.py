"""The v1 shapes of the evaluation routes' smaller answers: the list of results, a result's
pairs, a vote. Apart from models.evaluation_out so that those routes do not build the result's
figures' models at their start."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from evalsvc.core.identifiers import format_ms
from evalsvc.models.common import ListNextCursor
from evalsvc.models.pair_fields_out import OptionalPairFields

if TYPE_CHECKING:
    from evalsvc.models.evaluations import ListedResult


class ListedEvaluationOut(BaseModel):
    eval_results_id: str = Field(description="The evaluation result's id (GET /evaluation/{id})")
    dataset_id: str = Field(description="The dataset it evaluated, seed or synthetic")
    metrics_id: str = Field(description="The metrics set it was scored with")
    status: Literal["running", "complete", "failed"] = Field(
        description="As it stands now: running until every pair is scored, then complete "
        "(or failed)"
    )
    pair_count: int = Field(description="Pairs the evaluation scores")
    created_at: str = Field(
        description="When it started: ISO 8601 UTC with milliseconds, as GET /evaluation/{id} "
        "gives it"
    )


class EvaluationListOut(BaseModel):
    """A page of the caller's evaluation results."""

    evaluations: list[ListedEvaluationOut] = Field(
        description="Newest first (evaluations started in the same millisecond by "
        "eval_results_id, the greater first)"
    )
    next_cursor: ListNextCursor


def listed_evaluation_out(listed: ListedResult) -> dict[str, object]:
    return {
        "eval_results_id": listed.results_id,
        "dataset_id": listed.dataset_id,
        "metrics_id": listed.metrics_id,
        "status": listed.status.value,
        "pair_count": listed.pair_count,
        "created_at": format_ms(listed.created_ms),
    }


class ResultPairOut(OptionalPairFields):
    """A pair an evaluation result scored, as it was when scored."""

    pair_id: str
    input: str
    output: str
    labels: list[str]
    input_media: str | None = Field(
        default=None, description="Only when the pair was written with input_media"
    )
    system_prompt_template: str | None = Field(
        default=None, description="Only when the pair was written with a system_prompt_template"
    )


class ResultPairsOut(BaseModel):
    """A page of the pairs an evaluation result scored (E7)."""

    pairs: list[ResultPairOut] = Field(
        description="In dataset order, as they were when the result scored them, whatever "
        "happened to the dataset since (pairs appended later are not among them)"
    )
    next_cursor: ListNextCursor


class VoteOut(BaseModel):
    success: bool
    results_id: str
    pair_id: str
