"""Estimates anchored to people (E12): the answer of GET /evaluation/{id}/anchored and the
labels plan of POST /plan with half_width."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalsvc.models.common import MIN_ALPHA
from evalsvc.statistics.anchored import Anchored, Interval, LabelPlan


class ClassicalOut(BaseModel):
    estimate: float | None = Field(description="mean_L(Y): the share of +1 among the labels")
    se: float | None = Field(description="sd_L(Y)/sqrt(n)")
    ci_low: float | None = Field(description="estimate - z * se, clipped to [0, 1]")
    ci_high: float | None = Field(description="estimate + z * se, clipped to [0, 1]")


class JudgeOnlyOut(BaseModel):
    estimate: float | None = Field(
        description="The mean over every scored pair of (score - 1)/4: what the judge alone "
        "says; null when no pair was scored on the metric"
    )


class AnchoredOut(BaseModel):
    eval_results_id: str
    metric_idx: int
    metric: str = Field(description="The metric definition")
    alpha: float = Field(description="The intervals are at 1 - alpha")
    n_labeled: int = Field(
        description="Pairs with at least one +1 or -1 vote cast with source audit (the labels)"
    )
    n_unlabeled: int = Field(description="The other pairs scored on the metric")
    estimate: float | None = Field(
        description="What people would say: the share of the scored pairs people say meet the "
        "metric, estimated from the labels and the judge's scores (PPI++: lambda * mean_U(f) + "
        "mean_L(Y - lambda * f)); null when n_labeled < 2 or n_unlabeled < 2"
    )
    se: float | None = Field(
        description="sqrt(lambda^2 * var_U(f)/N + var_L(Y - lambda * f)/n), ddof 1"
    )
    ci_low: float | None = Field(description="estimate - z(1 - alpha/2) * se, clipped to [0, 1]")
    ci_high: float | None = Field(description="estimate + z(1 - alpha/2) * se, clipped to [0, 1]")
    lambda_: float | None = Field(
        alias="lambda",
        description="How much the judge is trusted: cov_L(Y, f) / ((1 + n/N) * var_U(f)) "
        "clipped to [0, 1]; 0 when var_U(f) = 0",
    )
    effective_labels: float | None = Field(
        description="n * (classical.se / se)^2: the labels the classical estimate would need "
        "for the same width; null when se = 0"
    )
    classical: ClassicalOut = Field(description="From the labels alone")
    judge_only: JudgeOnlyOut


def _interval(interval: Interval | None) -> dict[str, float | None]:
    if interval is None:
        return {"estimate": None, "se": None, "ci_low": None, "ci_high": None}
    return {
        "estimate": interval.estimate,
        "se": interval.se,
        "ci_low": interval.ci_low,
        "ci_high": interval.ci_high,
    }


def anchored_out(
    results_id: str,
    metric_idx: int,
    metric: str,
    alpha: float,
    figures: Anchored,
    judge_only: float | None,
) -> dict[str, Any]:
    return {
        "eval_results_id": results_id,
        "metric_idx": metric_idx,
        "metric": metric,
        "alpha": alpha,
        "n_labeled": figures.n_labeled,
        "n_unlabeled": figures.n_unlabeled,
        **_interval(figures.anchored),
        "lambda": figures.lam,
        "effective_labels": figures.effective_labels,
        "classical": _interval(figures.classical),
        "judge_only": {"estimate": judge_only},
    }


class LabelPlanIn(BaseModel):
    """POST /plan with half_width: how many audit labels an anchored interval needs."""

    model_config = ConfigDict(strict=True, extra="forbid")

    result_id: str = Field(description="A complete evaluation result with audit votes")
    metric_idx: int = Field(ge=0, description="The metric")
    half_width: float = Field(
        gt=0,
        le=1,
        allow_inf_nan=False,
        description="The interval's half-width wanted, on the 0-1 scale of the share "
        "(0.05: ±5 points)",
    )
    alpha: float = Field(
        default=0.05,
        ge=MIN_ALPHA,
        lt=0.5,
        allow_inf_nan=False,
        description="The interval is at 1 - alpha (1e-100 <= alpha < 0.5)",
    )


class LabelPlanOut(BaseModel):
    labels_needed: int | None = Field(
        description="ceil(z^2 * var_L(Y - lambda * f) / (half_width^2 - z^2 * lambda^2 * "
        "var_U(f)/N)) with the current lambda and variances: the audit labels the anchored "
        "interval needs; null when the judge's part alone is wider (the denominator is <= 0)"
    )
    classical_labels_needed: int = Field(
        description="ceil(z^2 * var_L(Y) / half_width^2): the labels the classical interval needs"
    )
    labels_now: int = Field(description="The pairs with audit labels now")


def label_plan_out(plan: LabelPlan) -> dict[str, Any]:
    return {
        "labels_needed": plan.labels_needed,
        "classical_labels_needed": plan.classical_labels_needed,
        "labels_now": plan.labels_now,
    }
