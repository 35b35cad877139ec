"""One scorer per metric definition: a check, or a question for the LLM judge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from evalsvc.errors import InvalidInput
from evalsvc.models.datasets import Pair
from evalsvc.scoring import checks
from evalsvc.scoring.checks import Score


class MetricScorer(Protocol):
    def score_all(self, pairs: Sequence[Pair], system_prompt: str) -> list[Score]: ...


class Judge(Protocol):
    """Answers a question about each pair with a score 1-5 and a reason."""

    def score_all(
        self, question: str, pairs: Sequence[Pair], system_prompt: str
    ) -> list[Score]: ...


class CheckScorer:
    def __init__(self, definition: str) -> None:
        self._score = checks.parse(definition)

    def score_all(self, pairs: Sequence[Pair], system_prompt: str) -> list[Score]:
        return [self._score(pair.input, pair.output) for pair in pairs]


class QuestionScorer:
    def __init__(self, question: str, judge: Judge) -> None:
        self.question = question
        self.judge = judge

    def score_all(self, pairs: Sequence[Pair], system_prompt: str) -> list[Score]:
        return self.judge.score_all(self.question, pairs, system_prompt)


def scorers_for(definitions: Sequence[str], judge: Judge | None) -> list[MetricScorer]:
    """A scorer for each definition. A question without a configured judge is a 400 naming the
    metric and the setting, raised before any pair is read or scored."""
    scorers: list[MetricScorer] = []
    for index, definition in enumerate(definitions):
        if checks.is_check(definition):
            scorers.append(CheckScorer(definition))
        elif judge is None:
            preview = definition if len(definition) <= 60 else definition[:57] + "..."
            raise InvalidInput(
                f"metric {index} ({preview!r}) is a question for an LLM judge, and none is "
                "configured: set EVALSVC_LLM to bedrock:<model-id> or openai:<model>, or use "
                "check: metrics"
            )
        else:
            scorers.append(QuestionScorer(definition, judge))
    return scorers
