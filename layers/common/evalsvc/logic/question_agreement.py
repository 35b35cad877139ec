"""Judge-human agreement pooled over every evaluation result of a metrics set
(GET /question/{id}/agreement): one Query of the votes' index by metrics set, the figures as
logic/judge_agreement.py computes them for one result. People's agreement with each other takes
a unit per pair of a result: the same pair id in two results is two units.

E13: no per_judge here, though every result pooled shares its metrics set's jury (the set names
it, an evaluation takes it from the set, a rerun from the result it reruns). Each judge's score
of a vote is kept with the vote (js), but the by_metrics_set index this route reads projects
score, vote and source only (template.yaml), and a global secondary index's projection cannot be
changed in place: it takes a new index. Reading each pooled result's votes (or scored pairs)
instead would make one read per result of the set where there is one Query now. Each judge's
AUC is given per result, by GET /evaluation/{id}/agreement."""

from __future__ import annotations

from evalsvc.logic import metric_sets
from evalsvc.logic.judge_agreement import check_source, people_per_metric, per_metric
from evalsvc.models.agreement import AgreementReport
from evalsvc.models.api_keys import Identity
from evalsvc.storage import critiques as critiques_store


def for_metrics_set(identity: Identity, metrics_id: str, source: str | None) -> AgreementReport:
    """Agreement per metric pooled over every result of the metrics set (`latest`: the
    tenant's newest set)."""
    chosen = check_source(source)
    metrics_set = metric_sets.get_metrics_set(identity, metrics_id)
    by_result = list(
        critiques_store.votes_by_result_of_metrics_set(identity.tenant, metrics_set.metrics_id)
    )
    definitions = metrics_set.definitions
    people = people_per_metric(
        len(definitions), (((results_id, v.pair_id), v) for results_id, v in by_result), chosen
    )
    votes = [v for _, v in by_result]
    return AgreementReport(
        metrics_set.metrics_id, chosen, per_metric(definitions, votes, chosen, people)
    )
