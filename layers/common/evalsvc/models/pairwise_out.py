"""The v1 shapes of a pairwise run's answers (E5: POST /pairwise, GET /pairwise/{id}). Apart from
models.pairwise, which the job engine and every pairwise route import, so that only the routes
answering with a run build these nine models at their start."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from evalsvc.models.usage import UsageOut


class PairwiseQueuedOut(BaseModel):
    pairwise_id: str
    status: Literal["running"]


class ProgressOut(BaseModel):
    done: int = Field(description="Pairs whose comparisons (every matchup, each order) are judged")
    total: int = Field(description="Pairs to judge")


class PositionOut(BaseModel):
    judgements: int = Field(description="Judgements made, each order of each comparison one")
    first_chosen: int
    second_chosen: int
    ties: int
    consistency: float | None = Field(
        description="Share of comparisons whose two orders chose the same run (a tie in both "
        "counts as the same); null without both_orders"
    )


class MatchupOut(BaseModel):
    a: str
    b: str
    a_wins: int
    b_wins: int
    ties: int
    win_rate: float | None = Field(description="a_wins / (a_wins + b_wins)")
    ci_low: float | None = Field(description="Wilson 95 % interval of win_rate")
    ci_high: float | None
    p_value: float | None = Field(description="Exact two-sided binomial test at 1/2")
    p_adjusted: float | None = Field(description="Holm over the matchups")
    verdict: Literal["a_better", "b_better", "no_significant_difference"]


class LeaderboardOut(BaseModel):
    result_id: str
    rank: int = Field(description="1 is best")
    strength: float = Field(description="Bradley-Terry strength, natural log scale, mean 0")
    ci_low: float
    ci_high: float
    wins: int
    losses: int
    ties: int


class OrderOut(BaseModel):
    winner: Literal["first", "second", "tie"]
    reason: str


class VerdictOut(BaseModel):
    pair_id: str
    a: str
    b: str
    winner: Literal["a", "b", "tie"]
    first_order: OrderOut | None = Field(
        description="The judge's verdict with a's output shown first; null when the outputs "
        "were byte-equal (a tie without a call)"
    )
    second_order: OrderOut | None = Field(
        description="With b's output shown first; null with one order or equal outputs"
    )


class JudgeHumanOut(BaseModel):
    votes: int
    agreement: float | None
    ci_low: float | None
    ci_high: float | None
    kappa: float | None


class PairwiseOut(BaseModel):
    pairwise_id: str
    status: Literal["running", "complete", "failed"]
    progress: ProgressOut
    failure: str | None
    question: str
    result_ids: list[str]
    pairs_used: int
    both_orders: bool
    alpha: float
    usage: UsageOut
    position: PositionOut | None = Field(description="Null until the run is complete")
    matchups: list[MatchupOut]
    leaderboard: list[LeaderboardOut]
    verdicts: list[VerdictOut] = Field(description="This page's verdicts, in pair id order")
    next_cursor: str | None
    judge_human: JudgeHumanOut
