"""Reading an evaluation result, for the routes that only read one (POST /compare, the reports,
agreement): without importing what evaluating takes (scoring, the judge, queued work), which
is most of what logic.evaluations costs a function's start.

A complete result is its header alone. One that is not complete (running, failed) or is missing
is answered by logic.evaluations, as GET /evaluation answers it: its job's progress, or the 404
or 409 saying what to do. That module is imported then, on the first such request of a
process, so its rules stay in one place.
"""

from __future__ import annotations

from collections.abc import Mapping

from evalsvc.identifiers import check_client_id
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import EvaluationResult, ScoredPair
from evalsvc.models.jobs import Status
from evalsvc.storage import results as results_store


def existing_result(
    identity: Identity, results_id: str, *, require_complete: bool = False
) -> EvaluationResult:
    """The result (logic.evaluations.existing_result): one read when it is complete."""
    check_client_id(results_id, "result id")
    result = results_store.get(identity.tenant, results_id)
    if result is not None and result.status is Status.COMPLETE:
        return result
    # Imported only now: what is not complete is answered where its rules are.
    from evalsvc.logic import evaluations

    return evaluations.existing_result(identity, results_id, require_complete=require_complete)


def fill_lowest_reasons(
    tenant: str, result: EvaluationResult, scored: Mapping[str, ScoredPair] | None = None
) -> None:
    """Set the reason of each of the result's lowest pairs: from `scored` (by pair id) when
    given, else read for them alone."""
    if scored is None:
        wanted = [low.pair_id for metric in result.lowest for low in metric]
        scored = results_store.get_scored(tenant, result.results_id, wanted)
    for m, metric in enumerate(result.lowest):
        for low in metric:
            pair = scored.get(low.pair_id)
            low.reason = pair.reasons[m] if pair else ""
