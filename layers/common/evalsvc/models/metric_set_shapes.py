"""The v1 shapes of the metrics-set routes (POST /specify_questions, POST /questions, GET
/question/{id}, GET /list_questions). Apart from models.metric_sets, which every route that
scores or counts judge calls imports, so that only these routes build them at their start."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from evalsvc.core.identifiers import format_ms
from evalsvc.models.metric_sets import (
    MAX_DEFINITIONS,
    MAX_JUDGE_NAME_CHARS,
    MAX_JUDGES,
    MIN_JUDGES,
    Aggregate,
    Definition,
    MetricsSet,
)
from evalsvc.models.usage import UsageOut

JudgeName = Annotated[str, Field(min_length=1, max_length=MAX_JUDGE_NAME_CHARS)]
JUDGES_DESCRIPTION = (
    "E13: the jury that judges the set's judged metrics: 2-5 distinct judges among those the "
    "service is configured with (EVALSVC_JUDGES), each with a price; absent: the one judge"
)
JURY_DESCRIPTION = (
    "E13: how the jury's scores make a pair's score: their mean (the default) or their median"
)


class SpecifyQuestionsIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    metrics: list[Definition] = Field(min_length=1, max_length=MAX_DEFINITIONS)
    judges: list[JudgeName] | None = Field(
        default=None, min_length=MIN_JUDGES, max_length=MAX_JUDGES, description=JUDGES_DESCRIPTION
    )
    jury: Aggregate | None = Field(default=None, description=JURY_DESCRIPTION)


class MetricsCreated(BaseModel):
    metrics_id: str
    definitions: list[str]
    judges: list[str] | None = Field(default=None, description=JUDGES_DESCRIPTION)
    jury: Aggregate | None = Field(default=None, description=JURY_DESCRIPTION)


class QuestionsOut(MetricsCreated):
    usage: UsageOut


class MetricsSetOut(BaseModel):
    metrics_id: str
    definitions: list[str]
    system_prompt: str
    metric_count: int
    created_at: str
    judges: list[str] | None = Field(default=None, description=JUDGES_DESCRIPTION)
    jury: Aggregate | None = Field(default=None, description=JURY_DESCRIPTION)


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
        judges=metrics.judges,
        jury=metrics.jury if metrics.judges else None,
    )
