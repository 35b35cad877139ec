"""Evaluations: score the selected pairs of a dataset against a metrics set, summarise each
metric, store the result; read results back; record human votes."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from evalsvc.deadlines import Deadline
from evalsvc.errors import Conflict, DomainError, InvalidInput, NotFound, OutOfTime, StillRunning
from evalsvc.identifiers import check_client_id, job_id, new_id, now_ms
from evalsvc.logic import datasets as dataset_logic
from evalsvc.logic import evaluation_jobs
from evalsvc.logic import metrics as metrics_logic
from evalsvc.logic.scored_pairs import score_pairs, summarize_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetHeader
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
from evalsvc.scoring.judges import configured_judge
from evalsvc.scoring.metric import scorers_for
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


def storing_seconds(pair_count: int) -> float:
    """Time kept back from a request's deadline to store a result of `pair_count` pairs (or
    to queue it instead) and answer: a few seconds, and more for large results."""
    return STORING_BASE_SECONDS + pair_count / STORED_PAIRS_PER_SECOND


# What storing costs in the plan of an inline evaluation: DynamoDB takes ~25 pairs per batch
# write, 8 in flight; the base covers the commit, the answer, and queueing instead.
STORING_BASE_SECONDS = 3.0
STORED_PAIRS_PER_SECOND = 2_000.0


def evaluate(
    identity: Identity,
    body: EvaluateIn,
    deadline: Deadline,
    *,
    respond_async: bool = False,
    wait_seconds: float = 0.0,
    request_key: str | None = None,
) -> EvaluationResult:
    """Score the pairs `body` selects against the metrics set. A small job is scored here,
    against `deadline` (the request's); a large one is queued in chunks (evaluation_jobs) and,
    unless `respond_async`, waited for up to `wait_seconds`. Work planned here that turns out
    not to fit (a judge slower than expected) is handed to the queue at the deadline, its
    verdicts so far kept in the judge cache. The result returned is complete, or running when
    queued."""
    kind, reference = body.dataset
    dataset_id = dataset_logic.resolve_dataset_id(identity, kind, reference)
    metrics_set = metrics_logic.get_metrics_set(identity, body.metrics_id)
    definitions = metrics_set.definitions
    result = EvaluationResult(
        tenant=identity.tenant,
        results_id=new_id("ev_"),
        created_ms=now_ms(),
        dataset_id=dataset_id,
        dataset_kind=kind,
        metrics_id=metrics_set.metrics_id,
        definitions=definitions,
        system_prompt="",
        pair_count=0,
        summaries=[],
    )
    queue = Queueing(identity, result, body, request_key)
    needs_judge = any(not checks.is_check(d) for d in definitions)
    judge = configured_judge(identity.tenant, deadline) if needs_judge else None
    # A question with no judge configured is a 400 before any pair is read.
    metrics_of_set = scorers_for(definitions, judge)
    # The dataset's size bounds the selection's: a small dataset is read whole at once; a
    # large one by keys first, to cut it into chunks (unless its selection turns out small).
    if get_settings().work_queue_url is not None and not runs_inline(
        definitions, dataset_logic.pair_count(identity, kind, dataset_id), respond_async
    ):
        header, refs, ords = dataset_logic.select_pair_refs(
            identity, kind, dataset_id, body.pair_query, "evaluate", keys_only=True
        )
        if not runs_inline(definitions, len(refs), respond_async):
            queued = queue.start(header, ords)
            if respond_async:
                return queued
            evaluation_jobs.wait(identity, queued, wait_seconds)
            return read_evaluation(identity, queued.results_id, include_all=False).result
    header, pairs, ords = dataset_logic.select_pair_refs(
        identity, kind, dataset_id, body.pair_query, "evaluate"
    )
    work_deadline = deadline.earlier(storing_seconds(len(pairs)))
    if judge is not None:
        judge.llm.deadline = work_deadline
    result.system_prompt = header.system_prompt
    result.pair_count = result.pairs_done = len(pairs)
    calls = len(pairs) * len(metrics_of_set.questions)
    expected = judge.expected_seconds(calls) if judge else None
    if expected is not None and expected > work_deadline.left() and queue.available:
        # This process's judge latency says it will not fit: queue it now.
        logger.info("evaluation queued: it would not fit", extra={"expected_seconds": expected})
        raise queue.hand_over(header, ords, "it would not fit in this request")
    started = time.perf_counter()
    scoring = score_pairs(metrics_of_set, pairs, header.system_prompt, deadline=work_deadline)
    if not scoring.complete:
        missing = len(pairs) - len(scoring.scored)
        raise queue.hand_over(
            header, ords, f"it did not fit in this request ({missing} pairs were left to score)"
        )
    summarize_result(result, scoring.scored)
    results_store.put(result, scoring.scored)
    metrics.add_metric(name="PairsScored", unit="Count", value=len(scoring.scored))
    metrics.add_metric(name="Evaluations", unit="Count", value=1)
    logger.info(
        "evaluation stored",
        extra={
            "results_id": result.results_id,
            "dataset_id": dataset_id,
            "pairs": len(scoring.scored),
            "metrics": metrics_of_set.count,
            "seconds": round(time.perf_counter() - started, 3),
        },
    )
    return result


class Queueing:
    """How an evaluation goes onto the work queue: at once when it is large, or handed over by
    an inline evaluation that will not fit its request. A retry of the request (same
    Idempotency-Key and body) finds the same job."""

    def __init__(
        self, identity: Identity, result: EvaluationResult, body: EvaluateIn, key: str | None
    ) -> None:
        self.identity = identity
        self.result = result
        self.labels = (body.pair_query.pair_labels if body.pair_query else None) or []
        self.key = key
        self.available = get_settings().work_queue_url is not None

    def start(self, header: DatasetHeader, ords: Sequence[str]) -> EvaluationResult:
        result = self.result
        result.system_prompt, result.pair_count = header.system_prompt, len(ords)
        result.results_id = job_id("ev_", self.identity.tenant, self.key)
        return evaluation_jobs.start(result, header, ords, self.labels)

    def hand_over(self, header: DatasetHeader, ords: Sequence[str], why: str) -> DomainError:
        """The error to answer with once the evaluation is queued (StillRunning, naming the
        result to poll), or, with no queue, the OutOfTime that says to send it again."""
        if not self.available:
            return OutOfTime(
                f"the evaluation stopped at the request's time limit: {why}. The judge's "
                "verdicts so far are kept: send the same request again to go on from them",
                retry_after_seconds=1,
            )
        queued = self.start(header, ords)
        metrics.add_metric(name="EvaluationsHandedOver", unit="Count", value=1)
        return StillRunning(
            f"evaluation {queued.results_id!r} goes on in the background because {why}; the "
            f"judge's verdicts so far are kept: follow it with GET /evaluation/"
            f"{queued.results_id}",
            retry_after_seconds=10,
            location=f"evaluation/{queued.results_id}",
        )


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
