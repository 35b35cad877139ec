"""Human votes on scored pairs: one per person, pair and metric, replacing their earlier one."""

from __future__ import annotations

from evalsvc.core.errors import InvalidInput, NotFound
from evalsvc.core.identifiers import new_id, now_ms
from evalsvc.core.observability import metrics
from evalsvc.logic.results import check_metric_idx, existing_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import Critique, VoteIn
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import results as results_store


def vote(identity: Identity, results_id: str, body: VoteIn) -> Critique:
    """Record the caller's vote on one scored pair and metric (replacing their earlier one)."""
    result = existing_result(identity, results_id, require_complete=True)
    check_metric_idx(result, body.metric_idx)
    scored = results_store.get_scored(identity.tenant, results_id, [body.pair_id])
    if body.pair_id not in scored:
        raise NotFound(f"pair {body.pair_id!r} was not scored in evaluation result {results_id!r}")
    pair = scored[body.pair_id]
    score = pair.scores[body.metric_idx]
    if score is None:
        raise InvalidInput(
            f"metric {body.metric_idx} is not applicable to pair {body.pair_id!r} (the pair lacks "
            "what the metric needs), so it has no score to vote on: vote on a pair it scored"
        )
    critique = Critique(
        id=new_id("cr_"),
        pair_id=body.pair_id,
        metric_idx=body.metric_idx,
        comment=body.comment or "",
        vote=body.vote,
        user=identity.user,
        user_email=identity.user_email,
        time_ms=now_ms(),
        source=body.source,
        score=score,
    )
    # E13: each judge's score of the pair as well, on a metric a jury judged, so that agreement
    # gives each judge's AUC from the votes alone (empty, and not stored, without a jury).
    judged = pair.judge_scores or []
    judge_scores = judged[body.metric_idx] if body.metric_idx < len(judged) else None
    stored = critiques_store.upsert(
        identity.tenant, results_id, result.metrics_id, critique, judge_scores
    )
    metrics.add_metric(name="Votes", unit="Count", value=1)
    return stored
