"""Evaluations (POST /evaluate): score the selected pairs of a dataset against a metrics set,
summarise each metric, store the result. A small evaluation is scored inside the request; a
large one, or one that turns out not to fit, is a job of the evaluation kind (logic.kinds.
evaluation). Where it runs is logic.dispatch's decision; this module says what it is."""

from __future__ import annotations

import time
from collections.abc import Sequence
from decimal import Decimal

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import (
    StorageUnavailable,
)
from evalsvc.core.identifiers import job_id, new_id, now_ms
from evalsvc.core.observability import logger, metrics
from evalsvc.core.settings import get_settings
from evalsvc.logic import datasets as dataset_logic
from evalsvc.logic import dispatch, estimates, metric_sets, reproduce, spending
from evalsvc.logic.datasets import Selection
from evalsvc.logic.dispatch import HandOver, storing_seconds
from evalsvc.logic.kinds import evaluation as evaluation_kind
from evalsvc.logic.pairs_digest import pair_digest, pairs_digest
from evalsvc.logic.results import current, ensure_not_running, fill_lowest_reasons
from evalsvc.logic.scored_pairs import score_pairs, summarize_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetHeader
from evalsvc.models.evaluations import EvaluateIn, EvaluationResult, RerunIn
from evalsvc.models.jobs import Job, Status
from evalsvc.models.metric_sets import embedding_metrics, is_judged, judge_calls
from evalsvc.scoring import checks
from evalsvc.scoring.embeddings import configured_embeddings
from evalsvc.scoring.jury import judge_of
from evalsvc.scoring.metric import scorers_for
from evalsvc.storage import judge_cache
from evalsvc.storage import results as results_store

ROUTE = "POST /evaluate"
RERUN_ROUTE = "POST /evaluation/{id}/rerun"


def runs_inline(
    definitions: Sequence[str], pair_count: int, pair_bytes: int | None, judge_samples: int = 1
) -> bool:
    """Whether scoring `pair_count` pairs (`pair_bytes` of text; None when not known) fits one
    request: in check scorings, judge calls (k a judged pair and metric with judge_samples k)
    and the text read."""
    settings = get_settings()
    checks_count = sum(1 for d in definitions if checks.is_check(d))
    return (
        pair_count * checks_count <= settings.inline_max_checks
        and judge_calls(definitions, pair_count, judge_samples) <= settings.inline_max_judge_calls
        and (pair_bytes or 0) <= settings.inline_max_bytes
    )


def evaluate(
    identity: Identity,
    body: EvaluateIn,
    deadline: Deadline,
    *,
    respond_async: bool = False,
    wait_seconds: float = 0.0,
    request_key: str | None = None,
    keyed_id: bool = False,
    route: str = ROUTE,
) -> EvaluationResult:
    """Score the pairs `body` selects against the metrics set, inside the request (against
    `deadline`) or queued (logic.dispatch); the result, complete, or running when the caller
    asked to be answered at once (`respond_async`). Its LLM work is held to `max_cost_usd` and
    the tenant's monthly limit before any call. A retry of the request (same Idempotency-Key
    `request_key` and body) finds the same queued result. `keyed_id`: the result's id is the
    key's (identifiers.job_id) even when it is scored inside the request, so that its caller
    knows it beforehand (a monitor's run)."""
    cap = None if body.max_cost_usd is None else Decimal(str(body.max_cost_usd))
    with spending.session(identity.tenant, route, deadline.left(), cap) as spend:
        # Made inside the session: the judge it configures meters there.
        work = _Evaluation(identity, body, deadline, request_key, spend)
        if keyed_id:
            work.result.results_id = job_id("ev_", identity.tenant, request_key)
        outcome = dispatch.submit(
            work, spend, deadline, respond_async=respond_async, wait_seconds=wait_seconds
        )
        return outcome.made(work.of_job)


def rerun(
    identity: Identity,
    results_id: str,
    body: RerunIn,
    deadline: Deadline,
    *,
    respond_async: bool = False,
    wait_seconds: float = 0.0,
    request_key: str | None = None,
) -> EvaluationResult:
    """POST /evaluation/{id}/rerun: a new evaluation of exactly the pairs result `results_id`
    scored (read from the dataset version it pinned), with its metric definitions, cluster_by
    and judge_samples, run and answered as POST /evaluate's. Gone (410) when that version is
    past its retention; a 409 while that result is still running."""
    cap = None if body.max_cost_usd is None else Decimal(str(body.max_cost_usd))
    with spending.session(identity.tenant, RERUN_ROUTE, deadline.left(), cap) as spend:
        work = _Rerun(identity, results_id, deadline, request_key, spend)
        outcome = dispatch.submit(
            work, spend, deadline, respond_async=respond_async, wait_seconds=wait_seconds
        )
        return outcome.made(work.of_job)


SUBJECT = dispatch.Subject(
    location="evaluation/{id}",
    still_running="evaluation {id!r} is still running ({done} of {total} pairs scored) and goes "
    "on in the background: follow it with GET /evaluation/{id}",
    handed_over="evaluation {id!r} goes on in the background because {why}; the judge's verdicts "
    "so far are kept: follow it with GET /evaluation/{id}",
    failed="evaluation {id!r} failed: {failure}",
    out_of_time="the evaluation stopped at the request's time limit: {why}. The judge's verdicts "
    "so far are kept: send the same request again to go on from them",
)


class _Evaluation:
    """One POST /evaluate as dispatch runs it. Everything that can refuse the request without
    reading a pair (the dataset's id, the metrics set, a question with no judge configured) is
    checked when it is made."""

    subject = SUBJECT

    def __init__(
        self,
        identity: Identity,
        body: EvaluateIn,
        deadline: Deadline,
        key: str | None,
        spend: spending.Spending,
    ) -> None:
        self.identity = identity
        self.query = body.pair_query
        self.key = key
        self.max_cost, self.spend = spend.max_cost, spend
        kind, reference = body.dataset
        dataset_id = dataset_logic.resolve_dataset_id(identity, kind, reference)
        metrics_set = metric_sets.get_metrics_set(identity, body.metrics_id)
        self.result = EvaluationResult(
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
            cluster_by=body.cluster_by,
            judge_samples=body.judge_samples,
            judges=metrics_set.judges,
            jury=metrics_set.jury,
        )
        self._configure(deadline)
        self._header: DatasetHeader | None = None

    def _configure(self, deadline: Deadline) -> None:
        result = self.result
        needs_judge = any(is_judged(d) for d in result.definitions)
        self.judge = (
            judge_of(result.judges, result.jury, result.tenant, judge_cache, deadline)
            if needs_judge
            else None
        )
        embeds = embedding_metrics(result.definitions)
        self.embeddings = (
            configured_embeddings(result.tenant, judge_cache, deadline) if embeds else None
        )
        # A metric with no model configured to score it is a 400 before any pair is read.
        self.metrics = scorers_for(
            result.definitions, self.judge, result.judge_samples, self.embeddings
        )

    # ---- what dispatch reads -------------------------------------------------------------------

    def size(self) -> tuple[int, int | None]:
        result = self.result
        self._header = dataset_logic.get_header(
            self.identity, result.dataset_kind, result.dataset_id
        )
        return self._header.pair_count, self._header.bytes

    def fits_inline(self, pair_count: int, pair_bytes: int | None) -> bool:
        result = self.result
        return runs_inline(result.definitions, pair_count, pair_bytes, result.judge_samples)

    def select(self, *, keys_only: bool, keys: Selection | None = None) -> Selection:
        if keys is not None:
            return keys if keys_only else self._with_texts(keys)
        header, self._header = self._header, None
        if keys_only and header is not None and self._bound_from_texts(header):
            keys_only = False  # queueing will bound it from them: read them with the keys
        result = self.result
        return dataset_logic.select(
            self.identity,
            result.dataset_kind,
            result.dataset_id,
            self.query,
            "evaluate",
            keys_only=keys_only,
            header=header,
        )

    def _bound_from_texts(self, header: DatasetHeader) -> bool:
        """Whether queueing this evaluation is bounded from its texts and the judge cache (a
        judge, a cap or a monthly limit, and a dataset small enough to read and look up)."""
        if self.judge is None and self.embeddings is None:
            return False
        if self.max_cost is None and self.spend.limit() is None:
            return False
        return estimates.texts_worth_reading(self.metrics, header.pair_count, header.bytes)

    def _with_texts(self, selection: Selection) -> Selection:
        return dataset_logic.with_texts(self.identity, selection, self.query, "evaluate")

    # ---- inside the request --------------------------------------------------------------------

    def run_inline(
        self, selection: Selection, deadline: Deadline, spend: spending.Spending
    ) -> EvaluationResult:
        result, judge, pairs = self.result, self.judge, selection.pairs
        system_prompt = selection.header.system_prompt
        work_deadline = deadline.earlier(storing_seconds(len(pairs)))
        if judge is not None:
            judge.set_deadline(work_deadline)
        if self.embeddings is not None:
            self.embeddings.embedder.deadline = work_deadline
        result.system_prompt = system_prompt
        result.pair_count = result.pairs_done = len(pairs)
        questions = [question for _, question in self.metrics.questions]
        samples = self.metrics.judge_samples
        calls = judge_calls(result.definitions, len(pairs), samples)
        expected = judge.expected_seconds(calls) if judge else None
        if expected is not None and expected > work_deadline.left() and dispatch.queue_available():
            # This process's judge latency says it will not fit: queue it now, within its cap.
            assert judge is not None
            if spend.max_cost is not None:
                spend.check_cap(judge.plan(questions, pairs, system_prompt, samples).bound)
            logger.info("evaluation queued: it would not fit", extra={"expected_seconds": expected})
            raise HandOver("it would not fit in this request")
        started = time.perf_counter()
        scoring = score_pairs(self.metrics, pairs, system_prompt, deadline=work_deadline)
        if not scoring.complete:
            missing = len(pairs) - len(scoring.scored)
            raise HandOver(f"it did not fit in this request ({missing} pairs were left to score)")
        summarize_result(result, scoring.scored)
        result.usage = spend.usage()
        result.inputs = reproduce.inputs_for(result.definitions, selection.header, judge)
        result.inputs.pairs_digest = pairs_digest(pair_digest(pair) for pair in pairs)
        results_store.put(result, scoring.scored, reproduce.cut_pieces(selection.ords))
        metrics.add_metric(name="PairsScored", unit="Count", value=len(scoring.scored))
        metrics.add_metric(name="Evaluations", unit="Count", value=1)
        logger.info(
            "evaluation stored",
            extra={
                "results_id": result.results_id,
                "dataset_id": result.dataset_id,
                "pairs": len(scoring.scored),
                "metrics": self.metrics.count,
                "judge_samples": samples,
                "judge_calls_planned": calls,
                "llm_calls": result.usage.llm_calls,
                "seconds": round(time.perf_counter() - started, 3),
            },
        )
        return result

    # ---- queued --------------------------------------------------------------------------------

    def _check_bound(self, selection: Selection, spend: spending.Spending) -> None:
        """Before anything is queued: within max_cost_usd and what the month's limit leaves, as
        POST /evaluate/estimate bounds it (each chunk reserves its own)."""
        judge = self.judge
        if judge is None and self.embeddings is None:
            return
        if spend.max_cost is None and spend.limit() is None:
            return
        count = len(selection.pairs)
        if selection.keys_only and estimates.texts_worth_reading(
            self.metrics, count, selection.bytes
        ):
            # The dataset grew since its header was read.
            selection = self.select(keys_only=False, keys=selection)
        bound = estimates.selection_bound(judge, self.metrics, selection, self.embeddings)
        spend.check_cap(bound)
        spend.check_room(bound)

    def queue(self, selection: Selection, spend: spending.Spending, *, bounded: bool) -> Job:
        if bounded:
            self._check_bound(selection, spend)
        result = self.result
        result.system_prompt = selection.header.system_prompt
        result.pair_count = len(selection.ords)
        result.results_id = job_id("ev_", self.identity.tenant, self.key)
        # What the request used before queueing (a hand-over's verdicts so far): the chunks'
        # usage is added to it when the job completes.
        result.usage = spend.usage()
        result.inputs = reproduce.inputs_for(result.definitions, selection.header, self.judge)
        labels = (self.query.pair_labels if self.query else None) or []
        return evaluation_kind.queued(
            result, selection.header, selection.ords, labels, spend.max_cost
        )

    def of_job(self, job: Job) -> EvaluationResult:
        """The result of the queued job: running, or as stored when it completed (with the
        reasons of its lowest-scoring pairs)."""
        if job.status is Status.RUNNING:
            running = self.result
            running.results_id, running.status = job.job_id, Status.RUNNING
            running.pairs_done, running.pair_count = job.pairs_done, job.pairs_total
            return running
        done = results_store.get(self.identity.tenant, job.job_id)
        if done is None:
            raise StorageUnavailable(f"evaluation {job.job_id!r} completed but is not readable yet")
        fill_lowest_reasons(self.identity.tenant, done)
        return done


class _Rerun(_Evaluation):
    """POST /evaluation/{id}/rerun as dispatch runs it: an evaluation whose selection is the
    pairs another result scored, read from the version it pinned (logic.reproduce), and whose
    metrics are the definitions it was scored with (the metrics set may have changed since)."""

    def __init__(
        self,
        identity: Identity,
        results_id: str,
        deadline: Deadline,
        key: str | None,
        spend: spending.Spending,
    ) -> None:
        self.identity = identity
        self.query = None
        self.key = key
        self.max_cost, self.spend = spend.max_cost, spend
        original = reproduce.scored_result(identity.tenant, results_id)
        if original.status is Status.RUNNING:
            # A 409, as pairwise, plan and compare answer: its pairs are being scored now, and
            # a rerun would score them again alongside. One that failed may be run again.
            ensure_not_running(current(identity.tenant, results_id) or original)
        self.original = original
        # Gone, before anything is read or asked, when its version is past retention.
        self.pinned = reproduce.pinned_header(identity.tenant, original)
        self.pieces = reproduce.pieces_of(identity.tenant, original)
        self.result = EvaluationResult(
            tenant=identity.tenant,
            results_id=new_id("ev_"),
            created_ms=now_ms(),
            dataset_id=original.dataset_id,
            dataset_kind=original.dataset_kind,
            metrics_id=original.metrics_id,
            definitions=list(original.definitions),
            system_prompt="",
            pair_count=0,
            summaries=[],
            cluster_by=original.cluster_by,
            judge_samples=original.judge_samples,
            judges=original.judges,
            jury=original.jury,
        )
        self._configure(deadline)
        self._keys: Selection | None = None

    def size(self) -> tuple[int, int | None]:
        # The keys (and sizes) of the pinned pairs: what the selection weighs, read once.
        self._keys = self._read(keys_only=True)
        self.pinned.pair_count, self.pinned.bytes = self._keys.count, self._keys.bytes
        return self._keys.count, self._keys.bytes

    def _read(self, *, keys_only: bool) -> Selection:
        pairs, ords, size = reproduce.read_pinned(
            self.identity.tenant, self.original, self.pinned, self.pieces, keys_only=keys_only
        )
        return Selection(self.pinned, pairs, ords, keys_only, size)

    def select(self, *, keys_only: bool, keys: Selection | None = None) -> Selection:
        if keys is None:
            keys, self._keys = self._keys, None
        if keys is None:
            return self._read(keys_only=keys_only)
        return keys if keys_only or not keys.keys_only else self._read(keys_only=False)
