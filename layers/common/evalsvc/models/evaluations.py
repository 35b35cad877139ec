"""Evaluations: the request, the stored result, scored pairs and critiques. The v1 answers' shapes
are models.evaluation_out's (only the routes that answer with them build them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evalsvc.models.datasets import (
    DatasetKind,
    PairQuery,
    text_bytes,
)
from evalsvc.models.jobs import Status
from evalsvc.models.metric_sets import Aggregate, judge_calls
from evalsvc.models.usage import max_cost_usd_field
from evalsvc.spending.meter import Usage
from evalsvc.statistics.error_bars import ClusteredMean
from evalsvc.statistics.jury import JuryFigures
from evalsvc.statistics.scores import Summary

LOWEST_PER_METRIC = 5
# judge_samples: how many times each judged (pair, metric) is asked (E6), at most.
MAX_JUDGE_SAMPLES = 5
# cluster_by (E6): "label" (a pair's first label; unlabelled pairs each their own cluster),
# "input" (pairs with byte-equal input share a cluster) or, since E11, "conversation" (pairs with
# one conversation_id share a cluster; pairs without one each their own).
ClusterBy = Literal["label", "input", "conversation"]
CLUSTER_BY_DESCRIPTION = (
    "Pairs that are not independent: label (pairs sharing their first label are one cluster; "
    "an unlabelled pair is its own), input (pairs with byte-equal input are one cluster) or "
    "conversation (pairs with one conversation_id are one cluster; a pair without one is its "
    "own). Each metric then adds the clustered standard error and interval. null (default): "
    "every pair independent"
)
MAX_REASON_CHARS = 1_000
MAX_COMMENT_CHARS = 4_000


# ---- requests ----------------------------------------------------------------------------------


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

    `label_cluster`, `input_cluster` and `conversation_cluster` name the clusters the pair
    falls in (error_bars.cluster_digest of its first label, None when unlabelled; of its
    input; of its conversation_id, None without one), kept with every scored pair so that a
    comparison can cluster by any, whatever became of the dataset; None for pairs stored
    before they were kept (the conversation's for every pair scored before E11, none of which
    had a conversation_id). `samples`: with judge_samples k > 1, per metric the k scores the
    judge gave (empty for a check), whose mean is the score."""

    pair_id: str
    index: int
    scores: list[float | None]
    reasons: list[str]
    label_cluster: str | None = None
    input_cluster: str | None = None
    samples: list[list[int]] | None = None
    conversation_cluster: str | None = None
    # E13, judged by a jury: per metric each judge's score, in the jury's order (empty for a
    # metric the jury does not score, or not applicable to the pair); None without a jury.
    judge_scores: list[list[float]] | None = None

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
    # Per metric; None for a metric no pair applied to (E10).
    summaries: list[Summary | None]
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
    clustered: list[ClusteredMean | None] | None = None
    # Per metric, the judge's own noise with judge_samples > 1 (None for a check metric); None
    # before the result completed and with judge_samples 1.
    judge_noise: list[float | None] | None = None

    # E7: what produced the result (None for a result stored before it was kept).
    inputs: ResultInputs | None = None
    # E10: per metric, the pairs it was not applicable to (they lack what it needs); None when
    # it applied to every pair, and for a result stored before it was kept.
    not_applicable: list[int] | None = None
    # E13: the jury of the metrics set (None: the single judge) and its aggregate; once
    # complete, per metric the jury's figures (None for a metric it does not judge).
    judges: list[str] | None = None
    jury: Aggregate = "mean"
    juries: list[JuryFigures | None] | None = None

    def not_applicable_count(self, metric: int) -> int:
        return self.not_applicable[metric] if self.not_applicable else 0

    def judge_calls(self, pairs: int) -> int:
        """The judge calls scoring `pairs` of its pairs asks for (progress in calls: with
        judge_samples k, each judged (pair, metric) is k; with a jury, k of each judge)."""
        return judge_calls(self.definitions, pairs, self.judge_samples) * len(self.judges or [0])


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
    """A vote as agreement sees it: on which metric and pair, the judge's score, the vote, and
    who cast it (the stored user key, storage.critiques.user_key; "" when not known). E13: on a
    metric a jury judged, `judge_scores` is each judge's score of the pair as the vote was cast,
    in the jury's order (None without a jury, or for a vote stored before they were kept)."""

    metric_idx: int
    pair_id: str
    score: float | None
    vote: int
    source: str
    voter: str = ""
    judge_scores: tuple[float, ...] | None = None


# A scored pair's id, scores, and its label, input and conversation clusters (ScoredPair.
# label_cluster, input_cluster and conversation_cluster: None when unlabelled or without a
# conversation_id, and all None for a pair stored before they were kept). A score is None where
# the metric is not applicable to the pair (E10).
ClusteredScores = tuple[str, list[float | None], str | None, str | None, str | None]
