"""Evaluations: score the selected pairs of a dataset against a metrics set, summarise each
metric, store the result; read results back; record human votes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from evalsvc.errors import InvalidInput, NotFound
from evalsvc.identifiers import check_client_id, new_id, now_ms
from evalsvc.logic import datasets as dataset_logic
from evalsvc.logic import metrics as metrics_logic
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import (
    LOWEST_PER_METRIC,
    MAX_REASON_CHARS,
    Critique,
    EvaluateIn,
    EvaluationResult,
    LowScore,
    ScoredPair,
    VoteIn,
)
from evalsvc.observability import logger, metrics
from evalsvc.scoring.metric import Judge, scorers_for
from evalsvc.stats import summarize
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import results as results_store


def _reason(text: str) -> str:
    text = text.strip() or "no reason given"
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def lowest_scoring(scored: Sequence[ScoredPair], metric: int) -> list[LowScore]:
    """The LOWEST_PER_METRIC lowest scores of a metric, lowest first, ties in dataset order."""
    ranked = sorted(scored, key=lambda p: (p.scores[metric], p.index))[:LOWEST_PER_METRIC]
    return [LowScore(p.pair_id, p.scores[metric], p.reasons[metric]) for p in ranked]


@dataclass(slots=True)
class Evaluation:
    result: EvaluationResult
    scored: list[ScoredPair]


def evaluate(identity: Identity, body: EvaluateIn, judge: Judge | None) -> Evaluation:
    kind, reference = body.dataset
    dataset_id = dataset_logic.resolve_dataset_id(identity, kind, reference)
    metrics_set = metrics_logic.get_metrics_set(identity, body.metrics_id)
    scorers = scorers_for(metrics_set.definitions, judge)
    started = time.perf_counter()
    header, pairs = dataset_logic.select_pairs(
        identity, kind, dataset_id, body.pair_query, "evaluate"
    )
    per_metric = [scorer.score_all(pairs, header.system_prompt) for scorer in scorers]
    scored = [
        ScoredPair(
            pair_id=pair.id,
            index=index,
            scores=[column[index].value for column in per_metric],
            reasons=[_reason(column[index].reason) for column in per_metric],
        )
        for index, pair in enumerate(pairs)
    ]
    result = EvaluationResult(
        tenant=identity.tenant,
        results_id=new_id("ev_"),
        created_ms=now_ms(),
        dataset_id=dataset_id,
        dataset_kind=kind,
        metrics_id=metrics_set.metrics_id,
        definitions=metrics_set.definitions,
        system_prompt=header.system_prompt,
        pair_count=len(scored),
        summaries=[summarize([p.scores[m] for p in scored]) for m in range(len(scorers))],
        lowest=[lowest_scoring(scored, m) for m in range(len(scorers))],
    )
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
    return Evaluation(result, scored)


def _existing_result(identity: Identity, results_id: str) -> EvaluationResult:
    check_client_id(results_id, "result id")
    result = results_store.get(identity.tenant, results_id)
    if result is None:
        raise NotFound(f"no evaluation result with id {results_id!r}")
    return result


@dataclass(slots=True)
class StoredEvaluation:
    result: EvaluationResult
    critiques: list[Critique]
    all_scored: list[ScoredPair] | None


def read_evaluation(identity: Identity, results_id: str, *, include_all: bool) -> StoredEvaluation:
    """The result with the reasons of its lowest-scoring pairs, its critiques, and with
    `include_all` every scored pair."""
    result = _existing_result(identity, results_id)
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
    result = _existing_result(identity, results_id)
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
