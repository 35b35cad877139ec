"""Metrics sets: an ordered list of definitions (judge questions or `check:` definitions). The
metrics-set routes' request and answers are models.metric_set_shapes'."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field

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
