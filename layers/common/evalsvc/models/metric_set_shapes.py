"""The v1 shapes of the metrics-set routes (POST /specify_questions, POST /questions, GET
/question/{id}, GET /list_questions). Apart from models.metric_sets, which every route that
scores or counts judge calls imports, so that only these routes build them at their start."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from evalsvc.core.identifiers import format_ms
from evalsvc.models.metric_sets import MAX_DEFINITIONS, Definition, MetricsSet
from evalsvc.models.usage import UsageOut


class SpecifyQuestionsIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    metrics: list[Definition] = Field(min_length=1, max_length=MAX_DEFINITIONS)


class MetricsCreated(BaseModel):
    metrics_id: str
    definitions: list[str]


class QuestionsOut(MetricsCreated):
    usage: UsageOut


class MetricsSetOut(BaseModel):
    metrics_id: str
    definitions: list[str]
    system_prompt: str
    metric_count: int
    created_at: str


class MetricsListOut(BaseModel):
    metrics: dict[str, MetricsSetOut]
    total_count: int = Field(description="Sets in this response (in this page, when paged)")
    next_cursor: str | None = Field(
        default=None,
        description="Only with `limit` or `cursor`: the cursor of the next page (sets in id "
        "order), null on the last",
    )


def metrics_set_out(metrics: MetricsSet) -> MetricsSetOut:
    return MetricsSetOut(
        metrics_id=metrics.metrics_id,
        definitions=metrics.definitions,
        system_prompt=metrics.system_prompt,
        metric_count=len(metrics.definitions),
        created_at=format_ms(metrics.created_ms),
    )
