"""Planning a comparison (POST /plan, E6): how many pairs it needs to see a given difference,
per metric, from the spread a baseline (and a candidate) showed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from evalsvc.models.anchored import LabelPlanIn
from evalsvc.models.common import MIN_ALPHA
from evalsvc.statistics.error_bars import DEFAULT_POWER


class PlanIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    baseline_id: str = Field(description="A complete evaluation result: the comparison's baseline")
    candidate_id: str | None = Field(
        default=None,
        description="A complete evaluation result of the change, when there is one: the sd is "
        "then that of the paired differences of the matched pairs. null (default): the "
        "comparison is planned as two independent runs from the baseline alone",
    )
    effect: float = Field(
        gt=0,
        allow_inf_nan=False,
        description="The mean difference the comparison should detect, on the score scale (> 0)",
    )
    alpha: float = Field(
        default=0.05,
        ge=MIN_ALPHA,
        lt=0.5,
        allow_inf_nan=False,
        description="Two-sided significance level of the planned comparison (1e-100 <= alpha "
        "< 0.5), as POST /compare's",
    )
    power: float = Field(
        default=DEFAULT_POWER,
        ge=0.5,
        lt=1.0,
        allow_inf_nan=False,
        description="The chance the comparison should have to detect the effect (0.5 <= power < 1)",
    )


def _plan_kind(body: Any) -> str:
    """A body naming half_width or result_id plans labels (E12); any other plans a comparison."""
    if isinstance(body, dict) and ("half_width" in body or "result_id" in body):
        return "labels"
    if isinstance(body, LabelPlanIn):
        return "labels"
    return "comparison"


# POST /plan's body: a comparison's plan (baseline_id, effect...) or the labels an anchored
# interval needs (result_id, metric_idx, half_width).
AnyPlanIn = Annotated[
    Annotated[PlanIn, Tag("comparison")] | Annotated[LabelPlanIn, Tag("labels")],
    Discriminator(_plan_kind),
]


# ---- domain ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MetricPlan:
    """One metric of a plan: the sd it was planned with (None when unknown), the pairs needed
    (None when the sd is), whether paired, and how many pairs the sd came from."""

    metric: str
    n: int
    sd: float | None
    pairs_needed: int | None
    paired: bool


# ---- responses ---------------------------------------------------------------------------------


class MetricPlanOut(BaseModel):
    metric: str = Field(description="The metric definition (the baseline's order)")
    n: int = Field(
        description="The pairs the sd was estimated from: the matched pairs with a candidate, "
        "the baseline's pairs without"
    )
    sd: float | None = Field(
        description="With a candidate, the sample standard deviation of the differences "
        "candidate - baseline over the matched pairs (paired); without, sqrt(2) x the "
        "baseline's std_dev (two independent runs). null when n < 2: no spread can be "
        "estimated from one pair"
    )
    pairs_needed: int | None = Field(
        description="ceil(((z(1 - alpha/2) + z(power)) * sd / effect)^2), at least 2: the pairs "
        "the comparison needs to detect a mean difference of `effect` with probability `power` "
        "at level alpha (each run scoring that many pairs when not paired); null when sd is"
    )
    paired: bool = Field(description="Whether sd is of paired differences (a candidate given)")


class PlanOut(BaseModel):
    baseline_id: str
    candidate_id: str | None
    effect: float
    alpha: float
    power: float
    metrics: list[MetricPlanOut] = Field(
        description="Per metric, in the baseline's order (with a candidate: the metrics both "
        "were scored on)"
    )
