"""Judge-human agreement pooled over every evaluation result of a metrics set
(GET /question/{id}/agreement): one Query of the votes' index by metrics set, the figures as
logic/judge_agreement.py computes them for one result. People's agreement with each other takes
a unit per pair of a result: the same pair id in two results is two units."""

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
