"""Metrics sets: an ordered list of definitions (judge questions or `check:` definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from evalsvc.core.identifiers import format_ms
from evalsvc.models.usage import UsageOut

MAX_DEFINITIONS = 50
MAX_DEFINITION_CHARS = 2_000

Definition = Annotated[str, Field(min_length=1, max_length=MAX_DEFINITION_CHARS)]
# A definition that starts so is a check (scoring.checks), scored without the judge; any other
# is a question for the judge.
CHECK_PREFIX = "check:"


def is_check(definition: str) -> bool:
    """Whether the definition is a check (scored without the judge), not a question."""
    return definition.startswith(CHECK_PREFIX)


def judge_calls(definitions: Sequence[str], pair_count: int, judge_samples: int = 1) -> int:
    """The judge calls scoring `pair_count` pairs on `definitions` asks for: one per judged
    (pair, question) and sample (judge_samples), before the judge cache answers any."""
    return pair_count * sum(1 for d in definitions if not is_check(d)) * judge_samples


@dataclass(slots=True)
class MetricsSet:
    tenant: str
    metrics_id: str
    definitions: list[str]
    system_prompt: str
    created_ms: int


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
