"""The metrics of a set, ready to score: each definition is a check (scored here, per pair), a
question or a rag: metric for the LLM judge (all judged together, in one pool of calls), or an
embed: metric for the embeddings model (E10). A metric that needs what a pair lacks
(models.metric_sets.missing) is not applicable to it: no scorer sees the pair for it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from evalsvc.core.errors import InvalidInput
from evalsvc.models.datasets import Pair
from evalsvc.models.metric_sets import kind_of
from evalsvc.scoring import checks
from evalsvc.scoring.checks import PairScorer, Score


@dataclass(slots=True)
class Verdicts:
    """The judge's scores by (question index, pair index); `complete` when every one is there
    (the deadline may come first). Asked k > 1 times, a score is the mean of the k answers and
    `samples` holds the k, by the same key."""

    scores: dict[tuple[int, int], Score]
    complete: bool
    samples: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    # E13, of a jury: each judge's score (in the jury's order), by the same key.
    by_judge: dict[tuple[int, int], list[float]] = field(default_factory=dict)


class PendingVerdicts(Protocol):
    def result(self) -> Verdicts: ...

    def close(self) -> None: ...


class Judge(Protocol):
    """Answers questions about pairs with a score 1-5 and a reason. A question may be a rag:
    metric; a pair that metric does not apply to (models.metric_sets.missing) gets no verdict
    and costs no call."""

    def begin(
        self, questions: Sequence[str], pairs: Sequence[Pair], system_prompt: str, samples: int = 1
    ) -> PendingVerdicts: ...

    def expected_seconds(self, calls: int) -> float | None: ...

    @property
    def names(self) -> list[str]:
        """The judge's name, or a jury's judges' (each asked about every judged pair)."""
        ...


class PendingScores(Protocol):
    def result(self) -> dict[int, Score]: ...

    def close(self) -> None: ...


class Embeddings(Protocol):
    """Scores (output, reference) items by the similarity of their embeddings (embed:
    similarity), by item index; an item missing from the result was not scored in time."""

    def begin(self, items: Sequence[tuple[str, str]]) -> PendingScores: ...


@dataclass(slots=True)
class Metrics:
    """The scorers of a metrics set, each with its metric index: checks, the judge's questions
    (rag: metrics among them) and the embeddings model's metrics."""

    count: int
    checks: list[tuple[int, PairScorer]] = field(default_factory=list)
    questions: list[tuple[int, str]] = field(default_factory=list)
    judge: Judge | None = None
    # How many times the judge is asked about each (pair, question) (judge_samples).
    judge_samples: int = 1
    # The metrics embed:similarity scores, and the model that scores them.
    embedded: list[int] = field(default_factory=list)
    embeddings: Embeddings | None = None
    definitions: list[str] = field(default_factory=list)


def _no_model(index: int, definition: str, what: str, setting: str) -> InvalidInput:
    preview = definition if len(definition) <= 60 else definition[:57] + "..."
    return InvalidInput(
        f"metric {index} ({preview!r}) is {what}, and none is configured: {setting}"
    )


def scorers_for(
    definitions: Sequence[str],
    judge: Judge | None,
    judge_samples: int = 1,
    embeddings: Embeddings | None = None,
) -> Metrics:
    """The scorers of `definitions`. A judged metric without a configured judge, or an embed:
    metric without an embeddings model, is a 400 naming the metric and the setting, raised
    before any pair is read or scored."""
    metrics = Metrics(
        count=len(definitions),
        judge=judge,
        judge_samples=judge_samples,
        embeddings=embeddings,
        definitions=list(definitions),
    )
    for index, definition in enumerate(definitions):
        kind = kind_of(definition)
        if kind == "check":
            metrics.checks.append((index, checks.parse_for_pairs(definition)))
        elif kind == "embed":
            if embeddings is None:
                raise _no_model(
                    index,
                    definition,
                    "scored with an embeddings model",
                    "set EVALSVC_EMBEDDINGS to bedrock:<model-id> or openai:<model>",
                )
            metrics.embedded.append(index)
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
