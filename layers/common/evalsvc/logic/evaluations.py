"""Evaluations: score the selected pairs of a dataset against a metrics set, summarise each
metric, store the result; read results back; record human votes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from evalsvc.errors import Conflict, InvalidInput, NotFound
from evalsvc.identifiers import check_client_id, job_id, new_id, now_ms
from evalsvc.logic import datasets as dataset_logic
from evalsvc.logic import evaluation_jobs
from evalsvc.logic import metrics as metrics_logic
from evalsvc.logic.scored_pairs import score_pairs, summarize_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import (
    Critique,
    EvaluateIn,
    EvaluationResult,
    ScoredPair,
    Status,
    VoteIn,
)
from evalsvc.observability import logger, metrics
from evalsvc.scoring import checks
from evalsvc.scoring.metric import Judge, scorers_for
from evalsvc.settings import get_settings
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import results as results_store


def runs_inline(definitions: Sequence[str], pair_count: int, respond_async: bool) -> bool:
    """Whether to score inside the request: no queue, or a small job the caller waits for."""
    settings = get_settings()
    if settings.work_queue_url is None:
        return True
    if respond_async:
        return False
    checks_count = sum(1 for d in definitions if checks.is_check(d))
    questions = len(definitions) - checks_count
    return (
        pair_count * checks_count <= settings.inline_max_checks
        and pair_count * questions <= settings.inline_max_judge_calls
    )


def evaluate(
    identity: Identity,
    body: EvaluateIn,
    judge: Judge | None,
    *,
    respond_async: bool = False,
    wait_seconds: float = 0.0,
    request_key: str | None = None,
) -> EvaluationResult:
    """Score the pairs `body` selects against the metrics set. A small job is scored here; a
    large one is queued in chunks (evaluation_jobs) and, unless `respond_async`, waited for
    up to `wait_seconds`. The result returned is complete (its lowest pairs with their
    reasons), or running when queued."""
    kind, reference = body.dataset
    dataset_id = dataset_logic.resolve_dataset_id(identity, kind, reference)
    metrics_set = metrics_logic.get_metrics_set(identity, body.metrics_id)
    scorers = scorers_for(metrics_set.definitions, judge)
    started = time.perf_counter()
    result = EvaluationResult(
        tenant=identity.tenant,
        results_id=new_id("ev_"),
        created_ms=now_ms(),
        dataset_id=dataset_id,
        dataset_kind=kind,
        metrics_id=metrics_set.metrics_id,
        definitions=metrics_set.definitions,
        system_prompt="",
        pair_count=0,
        summaries=[],
    )
    definitions = metrics_set.definitions
    # The dataset's size bounds the selection's: a small dataset is read whole at once; a
    # large one by keys first, to cut it into chunks (unless its selection turns out small).
    if get_settings().work_queue_url is not None and not runs_inline(
        definitions, dataset_logic.pair_count(identity, kind, dataset_id), respond_async
    ):
        header, refs, ords = dataset_logic.select_pair_refs(
            identity, kind, dataset_id, body.pair_query, "evaluate", keys_only=True
        )
        if not runs_inline(definitions, len(refs), respond_async):
            result.system_prompt, result.pair_count = header.system_prompt, len(refs)
            labels = (body.pair_query.pair_labels if body.pair_query else None) or []
            # A retry of this request (same Idempotency-Key and body) finds this same job.
            result.results_id = job_id("ev_", identity.tenant, request_key)
            result = evaluation_jobs.start(result, header, refs, ords, labels)
            if respond_async:
                return result
            evaluation_jobs.wait(identity, result, wait_seconds)
            return read_evaluation(identity, result.results_id, include_all=False).result
    header, pairs = dataset_logic.select_pairs(
        identity, kind, dataset_id, body.pair_query, "evaluate"
    )
    result.system_prompt = header.system_prompt
    result.pair_count = result.pairs_done = len(pairs)
    scored = score_pairs(scorers, pairs, header.system_prompt)
    summarize_result(result, scored)
    results_store.put(result, scored)
    metrics.add_metric(name="PairsScored", unit="Count", value=len(scored))
    metrics.add_metric(name="Evaluations", unit="Count", value=1)
    logger.info(
        "evaluation stored",
        extra={
            "results_id": result.results_id,
            "dataset_id": dataset_id,
            "pairs": len(scored),
            "metrics": len(scorers),
            "seconds": round(time.perf_counter() - started, 3),
        },
    )
    return result


def _existing_result(
    identity: Identity, results_id: str, *, require_complete: bool = False
) -> EvaluationResult:
    check_client_id(results_id, "result id")
    result = results_store.get(identity.tenant, results_id)
    if result is None:
        raise NotFound(f"no evaluation result with id {results_id!r}")
    if require_complete:
        ensure_complete(result)
    return result


def ensure_complete(result: EvaluationResult) -> None:
    """A 409 for a result that is still running or failed, saying what to do."""
    if result.status is Status.RUNNING:
        raise Conflict(
            f"evaluation result {result.results_id!r} is still running ({result.pairs_done} of "
            f"{result.pair_count} pairs scored): use it once GET /evaluation/"
            f"{result.results_id} says complete"
        )
    if result.status is Status.FAILED:
        raise Conflict(
            f"evaluation result {result.results_id!r} failed ({result.failure}): evaluate again"
        )


@dataclass(slots=True)
class StoredEvaluation:
    result: EvaluationResult
    critiques: list[Critique]
    all_scored: list[ScoredPair] | None


def read_evaluation(
    identity: Identity, results_id: str, *, include_all: bool, require_complete: bool = False
) -> StoredEvaluation:
    """The result with the reasons of its lowest-scoring pairs, its critiques, and with
    `include_all` every scored pair (none until it is complete)."""
    result = _existing_result(identity, results_id, require_complete=require_complete)
    if include_all and result.status is not Status.COMPLETE:
        return StoredEvaluation(result, critiques_store.list_for(identity.tenant, results_id), [])
    if include_all:
        all_scored = results_store.list_scored(identity.tenant, results_id)
        by_id = {p.pair_id: p for p in all_scored}
    else:
        all_scored = None
        wanted = [low.pair_id for metric in result.lowest for low in metric]
        by_id = results_store.get_scored(identity.tenant, results_id, wanted)
    for m, metric in enumerate(result.lowest):
        for low in metric:
            pair = by_id.get(low.pair_id)
            low.reason = pair.reasons[m] if pair else ""
    critiques = critiques_store.list_for(identity.tenant, results_id)
    return StoredEvaluation(result, critiques, all_scored)


def vote(identity: Identity, results_id: str, body: VoteIn) -> Critique:
    """Record the caller's vote on one scored pair and metric (replacing their earlier one)."""
    result = _existing_result(identity, results_id, require_complete=True)
    count = len(result.definitions)
    if body.metric_idx >= count:
        raise InvalidInput(
            f"metric_idx {body.metric_idx} is out of range: this result has {count} "
            f"metric{'s' if count != 1 else ''} (0-{count - 1})"
        )
    if body.pair_id not in results_store.get_scored(identity.tenant, results_id, [body.pair_id]):
        raise NotFound(f"pair {body.pair_id!r} was not scored in evaluation result {results_id!r}")
    critique = Critique(
        id=new_id("cr_"),
        pair_id=body.pair_id,
        metric_idx=body.metric_idx,
        comment=body.comment or "",
        vote=body.vote,
        user=identity.user,
        user_email=identity.user_email,
        time_ms=now_ms(),
    )
    stored = critiques_store.upsert(identity.tenant, results_id, critique)
    metrics.add_metric(name="Votes", unit="Count", value=1)
    return stored
