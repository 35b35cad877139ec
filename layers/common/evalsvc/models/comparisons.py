"""Comparing two evaluation results (POST /compare): the request, what the comparison found,
and the response shapes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evalsvc.models.common import MIN_ALPHA
from evalsvc.models.evaluations import ClusterBy
from evalsvc.statistics.error_bars import ClusteredMean
from evalsvc.statistics.scores import Paired

MAX_CHANGES = 200


class CompareIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    baseline_id: str = Field(description="The evaluation result compared against")
    candidate_id: str = Field(description="The evaluation result of the change")
    alpha: float = Field(
        default=0.05,
        ge=MIN_ALPHA,
        lt=0.5,
        allow_inf_nan=False,
        description="Significance level: intervals are at 1 - alpha (1e-100 <= alpha < 0.5)",
    )
    correction: Literal["holm", "none"] = Field(
        default="holm", description="holm: Holm-Bonferroni across the metrics; none: raw p-values"
    )
    regression_threshold: float = Field(
        default=1.0,
        gt=0,
        allow_inf_nan=False,
        description="A pair regressed (improved) on a metric when candidate - baseline is at "
        "most -threshold (at least threshold)",
    )
    limit: int = Field(
        default=20,
        ge=1,
        le=MAX_CHANGES,
        description="At most this many regressions and as many improvements",
    )
    cluster_by: ClusterBy | None = Field(
        default=None,
        description="Pairs that are not independent, by the baseline's pairs: label (matched "
        "pairs whose baseline pair has the same first label are one cluster; an unlabelled one "
        "is its own), input (byte-equal input) or conversation (the same conversation_id; one "
        "without is its own). Each metric then adds the clustered standard error and interval "
        "of mean_diff at 1 - alpha. null (default): every pair independent",
    )


Verdict = Literal["improved", "regressed", "no_significant_difference", "insufficient_data"]


# ---- domain ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MatchedMetric:
    """A definition both results were scored on: its text and its position in each."""

    definition: str
    baseline_idx: int
    candidate_idx: int


@dataclass(slots=True)
class PairChange:
    """One matched (pair, metric) whose score moved by at least the threshold."""

    pair_id: str
    metric: int  # position among the matched metrics
    baseline_score: float
    candidate_score: float
    baseline_reason: str = ""
    candidate_reason: str = ""

    @property
    def diff(self) -> float:
        return self.candidate_score - self.baseline_score


@dataclass(slots=True)
class MetricComparison:
    metric: MatchedMetric
    baseline_mean: float | None
    candidate_mean: float | None
    stats: Paired
    p_adjusted: float | None
    verdict: Verdict
    # The minimum detectable effect (error_bars.mde); None with fewer than 2 pairs.
    mde: float | None = None
    # With cluster_by, the clustered standard error and interval of mean_diff.
    clustered: ClusteredMean | None = None
    # Matched pairs whose score fell by at least the regression threshold.
    pairs_regressed: int = 0
    # Matched pairs left out because one result could not score them on the metric (E10).
    not_applicable: int = 0


@dataclass(slots=True)
class Comparison:
    request: CompareIn
    pairs_matched: int
    only_in_baseline: int
    only_in_candidate: int
    metrics: list[MetricComparison]
    regressions: list[PairChange]
    improvements: list[PairChange]


# ---- responses ---------------------------------------------------------------------------------


MDE_DESCRIPTION = (
    "The minimum detectable effect: the smallest mean difference this comparison had an 80 % "
    "chance to detect at its alpha, (z(1 - alpha/2) + z(0.8)) * std_diff / sqrt(n); null when "
    "n < 2"
)


class MetricComparisonOut(BaseModel):
    metric: str = Field(description="The definition both results were scored on")
    n: int = Field(description="Matched pairs both results scored on the metric")
    not_applicable: int = Field(
        default=0,
        description="Matched pairs left out of the metric's figures because one result or "
        "both could not score them on it (the pair lacks what the metric needs)",
    )
    baseline_mean: float | None
    candidate_mean: float | None
    mean_diff: float | None = Field(description="Mean of d = candidate - baseline")
    median_diff: float | None
    std_diff: float | None = Field(description="Sample standard deviation of d (n - 1)")
    ci_low: float | None = Field(description="Paired t interval of mean_diff at 1 - alpha")
    ci_high: float | None
    t_statistic: float | None
    p_value: float | None = Field(description="Paired t test, two-sided")
    p_adjusted: float | None = Field(description="Holm-Bonferroni over the metrics, or p_value")
    wilcoxon_p: float | None = Field(description="Wilcoxon signed-rank, Pratt's zeros, normal")
    sign_test_p: float | None = Field(description="Exact two-sided binomial test, ties dropped")
    wins: int = Field(description="Pairs the candidate scored higher")
    ties: int
    losses: int
    effect_size_dz: float | None = Field(description="mean_diff / std_diff")
    verdict: Verdict
    mde: float | None = Field(description=MDE_DESCRIPTION)
    clusters: int | None = Field(
        description="With cluster_by, G: the clusters of the matched pairs (by their baseline "
        "pair's label, input or conversation); null without cluster_by"
    )
    se_clustered: float | None = Field(
        description="With cluster_by, sqrt(sum over clusters of (sum in the cluster of "
        "(d_i - mean_diff))^2) / n; null without cluster_by or with fewer than 2 clusters"
    )
    ci_low_clustered: float | None = Field(
        description="mean_diff - t.ppf(1 - alpha/2, G - 1) * se_clustered (not clipped); null "
        "when se_clustered is"
    )
    ci_high_clustered: float | None = Field(
        description="mean_diff + t.ppf(1 - alpha/2, G - 1) * se_clustered; null when "
        "se_clustered is"
    )


class PairChangeOut(BaseModel):
    pair_id: str
    metric: str
    baseline_score: float
    candidate_score: float
    diff: float
    baseline_reason: str
    candidate_reason: str


class CompareOut(BaseModel):
    baseline_id: str
    candidate_id: str
    alpha: float
    correction: str
    cluster_by: ClusterBy | None = Field(description="How the matched pairs were clustered")
    pairs_matched: int = Field(description="Pair ids scored in both results")
    only_in_baseline: int
    only_in_candidate: int
    metrics: list[MetricComparisonOut] = Field(description="In the baseline's order")
    regressions: list[PairChangeOut] = Field(description="Most negative difference first")
    improvements: list[PairChangeOut] = Field(description="Largest difference first")
