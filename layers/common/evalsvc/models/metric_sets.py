"""Metrics sets: an ordered list of definitions (judge questions or `check:` definitions). The
metrics-set routes' request and answers are models.metric_set_shapes'."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

if TYPE_CHECKING:
    from evalsvc.models.datasets import Pair

MAX_DEFINITIONS = 50
MAX_DEFINITION_CHARS = 2_000

Definition = Annotated[str, Field(min_length=1, max_length=MAX_DEFINITION_CHARS)]
# A definition that starts so is a check (scoring.checks), scored without the judge; any other
# is a question for the judge.
CHECK_PREFIX = "check:"


# E10: metrics named by these prefixes are neither checks nor free questions: `rag:` metrics are
# judged claim by claim (scoring.rag), `embed:` metrics are scored with the embeddings model
# (scoring.embeddings). Only the names below exist; another is refused when a set is created.
RAG_PREFIX = "rag:"
EMBED_PREFIX = "embed:"
RAG_METRICS = ("rag:faithfulness", "rag:context_recall")
EMBED_METRICS = ("embed:similarity",)
# The judge calls one rag: metric takes for one pair: one lists the claims, one verifies them.
RAG_CALLS_PER_PAIR = 2

Need = Literal["reference", "contexts", "expected_tool_calls"]
# What each metric that needs more than the input and output needs of a pair (E10, E11). A pair
# without it is not applicable to the metric: left out of its statistics, never scored 1.
NEEDS: dict[str, tuple[Need, ...]] = {
    "check:exact_match": ("reference",),
    "check:token_f1": ("reference",),
    "check:rouge_l": ("reference",),
    "check:chrf": ("reference",),
    "embed:similarity": ("reference",),
    "rag:faithfulness": ("contexts",),
    "rag:context_recall": ("reference", "contexts"),
    # E11's tool-call checks (scoring.trajectory): a pair without tool_calls made none.
    "check:trajectory:strict": ("expected_tool_calls",),
    "check:trajectory:unordered": ("expected_tool_calls",),
    "check:trajectory:subset": ("expected_tool_calls",),
    "check:trajectory:superset": ("expected_tool_calls",),
    "check:tool_recall": ("expected_tool_calls",),
}

MetricKind = Literal["check", "question", "rag", "embed"]


def kind_of(definition: str) -> MetricKind:
    """How a definition is scored: a check (no model), a question or a rag: metric (the judge),
    an embed: metric (the embeddings model)."""
    if definition.startswith(CHECK_PREFIX):
        return "check"
    if definition.startswith(RAG_PREFIX):
        return "rag"
    if definition.startswith(EMBED_PREFIX):
        return "embed"
    return "question"


def is_check(definition: str) -> bool:
    """Whether the definition is a check (scored without any model)."""
    return definition.startswith(CHECK_PREFIX)


def is_judged(definition: str) -> bool:
    """Whether the judge scores the definition (a question or a rag: metric)."""
    return kind_of(definition) in ("question", "rag")


def missing(definition: str, pair: Pair) -> Need | None:
    """What the pair lacks that the metric needs (None: the metric applies to the pair). An
    empty reference is a reference; contexts are absent when None or empty; expected tool
    calls only when None (an empty list expects no call)."""
    for need in NEEDS.get(definition, ()):
        if need == "reference" and pair.reference is None:
            return need
        if need == "contexts" and not pair.contexts:
            return need
        if need == "expected_tool_calls" and pair.expected_tool_calls is None:
            return need
    return None


_NEEDED: dict[Need, str] = {
    "reference": "a reference",
    "contexts": "contexts",
    "expected_tool_calls": "expected_tool_calls",
}


def not_applicable_reason(definition: str, need: Need) -> str:
    """The reason stored for a pair the metric does not apply to."""
    return f"not applicable: {definition} needs {_NEEDED[need]}, and the pair has none"


def calls_per_pair(definition: str) -> int:
    """The judge calls one pair takes on the definition, per judge sample (0: no judge)."""
    kind = kind_of(definition)
    return 1 if kind == "question" else RAG_CALLS_PER_PAIR if kind == "rag" else 0


def judge_calls(definitions: Sequence[str], pair_count: int, judge_samples: int = 1) -> int:
    """The judge calls scoring `pair_count` pairs on `definitions` asks for at most: one per
    judged (pair, question) and sample (judge_samples), two per rag: metric (claims listed,
    then verified), before the judge cache answers any and counting every pair as applicable."""
    return pair_count * sum(calls_per_pair(d) for d in definitions) * judge_samples


def embedding_metrics(definitions: Sequence[str]) -> int:
    """How many of the definitions the embeddings model scores."""
    return sum(1 for d in definitions if kind_of(d) == "embed")


# E13: a jury is 2-5 of the judges EVALSVC_JUDGES names, its score their mean or median.
Aggregate = Literal["mean", "median"]
AGGREGATES: tuple[Aggregate, ...] = ("mean", "median")
MIN_JUDGES = 2
MAX_JUDGES = 5
# The longest judge name a set may carry (a model id is far shorter).
MAX_JUDGE_NAME_CHARS = 256


@dataclass(slots=True)
class MetricsSet:
    tenant: str
    metrics_id: str
    definitions: list[str]
    system_prompt: str
    created_ms: int
    # E13: the jury that judges its judged metrics (None: the single judge, EVALSVC_LLM).
    judges: list[str] | None = None
    jury: Aggregate = "mean"
