"""The v1 shapes of an evaluation result's answers (POST /evaluate, GET /evaluation/{id}), and the
pieces other answers share (a metric's clustered figures, what produced a result). Apart from
models.evaluations so that a route answering none of them does not build these models at its
start (the list, a result's pairs and a vote are models.evaluation_lists')."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from evalsvc.models.clustered import (
    CiHighClustered,
    CiLowClustered,
    ClusteredOut,
    Clusters,
    SeClustered,
)
from evalsvc.models.evaluation_inputs import InputsOut
from evalsvc.models.evaluations import ClusterBy
from evalsvc.models.usage import UsageOut

if TYPE_CHECKING:
    from evalsvc.statistics.jury import JuryFigures

# ---- responses ---------------------------------------------------------------------------------


class LowestScoringPair(BaseModel):
    pair_id: str
    score_reason: str
    score: float


JUDGE_NOISE_DESCRIPTION = (
    "With judge_samples k > 1, sqrt(mean over pairs of the sample variance of the judge's k "
    "scores of the pair); null for a check and when k is 1"
)


NOT_APPLICABLE_DESCRIPTION = (
    "Pairs the metric is not applicable to: they lack what it needs (a reference, contexts), so "
    "they are left out of its statistics and scored pairs, never scored 1. When it applies to "
    "no pair, its statistics are null"
)


class JuryOut(BaseModel):
    """E13: the jury that judged a metric, and how its judges agree with each other."""

    judges: list[str] = Field(description="The jury's judges, in its order")
    aggregate: str = Field(description="How their scores make a pair's: mean or median")
    alpha: float | None = Field(
        description="Krippendorff's alpha (interval level) over the judges' scores of each "
        "pair: 1 when they always agree, 0 when they agree no more than chance; null with fewer "
        "than 2 pairs or when every score is the same"
    )


class PerJudgeOut(BaseModel):
    judge: str
    mean: float | None = Field(description="The judge's mean score over the metric's pairs")


class MetricJuryOut(BaseModel):
    jury: JuryOut
    per_judge: list[PerJudgeOut]


def jury_fields(figures: JuryFigures | None) -> dict[str, Any]:
    """A MetricScoreOut's jury and per_judge (none without a jury)."""
    out = jury_out(figures)
    return {} if out is None else {"jury": out.jury, "per_judge": out.per_judge}


def jury_out(figures: JuryFigures | None) -> MetricJuryOut | None:
    if figures is None:
        return None
    return MetricJuryOut(
        jury=JuryOut(judges=figures.judges, aggregate=figures.aggregate, alpha=figures.alpha),
        per_judge=[
            PerJudgeOut(judge=judge, mean=mean)
            for judge, mean in zip(figures.judges, figures.means, strict=True)
        ],
    )


JURY_DESCRIPTION = "E13, a metric judged by a jury: its judges and their alpha (null otherwise)"
PER_JUDGE_DESCRIPTION = "E13, a metric judged by a jury: each judge's mean score (null otherwise)"


class MetricScoreOut(BaseModel):
    metric: str
    mean_score: float | None
    std_dev: float | None
    ci_low: float | None
    ci_high: float | None
    ci_confidence: float
    median_score: float | None
    min_score: float | None
    max_score: float | None
    lowest_scoring_pairs: list[LowestScoringPair]
    clusters: Clusters = None
    se_clustered: SeClustered = None
    ci_low_clustered: CiLowClustered = None
    ci_high_clustered: CiHighClustered = None
    judge_noise_sd: float | None = Field(default=None, description=JUDGE_NOISE_DESCRIPTION)
    not_applicable: int = Field(default=0, description=NOT_APPLICABLE_DESCRIPTION)
    jury: JuryOut | None = Field(default=None, description=JURY_DESCRIPTION)
    per_judge: list[PerJudgeOut] | None = Field(default=None, description=PER_JUDGE_DESCRIPTION)


# Progress counted in judge calls: with judge_samples k, a pair is k calls a judged metric, so
# the pairs say how far the work is and the calls how much of it there is.
JUDGE_CALLS_TOTAL_DESCRIPTION = (
    "The judge calls the evaluation asks for: pairs_total x the metrics that are questions x "
    "judge_samples (those the judge cache answers included; usage counts the calls made)"
)
JUDGE_CALLS_DONE_DESCRIPTION = (
    "The judge calls of the pairs scored so far (pairs_done x the metrics that are questions x "
    "judge_samples)"
)


class EvaluateOut(BaseModel):
    eval_results_id: str
    dataset_id: str
    created_at: str
    pair_count: int
    scores: list[MetricScoreOut]
    usage: UsageOut
    inputs: InputsOut | None = Field(
        default=None,
        description="What produced the result (as on GET /evaluation/{id}): null for a result "
        "stored before it was kept",
    )


class QueuedOut(BaseModel):
    """The answer to `Prefer: respond-async`: the result to poll with GET /evaluation/{id}."""

    eval_results_id: str
    status: str = Field(description="running, complete or failed")
    pairs_done: int
    pairs_total: int
    judge_calls_done: int = Field(default=0, description=JUDGE_CALLS_DONE_DESCRIPTION)
    judge_calls_total: int = Field(default=0, description=JUDGE_CALLS_TOTAL_DESCRIPTION)


class ConfidenceIntervalOut(BaseModel):
    ci_low: float
    ci_high: float
    ci_confidence: float


class ScoredPairOut(BaseModel):
    reason: str
    pair_id: str
    score: float
    samples: list[int] | None = Field(
        default=None,
        description="With judge_samples k > 1, on a judged metric: the k scores the judge gave "
        "the pair, whose mean is score (absent otherwise)",
    )
    judge_scores: dict[str, float] | None = Field(
        default=None,
        description="E13, on a metric judged by a jury: each judge's score of the pair (the "
        "mean of its k with judge_samples k), whose mean or median is score (absent otherwise)",
    )


class CritiqueOut(BaseModel):
    id: str
    pair_id: str
    metric_idx: int
    comment: str
    vote: int
    user: str
    user_email: str
    time: str


class EvaluationOut(BaseModel):
    status: str = Field(
        description="running, complete or failed; the statistics are filled once complete"
    )
    pairs_done: int = Field(description="Pairs scored so far")
    pairs_total: int = Field(description="Pairs the evaluation scores")
    judge_calls_done: int = Field(default=0, description=JUDGE_CALLS_DONE_DESCRIPTION)
    judge_calls_total: int = Field(default=0, description=JUDGE_CALLS_TOTAL_DESCRIPTION)
    failure: str | None = Field(default=None, description="Why a failed evaluation failed")
    results_id: str
    created_at: str
    dataset_id: str
    metrics_id: str
    metrics_definitions: list[str]
    pair_count: int
    system_prompt: str
    score_means: list[float | None]
    score_medians: list[float | None]
    score_mins: list[float | None]
    score_maxes: list[float | None]
    score_std_devs: list[float | None]
    score_confidence_intervals: list[ConfidenceIntervalOut | None]
    score_not_applicable: list[int] = Field(
        default_factory=list,
        description="Per metric: " + NOT_APPLICABLE_DESCRIPTION + " (null there, in each list)",
    )
    min_scoring_pairs: list[list[ScoredPairOut]]
    cluster_by: ClusterBy | None = Field(
        default=None, description="How the pairs were clustered (POST /evaluate's cluster_by)"
    )
    judge_samples: int = Field(
        default=1, description="How many times each judged (pair, metric) was asked"
    )
    score_clustered: list[ClusteredOut] | None = Field(
        default=None,
        description="Per metric, with cluster_by, the clustered standard error and interval; "
        "null without cluster_by, while running and when failed",
    )
    score_judge_noise_sds: list[float | None] | None = Field(
        default=None,
        description="Per metric, the judge's own noise: " + JUDGE_NOISE_DESCRIPTION + "; the "
        "list is null while running and when failed",
    )
    score_juries: list[MetricJuryOut | None] | None = Field(
        default=None,
        description="E13: per metric judged by a jury, its judges, their alpha and each one's "
        "mean (null for a metric it does not judge); the list is null without a jury, while "
        "running and when failed",
    )
    score_histograms: list[list[int]] | None = Field(
        description="Per metric, how many scored pairs scored 1, 2, 3, 4 and 5 (five counts; "
        "a fractional score counts in the bin it rounds to, half up); null while running, when "
        "failed, and for results stored before histograms were kept"
    )
    all_scored_pairs: list[list[ScoredPairOut]] | None = Field(
        default=None, description="Present only with includeAllScores=true"
    )
    human_critique: list[CritiqueOut]
    usage: UsageOut = Field(
        description="The LLM work of the scoring (of a running result: what its request used)"
    )
    inputs: InputsOut | None = Field(
        default=None,
        description="What produced the result: null for a result stored before it was kept",
    )


class EvaluationPageOut(BaseModel):
    """A page of a result's growing parts (with `limit` or `cursor`); the statistics come with
    a read without them."""

    results_id: str
    status: str
    all_scored_pairs: list[list[ScoredPairOut]] | None = Field(
        default=None,
        description="With includeAllScores=true: this page's scored pairs (pages follow pair id "
        "order; within a page, dataset order)",
    )
    human_critique: list[CritiqueOut] = Field(
        description="This page's critiques (pages follow metric, pair, user order)"
    )
    next_cursor: str | None = Field(description="The cursor of the next page; null on the last")
