"""Can the judge be trusted? Its scores measured against people's votes (E2): per metric of one
evaluation result, or pooled over every result of a metrics set.

Each (pair, user) vote is one observation, paired with the judge's score of that pair on that
metric in that result. A vote keeps the score it was cast on, so neither route reads scored
pairs (only votes stored before scores were kept with them need their pair read). Figures
pooled over a metrics set are in logic/question_agreement.py (which reads the set: this module,
which the evaluation report uses too, imports nothing of metrics sets or checks).

People's agreement with each other (E12) comes with each metric: the distinct voters, and over
the pairs two or more of them voted on, Krippendorff's alpha and percent agreement
(statistics/people.py). A unit is a pair here; pooled over a metrics set, a pair of a result.
A person's vote counts once per unit (a replaced vote is replaced in storage), whatever the
judge's score; with source=audit only audit votes count, as for the judge's figures.

E13, a result judged by a jury: each metric the jury judged gives each judge's own AUC (and its
DeLong interval) beside the jury's, from that judge's score of each voted pair instead of the
jury's, over the same votes (source=audit included), so that a lead sees which juror agrees with
people and whether the jury beats its best member. A vote keeps each judge's score as it keeps
the jury's; one stored before they were kept takes its pair's, read once with the scores
missing. A vote whose judges' scores are not known (its pair gone) counts for the jury only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import replace

from evalsvc.core.errors import InvalidInput
from evalsvc.logic.results import existing_result
from evalsvc.models.agreement import AgreementReport, JudgeAuc, MetricAgreement
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import EvaluationResult, VoteObservation
from evalsvc.statistics.agreement import agreement, auc_delong
from evalsvc.statistics.people import PeopleAgreement, people_agreement
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import results as results_store

SOURCES = ("all", "audit")


def check_source(source: str | None) -> str:
    """`all` (the default) or `audit`; anything else is a 400."""
    if source is None:
        return "all"
    if source not in SOURCES:
        raise InvalidInput(
            f"source must be all or audit (votes cast on an audit sample), not {source[:40]!r}"
        )
    return source


def for_result(identity: Identity, results_id: str, source: str | None) -> AgreementReport:
    """Agreement per metric of one evaluation result (complete; else a 409)."""
    chosen = check_source(source)
    result = existing_result(identity, results_id, require_complete=True)
    votes = list(critiques_store.votes_of_result(identity.tenant, results_id))
    return of_votes(identity.tenant, result, votes, chosen)


def of_votes(
    tenant: str, result: EvaluationResult, votes: list[VoteObservation], source: str
) -> AgreementReport:
    """Agreement per metric of `result` from `votes` (a vote stored without the judge's score
    takes the pair's stored score; with a jury, each judge's likewise)."""
    scored = with_scores(tenant, result, votes, judges=True)
    return AgreementReport(
        result.results_id,
        source,
        per_metric(result.definitions, scored, source, juries=juries_of(result)),
    )


def juries_of(result: EvaluationResult) -> list[list[str] | None] | None:
    """Per metric the judges of the jury that judged it (None for a metric it did not judge);
    None for a result without a jury."""
    if not result.judges or result.juries is None:
        return None
    return [None if jury is None else list(jury.judges) for jury in result.juries]


def with_scores(
    tenant: str, result: EvaluationResult, votes: list[VoteObservation], judges: bool = False
) -> list[VoteObservation]:
    """`votes`, each with the judge's score it was cast on: a vote stored before scores were
    kept with votes takes its pair's stored score (None still when the pair is gone). With
    `judges`, on a metric a jury judged, each judge's score as well: a vote stored before they
    were kept takes its pair's (the pairs missing either are read at once)."""
    juries = juries_of(result) if judges else None

    def lacks_judges(v: VoteObservation) -> bool:
        return (
            juries is not None
            and v.judge_scores is None
            and 0 <= v.metric_idx < len(juries)
            and juries[v.metric_idx] is not None
        )

    missing = [v.pair_id for v in votes if v.score is None or lacks_judges(v)]
    if not missing:
        return votes
    scored = results_store.get_scored(tenant, result.results_id, sorted(set(missing)))
    out = []
    for v in votes:
        pair = scored.get(v.pair_id)
        if pair is not None and v.score is None:
            v = replace(v, score=pair.scores[v.metric_idx])
        if pair is not None and lacks_judges(v) and pair.judge_scores is not None:
            judged = (
                pair.judge_scores[v.metric_idx] if v.metric_idx < len(pair.judge_scores) else []
            )
            v = replace(v, judge_scores=tuple(judged) or None)
        out.append(v)
    return out


def per_metric(
    definitions: Sequence[str],
    votes: Iterable[VoteObservation],
    source: str,
    people: Sequence[PeopleAgreement] | None = None,
    juries: Sequence[Sequence[str] | None] | None = None,
) -> list[MetricAgreement]:
    """The judge's figures per metric, and people's with each other: `people` when given (one
    per metric, as people_per_metric computes them), else from `votes` with a unit per pair.
    With `juries` (per metric its jury's judges, None for a metric no jury judged), each judged
    metric's per_judge: each judge's AUC over the same votes."""
    votes = list(votes)
    counts: list[Counter[tuple[float, int]]] = [Counter() for _ in definitions]
    for vote in votes:
        if source == "audit" and vote.source != "audit":
            continue
        if vote.score is None or not 0 <= vote.metric_idx < len(definitions):
            continue  # a vote whose pair or metric is gone
        counts[vote.metric_idx][(vote.score, vote.vote)] += 1
    if people is None:
        people = people_per_metric(len(definitions), ((v.pair_id, v) for v in votes), source)
    judged = per_judge(len(definitions), votes, source, juries)
    return [
        MetricAgreement(idx, definition, agreement(counts[idx]), people[idx], judged[idx])
        for idx, definition in enumerate(definitions)
    ]


def per_judge(
    metrics: int,
    votes: Iterable[VoteObservation],
    source: str,
    juries: Sequence[Sequence[str] | None] | None,
) -> list[list[JudgeAuc] | None]:
    """Per metric a jury judged, each judge's AUC and DeLong interval (statistics/agreement.py's
    auc_delong, as the jury's) from that judge's score of each pair voted +1 or -1, over the
    votes the jury's figures count (with source=audit, audit votes only) that keep each judge's
    score; None for a metric no jury judged."""
    names = [None if juries is None or m >= len(juries) else juries[m] for m in range(metrics)]
    # Per metric, per judge: counts of that judge's scores of +1 votes, and of -1 votes.
    sides = [
        None if judges is None else [(Counter[float](), Counter[float]()) for _ in judges]
        for judges in names
    ]
    for vote in votes:
        if source == "audit" and vote.source != "audit":
            continue
        if vote.vote == 0 or vote.score is None or not 0 <= vote.metric_idx < metrics:
            continue
        on_metric = sides[vote.metric_idx]
        if on_metric is None or vote.judge_scores is None:
            continue
        if len(vote.judge_scores) != len(on_metric):
            continue  # not this jury's scores
        for (positive, negative), score in zip(on_metric, vote.judge_scores, strict=True):
            (positive if vote.vote == 1 else negative)[score] += 1
    return [
        None
        if judges is None or on_metric is None
        else [
            JudgeAuc(name, auc_delong(positive, negative))
            for name, (positive, negative) in zip(judges, on_metric, strict=True)
        ]
        for judges, on_metric in zip(names, sides, strict=True)
    ]


def people_per_metric(
    metrics: int, votes: Iterable[tuple[Hashable, VoteObservation]], source: str
) -> list[PeopleAgreement]:
    """People's agreement with each other per metric, from votes each with its unit (the pair,
    or pooled over results the result and pair): one value per voter and unit."""
    units: list[dict[Hashable, dict[str, int]]] = [{} for _ in range(metrics)]
    for unit, vote in votes:
        if source == "audit" and vote.source != "audit":
            continue
        if 0 <= vote.metric_idx < metrics:
            units[vote.metric_idx].setdefault(unit, {})[vote.voter] = vote.vote
    return [
        people_agreement(
            [list(by_voter.values()) for by_voter in on_metric.values()],
            len({voter for by_voter in on_metric.values() for voter in by_voter}),
        )
        for on_metric in units
    ]
