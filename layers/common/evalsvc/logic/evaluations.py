"""Evaluations: score the selected pairs of a dataset against a metrics set, summarise each
metric, store the result; read results back; record human votes."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from evalsvc.deadlines import Deadline
from evalsvc.errors import (
    Conflict,
    DomainError,
    InvalidInput,
    NotFound,
    OutOfTime,
    PayloadTooLarge,
    StillRunning,
)
from evalsvc.identifiers import check_client_id, job_id, new_id, now_ms
from evalsvc.logic import datasets as dataset_logic
from evalsvc.logic import estimates, evaluation_jobs, spending
from evalsvc.logic import metrics as metrics_logic
from evalsvc.logic.datasets import MAX_PAGE_SIZE, PAGE_MAX_BYTES
from evalsvc.logic.scored_pairs import score_pairs, summarize_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetHeader, text_bytes
from evalsvc.models.evaluations import (
    LOWEST_PER_METRIC,
    MAX_REASON_CHARS,
    Critique,
    EvaluateIn,
    EvaluationResult,
    ScoredPair,
    VoteIn,
)
from evalsvc.models.jobs import Status
from evalsvc.observability import logger, metrics
from evalsvc.scoring import checks
from evalsvc.scoring.judges import configured_judge
from evalsvc.scoring.metric import scorers_for
from evalsvc.settings import get_settings
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import results as results_store
from evalsvc.storage.results import LISTED_SCORE_BYTES


def runs_inline(
    definitions: Sequence[str], pair_count: int, pair_bytes: float | None, respond_async: bool
) -> bool:
    """Whether to score inside the request: no queue, or a small job the caller waits for, in
    check scorings, judge calls and the text read (`pair_bytes`; None when not known)."""
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
        and (pair_bytes or 0) <= settings.inline_max_bytes
    )


def storing_seconds(pair_count: int) -> float:
    """Time kept back from a request's deadline to store a result of `pair_count` pairs (or
    to queue it instead) and answer: a few seconds, and more for large results."""
    return STORING_BASE_SECONDS + pair_count / STORED_PAIRS_PER_SECOND


# What storing costs in the plan of an inline evaluation: DynamoDB takes ~25 pairs per batch
# write, 8 in flight; the base covers the commit, the answer, and queueing instead.
STORING_BASE_SECONDS = 3.0
STORED_PAIRS_PER_SECOND = 2_000.0


ROUTE = "POST /evaluate"


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
    queued. Its LLM work is held to `max_cost_usd` and the tenant's monthly limit before any
    call (logic.spending)."""
    cap = None if body.max_cost_usd is None else Decimal(str(body.max_cost_usd))
    with spending.session(identity.tenant, ROUTE, deadline.left(), cap) as spend:
        return _evaluate(identity, body, deadline, spend, respond_async, wait_seconds, request_key)


def _evaluate(
    identity: Identity,
    body: EvaluateIn,
    deadline: Deadline,
    spend: spending.Spending,
    respond_async: bool,
    wait_seconds: float,
    request_key: str | None,
) -> EvaluationResult:
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
    queue = Queueing(identity, result, body, request_key, spend)
    needs_judge = any(not checks.is_check(d) for d in definitions)
    judge = configured_judge(identity.tenant, deadline) if needs_judge else None
    # A question with no judge configured is a 400 before any pair is read.
    metrics_of_set = scorers_for(definitions, judge)
    # The dataset's size bounds the selection's: a small dataset is read whole at once; a
    # large one by keys first, to cut it into chunks (unless its selection turns out small).
    whole = dataset_logic.get_header(identity, kind, dataset_id) if queue.available else None
    if whole is not None and not runs_inline(
        definitions, whole.pair_count, whole.bytes, respond_async
    ):
        header, refs, ords = dataset_logic.select_pair_refs(
            identity, kind, dataset_id, body.pair_query, "evaluate", keys_only=True
        )
        per_pair = header.bytes_per_pair
        selected_bytes = None if per_pair is None else len(refs) * per_pair
        if not runs_inline(definitions, len(refs), selected_bytes, respond_async):
            if judge is not None and (spend.max_cost is not None or spend.limit() is not None):
                # Before anything is queued: within max_cost_usd and what the month's limit
                # leaves, as POST /evaluate/estimate bounds it (each chunk reserves its own).
                _, bound = estimates.selection_bound(
                    identity, kind, dataset_id, body.pair_query, judge, metrics_of_set
                )
                spend.check_cap(bound)
                spend.check_room(bound)
            queued = queue.start(header, ords)
            if respond_async:
                return queued
            evaluation_jobs.wait(queued, wait_seconds)
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
        # This process's judge latency says it will not fit: queue it now, within its cap.
        assert judge is not None
        if spend.max_cost is not None:
            questions = [question for _, question in metrics_of_set.questions]
            spend.check_cap(judge.plan(questions, pairs, header.system_prompt).bound)
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
    result.usage = spend.usage()
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
        self,
        identity: Identity,
        result: EvaluationResult,
        body: EvaluateIn,
        key: str | None,
        spend: spending.Spending,
    ) -> None:
        self.identity = identity
        self.result = result
        self.spend = spend
        self.labels = (body.pair_query.pair_labels if body.pair_query else None) or []
        self.key = key
        self.available = get_settings().work_queue_url is not None

    def start(self, header: DatasetHeader, ords: Sequence[str]) -> EvaluationResult:
        result = self.result
        result.system_prompt, result.pair_count = header.system_prompt, len(ords)
        result.results_id = job_id("ev_", self.identity.tenant, self.key)
        # What the request used before queueing (a hand-over's verdicts so far): the chunks'
        # usage is added to it when the job completes.
        result.usage = self.spend.usage()
        return evaluation_jobs.start(result, header, ords, self.labels, self.spend.max_cost)

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


def existing_result(
    identity: Identity, results_id: str, *, require_complete: bool = False
) -> EvaluationResult:
    check_client_id(results_id, "result id")
    result = evaluation_jobs.current(identity.tenant, results_id)
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


# The most critique text improve_prompt takes from one result (its LLM prompt stays bounded).
IMPROVEMENT_CRITIQUE_BYTES = 256 * 1024


def _page_hint(result: EvaluationResult, include_all: bool) -> str:
    scores = "includeAllScores=true&" if include_all else ""
    return (
        f"read them in pages with GET /evaluation/{result.results_id}?{scores}limit=1000, then "
        "add &cursor=<next_cursor>"
    )


def _fixed_bytes(result: EvaluationResult) -> int:
    """At most what the result takes in a response besides its scored pairs and critiques."""
    texts = [result.system_prompt, *result.definitions]
    lowest_reasons = len(result.definitions) * LOWEST_PER_METRIC * MAX_REASON_CHARS * 4
    return sum(text_bytes(t) for t in texts) + lowest_reasons


def read_evaluation(
    identity: Identity,
    results_id: str,
    *,
    include_all: bool,
    max_bytes: int | None = None,
    require_complete: bool = False,
    critique_sample: bool = False,
) -> StoredEvaluation:
    """The result with the reasons of its lowest-scoring pairs, its critiques, and with
    `include_all` every scored pair (none until it is complete). With `max_bytes` (what one
    response may hold), a 413 saying how to page when the scored pairs would take more (known
    before they are read) or the critiques do (read until they pass it). `critique_sample`:
    only the first IMPROVEMENT_CRITIQUE_BYTES of critiques (in key order), oldest first."""
    result = existing_result(identity, results_id, require_complete=require_complete)
    room = None if max_bytes is None else max_bytes - _fixed_bytes(result)
    all_scored: list[ScoredPair] | None = None
    if include_all and result.status is Status.COMPLETE:
        listed = result.scored_bytes
        if room is not None and listed is not None:
            listed += result.pair_count * len(result.definitions) * LISTED_SCORE_BYTES
            if listed > room:
                raise PayloadTooLarge(
                    f"evaluation result {results_id!r} has {result.pair_count} scored pairs "
                    f"({listed / 1e6:.1f} MB with their reasons), too many for one response: "
                    + _page_hint(result, include_all)
                )
            room -= listed
        all_scored = results_store.list_scored(identity.tenant, results_id)
    elif include_all:
        all_scored = []
    fill_lowest_reasons(
        identity.tenant, result, {p.pair_id: p for p in all_scored} if all_scored else None
    )
    if critique_sample:
        sample, _ = critiques_store.page(
            identity.tenant, results_id, "", MAX_PAGE_SIZE, IMPROVEMENT_CRITIQUE_BYTES
        )
        return StoredEvaluation(result, sorted(sample, key=lambda c: (c.time_ms, c.id)), None)
    try:
        critiques = critiques_store.list_for(
            identity.tenant, results_id, None if room is None else max(room, 0)
        )
    except critiques_store.TooMany:
        raise PayloadTooLarge(
            f"evaluation result {results_id!r} has more human critiques than one response "
            "holds: " + _page_hint(result, include_all)
        ) from None
    return StoredEvaluation(result, critiques, all_scored)


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


@dataclass(slots=True)
class EvaluationPage:
    """One page of a result's growing parts, and the cursor of the next (None on the last)."""

    result: EvaluationResult
    all_scored: list[ScoredPair] | None
    critiques: list[Critique]
    next_cursor: str | None


def _encode_cursor(scored_after: str | None, critique_after: str | None) -> str | None:
    if scored_after is None and critique_after is None:
        return None
    raw = json.dumps([scored_after, critique_after], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(text: str) -> tuple[str | None, str | None]:
    bad = InvalidInput("cursor is not valid: pass the next_cursor of the previous page as it was")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        scored_after, critique_after = json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        raise bad from None
    for value in (scored_after, critique_after):
        if value is not None and not isinstance(value, str):
            raise bad
    return scored_after, critique_after


def read_evaluation_page(
    identity: Identity, results_id: str, *, include_all: bool, limit: int, cursor: str | None
) -> EvaluationPage:
    """A page of the result's scored pairs (with `include_all`, in pair id order) and of its
    critiques (in metric, pair, user order): at most `limit` of each, together at most
    PAGE_MAX_BYTES."""
    result = existing_result(identity, results_id)
    scored_after: str | None = "" if include_all else None
    critique_after: str | None = ""
    if cursor is not None:
        scored_after, critique_after = _decode_cursor(cursor)
    all_scored: list[ScoredPair] | None = [] if include_all else None
    if include_all and result.status is not Status.COMPLETE:
        scored_after = None
    next_scored: str | None = None
    if scored_after is not None and all_scored is not None:
        all_scored, more = results_store.scored_page(
            identity.tenant, results_id, scored_after, limit, PAGE_MAX_BYTES // 2
        )
        next_scored = all_scored[-1].pair_id if more and all_scored else None
        all_scored.sort(key=lambda p: p.index)
    critiques: list[Critique] = []
    next_critique: str | None = None
    if critique_after is not None:
        room = PAGE_MAX_BYTES // 2 if include_all else PAGE_MAX_BYTES
        critiques, next_critique = critiques_store.page(
            identity.tenant, results_id, critique_after, limit, room
        )
    return EvaluationPage(result, all_scored, critiques, _encode_cursor(next_scored, next_critique))


def check_metric_idx(result: EvaluationResult, metric_idx: int) -> None:
    """A 400 unless `metric_idx` names one of the result's metrics."""
    count = len(result.definitions)
    if not 0 <= metric_idx < count:
        raise InvalidInput(
            f"metric_idx {metric_idx} is out of range: this result has {count} "
            f"metric{'s' if count != 1 else ''} (0-{count - 1})"
        )


def vote(identity: Identity, results_id: str, body: VoteIn) -> Critique:
    """Record the caller's vote on one scored pair and metric (replacing their earlier one)."""
    result = existing_result(identity, results_id, require_complete=True)
    check_metric_idx(result, body.metric_idx)
    scored = results_store.get_scored(identity.tenant, results_id, [body.pair_id])
    if body.pair_id not in scored:
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
        source=body.source,
        score=scored[body.pair_id].scores[body.metric_idx],
    )
    stored = critiques_store.upsert(identity.tenant, results_id, result.metrics_id, critique)
    metrics.add_metric(name="Votes", unit="Count", value=1)
    return stored
