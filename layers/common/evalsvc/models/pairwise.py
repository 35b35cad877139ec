"""Pairwise judging (E5): the request, the run as stored, and the vote's answer (the run's
answers are models.pairwise_out's)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evalsvc.models.jobs import Status
from evalsvc.models.usage import max_cost_usd_field
from evalsvc.spending.meter import Usage

# The job kind of a pairwise run (logic.kinds.pairwise), by which its job is read.
PAIRWISE = "pairwise"
MIN_RUNS, MAX_RUNS = 2, 8
MAX_QUESTION_CHARS = 2_000
MAX_PAIRS = 100_000
DEFAULT_MAX_PAIRS = 500
MAX_VERDICTS_PAGE = 1_000
DEFAULT_VERDICTS_PAGE = 100


class PairwiseIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    result_ids: list[str] = Field(
        min_length=MIN_RUNS,
        max_length=MAX_RUNS,
        description="2-8 distinct evaluation result ids, all complete: the runs to rank",
    )
    question: str = Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        description='The criterion, 1-2,000 characters ("Which answer is more helpful?")',
    )
    both_orders: bool = Field(
        default=True,
        description="Judge every comparison in both orders, so that a preference for a position "
        "cancels",
    )
    max_pairs: int = Field(
        default=DEFAULT_MAX_PAIRS,
        ge=1,
        le=MAX_PAIRS,
        description="Pair ids used, at most; when the runs share more, a uniform sample seeded "
        "by the pairwise id",
    )
    alpha: float = Field(
        default=0.05,
        gt=0,
        lt=0.5,
        allow_inf_nan=False,
        description="Significance level of the matchups' verdicts (0 < alpha < 0.5)",
    )
    max_cost_usd: float | None = max_cost_usd_field("POST /pairwise/estimate")

    @field_validator("result_ids")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            repeated = sorted({v for v in value if value.count(v) > 1})
            raise ValueError(f"must be distinct; repeated: {', '.join(map(repr, repeated))}")
        return value

    @field_validator("question")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must say what to judge; it is blank")
        return value


class PairwiseVoteIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    pair_id: str = Field(description="The pair whose comparison is voted on")
    a: str = Field(description="One run of the comparison (a result id of the pairwise run)")
    b: str = Field(description="The other run")
    winner: Literal["a", "b", "tie"] = Field(description="Which run's output is better")
    comment: str | None = Field(default=None, max_length=4_000, description="Optional")


class PairwiseVoteOut(BaseModel):
    success: bool
    pairwise_id: str
    pair_id: str


@dataclass(slots=True)
class PairwiseRun:
    """A pairwise run as stored: what was asked, how far it is, and the counts its statistics
    come from (`counts`: {"outcomes": {"<a>|<b>|<a|b|tie>": n}, "orders": {"<first>|<second or
    ->": n}}, run ids by their index in `result_ids`)."""

    tenant: str
    pairwise_id: str
    created_ms: int
    question: str
    result_ids: list[str]
    both_orders: bool
    alpha: float
    max_pairs: int
    pairs_used: int
    status: Status = Status.RUNNING
    failure: str = ""
    counts: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    model: str | None = None


@dataclass(frozen=True, slots=True)
class OrderVerdict:
    winner: str  # "first" | "second" | "tie"
    reason: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """One comparison of one pair: runs `a` and `b` (indexes in the run's result_ids, a < b),
    the outcome, and each order's verdict (`second_order` None with one order; both None when
    the outputs were byte-equal: a tie without a call)."""

    pair_id: str
    a: int
    b: int
    winner: str  # "a" | "b" | "tie"
    first_order: OrderVerdict | None
    second_order: OrderVerdict | None


@dataclass(frozen=True, slots=True)
class Vote:
    user: str
    pair_id: str
    a: int
    b: int
    winner: str  # "a" | "b" | "tie"
    comment: str
    time_ms: int


@dataclass(slots=True)
class Counts:
    """What the statistics are computed from, added up over pairs (and chunks): per matchup
    (i, j, outcome) how many comparisons; per comparison its (order 1, order 2 or "-")
    judgements. Kept as JSON in the run and in each chunk's tally."""

    outcomes: Counter[str] = field(default_factory=Counter)
    orders: Counter[str] = field(default_factory=Counter)

    def add(self, verdict: Verdict) -> None:
        self.outcomes[f"{verdict.a}|{verdict.b}|{verdict.winner}"] += 1
        if verdict.first_order is not None:
            second = verdict.second_order.winner if verdict.second_order else "-"
            self.orders[f"{verdict.first_order.winner}|{second}"] += 1

    def merge(self, other: Counts) -> None:
        self.outcomes.update(other.outcomes)
        self.orders.update(other.orders)

    def as_json(self) -> dict[str, Any]:
        return {"outcomes": dict(self.outcomes), "orders": dict(self.orders)}

    @classmethod
    def from_json(cls, value: Any) -> Counts:
        value = value if isinstance(value, dict) else {}
        return cls(
            Counter({str(k): int(v) for k, v in dict(value.get("outcomes", {})).items()}),
            Counter({str(k): int(v) for k, v in dict(value.get("orders", {})).items()}),
        )
