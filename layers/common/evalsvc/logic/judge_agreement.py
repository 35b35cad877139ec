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
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import replace

from evalsvc.core.errors import InvalidInput
from evalsvc.logic.results import existing_result
from evalsvc.models.agreement import AgreementReport, MetricAgreement
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import EvaluationResult, VoteObservation
from evalsvc.statistics.agreement import agreement
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
    takes the pair's stored score)."""
    scored = with_scores(tenant, result, votes)
    return AgreementReport(
        result.results_id, source, per_metric(result.definitions, scored, source)
    )


def with_scores(
    tenant: str, result: EvaluationResult, votes: list[VoteObservation]
) -> list[VoteObservation]:
    """`votes`, each with the judge's score it was cast on: a vote stored before scores were
    kept with votes takes its pair's stored score (None still when the pair is gone)."""
    unscored = [v.pair_id for v in votes if v.score is None]
    if not unscored:
        return votes
    scored = results_store.get_scored(tenant, result.results_id, unscored)
    return [
        v
        if v.score is not None or v.pair_id not in scored
        else replace(v, score=scored[v.pair_id].scores[v.metric_idx])
        for v in votes
    ]


def per_metric(
    definitions: Sequence[str],
    votes: Iterable[VoteObservation],
    source: str,
    people: Sequence[PeopleAgreement] | None = None,
) -> list[MetricAgreement]:
    """The judge's figures per metric, and people's with each other: `people` when given (one
    per metric, as people_per_metric computes them), else from `votes` with a unit per pair."""
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
    return [
        MetricAgreement(idx, definition, agreement(counts[idx]), people[idx])
        for idx, definition in enumerate(definitions)
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
