"""Evaluations: the request, the stored result, scored pairs, critiques, and the v1 shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalsvc.core.identifiers import format_ms
from evalsvc.models.common import ListNextCursor
from evalsvc.models.datasets import (
    MAX_LABEL_CHARS,
    MAX_LABELS,
    MAX_PAIRS,
    DatasetKind,
    text_bytes,
)
from evalsvc.models.jobs import Status
from evalsvc.models.metric_sets import judge_calls
from evalsvc.models.usage import UsageOut, max_cost_usd_field
from evalsvc.spending.meter import Usage
from evalsvc.statistics.error_bars import ClusteredMean
from evalsvc.statistics.scores import Summary

LOWEST_PER_METRIC = 5
# judge_samples: how many times each judged (pair, metric) is asked (E6), at most.
MAX_JUDGE_SAMPLES = 5
# cluster_by (E6): "label" (a pair's first label; unlabelled pairs each their own cluster) or
# "input" (pairs with byte-equal input share a cluster).
ClusterBy = Literal["label", "input"]
CLUSTER_BY_DESCRIPTION = (
    "Pairs that are not independent: label (pairs sharing their first label are one cluster; "
    "an unlabelled pair is its own) or input (pairs with byte-equal input are one cluster). "
    "Each metric then adds the clustered standard error and interval. null (default): every "
    "pair independent"
)
MAX_REASON_CHARS = 1_000
MAX_COMMENT_CHARS = 4_000
MAX_LAST_N_SECONDS = 10 * 366 * 24 * 3600


# ---- requests ----------------------------------------------------------------------------------


class PairQuery(BaseModel):
    """Which pairs to evaluate; the filters combine with AND."""

    model_config = ConfigDict(strict=True, extra="ignore")

    latest_n_pairs: int | None = Field(default=None, ge=1, le=MAX_PAIRS)
    pair_labels: list[Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]] | None = (
        Field(default=None, max_length=MAX_LABELS)
    )
    last_n_seconds: int | None = Field(default=None, ge=1, le=MAX_LAST_N_SECONDS)


class RerunIn(BaseModel):
    """POST /evaluation/{id}/rerun: the same pairs, metric definitions and judge settings as
    the result; only a cost cap may be given."""

    model_config = ConfigDict(strict=True, extra="forbid")

    max_cost_usd: float | None = max_cost_usd_field("POST /evaluate/estimate")


class EvaluateIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    synthetic_data_id: str | None = None
    seed_data_id: str | None = None
    metrics_id: str | None = None
    pair_query: PairQuery | None = None
    max_cost_usd: float | None = max_cost_usd_field("POST /evaluate/estimate")
    cluster_by: ClusterBy | None = Field(default=None, description=CLUSTER_BY_DESCRIPTION)
    judge_samples: int = Field(
        default=1,
        ge=1,
        le=MAX_JUDGE_SAMPLES,
        description="Ask the judge this many times (1-5) about each judged (pair, metric): the "
        "pair's score is the mean of the answers and each judged metric reports the judge's "
        "own noise (judge_noise_sd). Estimates, limits and usage count every call",
    )

    @model_validator(mode="after")
    def _exactly_one_dataset(self) -> EvaluateIn:
        if (self.synthetic_data_id is None) == (self.seed_data_id is None):
            raise ValueError("give exactly one of seed_data_id or synthetic_data_id")
        return self

    @property
    def dataset(self) -> tuple[DatasetKind, str]:
        if self.seed_data_id is not None:
            return DatasetKind.SEED, self.seed_data_id
        assert self.synthetic_data_id is not None
        return DatasetKind.SYNTHETIC, self.synthetic_data_id


class VoteIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    pair_id: str = Field(min_length=1, max_length=128)
    metric_idx: int = Field(ge=0)
    vote: int = Field(ge=-1, le=1, description="-1 (negative), 0 (neutral) or 1 (positive)")
    comment: str | None = Field(default=None, max_length=MAX_COMMENT_CHARS)
    source: Literal["audit", "review"] = Field(
        default="review",
        description="audit: the pair came from GET /evaluation/{id}/audit_sample (a uniform "
        "draw); review: chosen any other way (often by a low score)",
    )


# ---- domain ------------------------------------------------------------------------------------


@dataclass(slots=True)
class ScoredPair:
    """One pair's scores and reasons, one per metric, at its position in the dataset.

    `label_cluster` and `input_cluster` name the clusters the pair falls in (error_bars.
    cluster_digest of its first label, None when unlabelled, and of its input), kept with
    every scored pair so that a comparison can cluster by either, whatever became of the
    dataset; None for pairs stored before they were kept. `samples`: with judge_samples k > 1,
    per metric the k scores the judge gave (empty for a check), whose mean is the score."""

    pair_id: str
    index: int
    scores: list[float]
    reasons: list[str]
    label_cluster: str | None = None
    input_cluster: str | None = None
    samples: list[list[int]] | None = None

    @property
    def listed_bytes(self) -> int:
        """The text this pair adds to `all_scored_pairs`: its id and reason under each metric."""
        pair_id = text_bytes(self.pair_id)
        return sum(pair_id + text_bytes(reason) for reason in self.reasons)


@dataclass(slots=True)
class LowScore:
    pair_id: str
    score: float
    reason: str = ""


# The kind of queued work that scores an evaluation result too large for one request
# (logic/kinds/evaluation.py): its jobs carry this name and the result's id.
EVALUATION_JOBS = "evaluation"


@dataclass(slots=True)
class ResultInputs:
    """What produced a result (E7), besides its dataset, metrics set and judge_samples: the
    dataset version it read (made at `version_ms`; its pairs in `shards` written and
    `append_shards` appended partition keys), the digest of the pairs it scored (None until
    they all were), the definitions' digest, the judge's model and prompt version (None without
    a judged metric), the service's version and the date of the price table."""

    dataset_version: str
    version_ms: int
    shards: int
    append_shards: int
    definitions_sha256: str
    judge_model: str | None
    judge_prompt_version: str | None
    service_version: str
    prices_date: str
    pairs_digest: str | None = None


@dataclass(slots=True)
class EvaluationResult:
    tenant: str
    results_id: str
    created_ms: int
    dataset_id: str
    dataset_kind: DatasetKind
    metrics_id: str
    definitions: list[str]
    system_prompt: str
    pair_count: int
    summaries: list[Summary]
    lowest: list[list[LowScore]] = field(default_factory=list)
    status: Status = Status.COMPLETE
    pairs_done: int = 0
    failure: str = ""
    # The class of domain error a caller waiting on a failed result is answered with
    # (errors.Failure).
    failure_error: str = ""
    # listed_bytes of the scored pairs stored so far; None for a result stored before it was
    # kept.
    scored_bytes: int | None = None
    # The LLM work that scoring took (complete results; a running one's so far in its request).
    usage: Usage = field(default_factory=Usage)
    # Per metric, how many scored pairs fall in each 1-5 bin (stats.histogram), counted when
    # the result completed; None while it runs, and for a result stored before they were kept.
    histograms: list[list[int]] | None = None
    # E6: how the pairs were clustered (None: independent) and how many times each judged
    # (pair, metric) was asked.
    cluster_by: str | None = None
    judge_samples: int = 1
    # Per metric, with cluster_by, the clustered standard error and interval (counted when the
    # result completed; None before, and without cluster_by).
    clustered: list[ClusteredMean] | None = None
    # Per metric, the judge's own noise with judge_samples > 1 (None for a check metric); None
    # before the result completed and with judge_samples 1.
    judge_noise: list[float | None] | None = None

    # E7: what produced the result (None for a result stored before it was kept).
    inputs: ResultInputs | None = None

    def judge_calls(self, pairs: int) -> int:
        """The judge calls scoring `pairs` of its pairs asks for (progress in calls: with
        judge_samples k, each judged (pair, metric) is k)."""
        return judge_calls(self.definitions, pairs, self.judge_samples)


@dataclass(frozen=True, slots=True)
class ListedResult:
    """An evaluation result as a list of them shows it (what the results indexes project)."""

    results_id: str
    created_ms: int
    dataset_id: str
    dataset_kind: DatasetKind
    metrics_id: str
    status: Status
    pair_count: int


@dataclass(slots=True)
class Critique:
    id: str
    pair_id: str
    metric_idx: int
    comment: str
    vote: int
    user: str
    user_email: str
    time_ms: int
    source: str = "review"
    # The judge's score of the pair on the metric, as the vote was cast (None: a vote stored
    # before scores were kept with votes).
    score: float | None = None


@dataclass(frozen=True, slots=True)
class VoteObservation:
    """A vote as agreement sees it: on which metric and pair, the judge's score, the vote."""

    metric_idx: int
    pair_id: str
    score: float | None
    vote: int
    source: str


# ---- responses ---------------------------------------------------------------------------------


class LowestScoringPair(BaseModel):
    pair_id: str
    score_reason: str
    score: float


# A metric's clustered figures (E6): with cluster_by, and null without.
Clusters = Annotated[
    int | None, Field(description="G, the number of clusters (null without cluster_by)")
]
SeClustered = Annotated[
    float | None,
    Field(
        description="sqrt(sum over clusters of (sum in the cluster of (s_i - mean))^2) / n; "
        "null without cluster_by or with fewer than 2 clusters"
    ),
]
CiLowClustered = Annotated[
    float | None,
    Field(
        description="mean - t.ppf(0.975, G - 1) * se_clustered (not clipped to 1-5); null when "
        "se_clustered is"
    ),
]
CiHighClustered = Annotated[
    float | None, Field(description="mean + t.ppf(0.975, G - 1) * se_clustered")
]


class ClusteredOut(BaseModel):
    """A metric's clustered figures (E6): with cluster_by, and null without."""

    clusters: Clusters = None
    se_clustered: SeClustered = None
    ci_low_clustered: CiLowClustered = None
    ci_high_clustered: CiHighClustered = None


def clustered_out(clustered: ClusteredMean | None) -> ClusteredOut:
    """One metric's clustered figures (all null without cluster_by)."""
    if clustered is None:
        return ClusteredOut()
    return ClusteredOut(
        clusters=clustered.clusters,
        se_clustered=clustered.se_clustered,
        ci_low_clustered=clustered.ci_low_clustered,
        ci_high_clustered=clustered.ci_high_clustered,
    )


JUDGE_NOISE_DESCRIPTION = (
    "With judge_samples k > 1, sqrt(mean over pairs of the sample variance of the judge's k "
    "scores of the pair); null for a check and when k is 1"
)


class MetricScoreOut(BaseModel):
    metric: str
    mean_score: float
    std_dev: float
    ci_low: float
    ci_high: float
    ci_confidence: float
    median_score: float
    min_score: float
    max_score: float
    lowest_scoring_pairs: list[LowestScoringPair]
    clusters: Clusters = None
    se_clustered: SeClustered = None
    ci_low_clustered: CiLowClustered = None
    ci_high_clustered: CiHighClustered = None
    judge_noise_sd: float | None = Field(default=None, description=JUDGE_NOISE_DESCRIPTION)


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


class InputsOut(BaseModel):
    """What produced a result (E7)."""

    dataset_id: str
    dataset_version: str = Field(
        description="The dataset version the result read (GET /data/seed/{id}/versions)"
    )
    pairs_digest: str | None = Field(
        description="SHA-256 (hex) of the pairs the result scored, in the canonical form of "
        'docs/design.md ("Reproducible results"): equal for two results over the same pairs '
        "whatever happened to the dataset between; null until every pair is scored"
    )
    metrics_id: str
    definitions_sha256: str = Field(
        description="SHA-256 (hex) of the metric definitions as scored (JSON list, UTF-8)"
    )
    judge_model: str | None = Field(
        description="The judge's model (provider:model); null without a judged metric"
    )
    judge_prompt_version: str | None = Field(
        description="The version of the judge's prompt; null without a judged metric"
    )
    judge_samples: int
    service_version: str
    prices_date: str = Field(description="The date of the price table costs were counted with")


def inputs_out(result: EvaluationResult) -> InputsOut | None:
    """What produced `result`, as GET /evaluation/{id} shows it (None: not kept)."""
    inputs = result.inputs
    if inputs is None:
        return None
    return InputsOut(
        dataset_id=result.dataset_id,
        dataset_version=inputs.dataset_version,
        pairs_digest=inputs.pairs_digest,
        metrics_id=result.metrics_id,
        definitions_sha256=inputs.definitions_sha256,
        judge_model=inputs.judge_model,
        judge_prompt_version=inputs.judge_prompt_version,
        judge_samples=result.judge_samples,
        service_version=inputs.service_version,
        prices_date=inputs.prices_date,
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
    score_means: list[float]
    score_medians: list[float]
    score_mins: list[float]
    score_maxes: list[float]
    score_std_devs: list[float]
    score_confidence_intervals: list[ConfidenceIntervalOut]
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


class ListedEvaluationOut(BaseModel):
    eval_results_id: str = Field(description="The evaluation result's id (GET /evaluation/{id})")
    dataset_id: str = Field(description="The dataset it evaluated, seed or synthetic")
    metrics_id: str = Field(description="The metrics set it was scored with")
    status: Literal["running", "complete", "failed"] = Field(
        description="As it stands now: running until every pair is scored, then complete "
        "(or failed)"
    )
    pair_count: int = Field(description="Pairs the evaluation scores")
    created_at: str = Field(
        description="When it started: ISO 8601 UTC with milliseconds, as GET /evaluation/{id} "
        "gives it"
    )


class EvaluationListOut(BaseModel):
    """A page of the caller's evaluation results."""

    evaluations: list[ListedEvaluationOut] = Field(
        description="Newest first (evaluations started in the same millisecond by "
        "eval_results_id, the greater first)"
    )
    next_cursor: ListNextCursor


def listed_evaluation_out(listed: ListedResult) -> dict[str, object]:
    return {
        "eval_results_id": listed.results_id,
        "dataset_id": listed.dataset_id,
        "metrics_id": listed.metrics_id,
        "status": listed.status.value,
        "pair_count": listed.pair_count,
        "created_at": format_ms(listed.created_ms),
    }


class ResultPairOut(BaseModel):
    """A pair an evaluation result scored, as it was when scored."""

    pair_id: str
    input: str
    output: str
    labels: list[str]
    input_media: str | None = Field(
        default=None, description="Only when the pair was written with input_media"
    )
    system_prompt_template: str | None = Field(
        default=None, description="Only when the pair was written with a system_prompt_template"
    )


class ResultPairsOut(BaseModel):
    """A page of the pairs an evaluation result scored (E7)."""

    pairs: list[ResultPairOut] = Field(
        description="In dataset order, as they were when the result scored them, whatever "
        "happened to the dataset since (pairs appended later are not among them)"
    )
    next_cursor: ListNextCursor


class VoteOut(BaseModel):
    success: bool
    results_id: str
    pair_id: str


# A scored pair's id, scores, and its label and input clusters (ScoredPair.label_cluster and
# input_cluster: None when unlabelled, and both None for a pair stored before they were kept).
ClusteredScores = tuple[str, list[float], str | None, str | None]
