"""The metrics of a set, ready to score: each definition is a check (scored here, per pair) or
a question for the LLM judge (all questions judged together, in one pool of calls)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from evalsvc.core.errors import InvalidInput
from evalsvc.models.datasets import Pair
from evalsvc.scoring import checks
from evalsvc.scoring.checks import Score, Scorer


@dataclass(slots=True)
class Verdicts:
    """The judge's scores by (question index, pair index); `complete` when every one is there
    (the deadline may come first). Asked k > 1 times, a score is the mean of the k answers and
    `samples` holds the k, by the same key."""

    scores: dict[tuple[int, int], Score]
    complete: bool
    samples: dict[tuple[int, int], list[int]] = field(default_factory=dict)


class PendingVerdicts(Protocol):
    def result(self) -> Verdicts: ...

    def close(self) -> None: ...


class Judge(Protocol):
    """Answers questions about pairs with a score 1-5 and a reason."""

    def begin(
        self, questions: Sequence[str], pairs: Sequence[Pair], system_prompt: str, samples: int = 1
    ) -> PendingVerdicts: ...

    def expected_seconds(self, calls: int) -> float | None: ...


@dataclass(slots=True)
class Metrics:
    """The scorers of a metrics set: checks and questions, each with its metric index."""

    count: int
    checks: list[tuple[int, Scorer]] = field(default_factory=list)
    questions: list[tuple[int, str]] = field(default_factory=list)
    judge: Judge | None = None
    # How many times the judge is asked about each (pair, question) (judge_samples).
    judge_samples: int = 1


def scorers_for(definitions: Sequence[str], judge: Judge | None, judge_samples: int = 1) -> Metrics:
    """The scorers of `definitions`. A question without a configured judge is a 400 naming the
    metric and the setting, raised before any pair is read or scored."""
    metrics = Metrics(count=len(definitions), judge=judge, judge_samples=judge_samples)
    for index, definition in enumerate(definitions):
        if checks.is_check(definition):
            metrics.checks.append((index, checks.parse(definition)))
        elif judge is None:
            preview = definition if len(definition) <= 60 else definition[:57] + "..."
            raise InvalidInput(
                f"metric {index} ({preview!r}) is a question for an LLM judge, and none is "
                "configured: set EVALSVC_LLM to bedrock:<model-id> or openai:<model>, or use "
                "check: metrics"
            )
        else:
            metrics.questions.append((index, definition))
    return metrics
