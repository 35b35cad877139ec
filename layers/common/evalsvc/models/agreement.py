"""Judge-human agreement (E2): the response shapes of GET /evaluation/{id}/agreement and
GET /question/{id}/agreement."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from evalsvc.models.pair_fields_out import OptionalPairFields
from evalsvc.statistics.agreement import Agreement, Auc
from evalsvc.statistics.people import PeopleAgreement


class CalibrationOut(BaseModel):
    score: int = Field(description="A judge score (fractional scores in the bin of round half up)")
    votes: int = Field(description="+1 and -1 votes on pairs the judge scored so")
    positive_rate: float = Field(description="The share of +1 among them")
    ci_low: float = Field(description="Wilson 95 % interval of positive_rate")
    ci_high: float


class PeopleOut(BaseModel):
    reviewers: int = Field(
        description="Distinct people (API key users) who voted on the metric; with "
        "source=audit, who cast audit votes"
    )
    pairs_multi: int = Field(
        description="Pairs with votes from two or more of them (pooled over a metrics set: "
        "pairs of a result); only these count in alpha and percent_agreement"
    )
    alpha: float | None = Field(
        description="Krippendorff's alpha, nominal (values -1, 0, +1), over those pairs: 1 is "
        "perfect agreement, 0 what chance gives, below 0 systematic disagreement. null with "
        "fewer than 2 such pairs or when every vote on them is the same (no expected "
        "disagreement)"
    )
    percent_agreement: float | None = Field(
        description="The share of agreeing ordered pairs of votes within a pair, pooled over "
        "those pairs; null without such pairs"
    )


class JudgeAucOut(BaseModel):
    judge: str = Field(description="A judge of the jury")
    auc: float | None = Field(
        description="As the metric's auc, from this judge's score of each voted pair instead of "
        "the jury's"
    )
    auc_ci_low: float | None = Field(description="DeLong 95 %, as the metric's")
    auc_ci_high: float | None


class MetricAgreementOut(BaseModel):
    metric_idx: int
    metric: str
    votes: int
    positive: int
    negative: int
    neutral: int
    auc: float | None = Field(
        description="P(score of a +1 pair > score of a -1 pair) + 1/2 P(tie); needs one of each"
    )
    auc_ci_low: float | None = Field(description="DeLong 95 %; needs two votes of each kind")
    auc_ci_high: float | None
    kendall_tau_b: float | None = Field(description="Judge score vs vote, 0 votes included")
    threshold: int | None = Field(
        description="The judge says 'meets' at score >= threshold: the one in 2-5 maximising "
        "tpr + tnr over the +1 and -1 votes, the smallest on ties"
    )
    tpr: float | None
    tnr: float | None
    balanced_accuracy: float | None
    kappa: float | None = Field(description="Cohen's kappa at the threshold")
    confusion: dict[str, dict[str, int]] = Field(
        description="Votes by judge score (1-5) and vote (-1, 0, 1)"
    )
    calibration: list[CalibrationOut]
    people: PeopleOut = Field(description="People's agreement with each other (E12)")
    per_judge: list[JudgeAucOut] | None = Field(
        default=None,
        description="E13, a metric a jury judged in an evaluation result: each judge's own "
        "auc (in the jury's order) over the same votes, to compare with the jury's auc. Absent "
        "for a metric without a jury, and pooled over a metrics set",
    )


class AgreementOut(BaseModel):
    eval_results_id: str | None = Field(default=None, description="Per evaluation result")
    metrics_id: str | None = Field(default=None, description="Pooled over a metrics set")
    source: str = Field(description="all, or audit: only votes cast on an audit sample")
    metrics: list[MetricAgreementOut]


def metric_agreement_out(metric: MetricAgreement) -> dict[str, Any]:
    f = metric.figures
    return {
        "metric_idx": metric.metric_idx,
        "metric": metric.metric,
        "votes": f.votes,
        "positive": f.positive,
        "negative": f.negative,
        "neutral": f.neutral,
        "auc": f.auc.auc,
        "auc_ci_low": f.auc.ci_low,
        "auc_ci_high": f.auc.ci_high,
        "kendall_tau_b": f.kendall_tau_b,
        "threshold": f.threshold.threshold,
        "tpr": f.threshold.tpr,
        "tnr": f.threshold.tnr,
        "balanced_accuracy": f.threshold.balanced_accuracy,
        "kappa": f.threshold.kappa,
        "confusion": f.confusion,
        "calibration": [
            {
                "score": row.score,
                "votes": row.votes,
                "positive_rate": row.positive_rate,
                "ci_low": row.ci_low,
                "ci_high": row.ci_high,
            }
            for row in f.calibration
        ],
        "people": {
            "reviewers": metric.people.reviewers,
            "pairs_multi": metric.people.pairs_multi,
            "alpha": metric.people.alpha,
            "percent_agreement": metric.people.percent_agreement,
        },
    } | _per_judge_out(metric.per_judge)


def _per_judge_out(judges: list[JudgeAuc] | None) -> dict[str, Any]:
    """{"per_judge": [...]} for a metric a jury judged; {} otherwise (the field is absent)."""
    if judges is None:
        return {}
    return {
        "per_judge": [
            {
                "judge": j.judge,
                "auc": j.auc.auc,
                "auc_ci_low": j.auc.ci_low,
                "auc_ci_high": j.auc.ci_high,
            }
            for j in judges
        ]
    }


def agreement_out(report: AgreementReport, subject: str) -> dict[str, Any]:
    """The response body; `subject` names the id field (eval_results_id or metrics_id)."""
    return {
        subject: report.subject_id,
        "source": report.source,
        "metrics": [metric_agreement_out(m) for m in report.metrics],
    }


class AuditPairOut(OptionalPairFields):
    pair_id: str
    input: str | None = Field(description="null when the pair is no longer in the dataset")
    output: str | None
    score: float = Field(description="The judge's score on the metric")
    reason: str
    judge_scores: dict[str, float] | None = Field(
        default=None,
        description="E13, a metric judged by a jury: each judge's score of the pair, whose mean "
        "or median is score (absent otherwise)",
    )


class AuditSampleOut(BaseModel):
    eval_results_id: str
    metric_idx: int
    metric: str
    unvoted: int = Field(description="Scored pairs the caller has not voted on for the metric")
    pairs: list[AuditPairOut] = Field(
        description="At most n of them. order=random: a uniform draw that stays the same until "
        'the caller votes; vote on them with "source": "audit". order=lowest: the lowest scores '
        'first, ties by pair_id; vote on them with "source": "review"'
    )


@dataclass(frozen=True, slots=True)
class JudgeAuc:
    """E13: one judge of a jury, its own AUC against people's votes."""

    judge: str
    auc: Auc


NO_PEOPLE = PeopleAgreement(reviewers=0, pairs_multi=0, alpha=None, percent_agreement=None)


@dataclass(frozen=True, slots=True)
class MetricAgreement:
    metric_idx: int
    metric: str
    figures: Agreement
    # People's agreement with each other on the metric (none known: no reviewers).
    people: PeopleAgreement = NO_PEOPLE
    # E13: each judge's AUC on a metric a jury judged (None: no jury judged it).
    per_judge: list[JudgeAuc] | None = None


@dataclass(frozen=True, slots=True)
class AgreementReport:
    subject_id: str  # the result or metrics set
    source: str
    metrics: list[MetricAgreement]
