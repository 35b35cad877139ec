"""Pairwise judging (E5): which of 2-8 runs' outputs for the same inputs is better, asked of the
judge in both orders, ranked by Bradley-Terry. A small run is judged inside the request; a large
one, or one that turns out not to fit, is a job of the pairwise kind (logic.kinds.pairwise).
Where it runs is logic.dispatch's decision; this module says what it is.

Which pairs: the pair ids every run scored (read from the results, in pair id order); when more
than `max_pairs`, a uniform sample, seeded by the pairwise id (each id ranked by a hash of the
pairwise id and the pair id). Which texts: each run's output is the text it scored of that
pair, read from the dataset version the run pinned (E7, logic.reproduce), whatever happened to
the dataset since; the input is the first run's. A run whose version is past its retention is
a 410 naming the day it expired. A run stored before results pinned their version goes by
times: a pair written again after it scored it (its text now is not what was scored), or gone
from its dataset, is left out of every comparison, as the reports leave such pairs out.
`pairs_used` counts the pairs compared.

A comparison of runs i < j on a pair: byte-equal outputs are a tie without a call; otherwise
the judge sees i's output first, and with `both_orders` again with j's first. What the
statistics need is counted as the verdicts come (`Counts`): outcomes per matchup, and each
comparison's two judgements (position bias).
"""

from __future__ import annotations

from decimal import Decimal

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import (
    InvalidInput,
    StorageUnavailable,
)
from evalsvc.core.identifiers import check_client_id, job_id, now_ms
from evalsvc.core.observability import logger, metrics
from evalsvc.core.settings import get_settings
from evalsvc.logic import dispatch, spending
from evalsvc.logic.dispatch import HandOver, storing_seconds
from evalsvc.logic.kinds import pairwise as pairwise_kind
from evalsvc.logic.pairwise_judging import (
    PairSelection,
    calls_per_pair,
    comparisons_of,
    counts_of,
    judge_pairs,
    read_texts,
    sample,
    shared_pair_ids,
)
from evalsvc.logic.results import existing_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import MAX_PAIR_TEXT_BYTES
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.models.jobs import Job, Status
from evalsvc.models.pairwise import PairwiseIn, PairwiseRun
from evalsvc.scoring.judges import configured_judge
from evalsvc.spending.meter import Bound
from evalsvc.storage import judge_cache
from evalsvc.storage import pairwise as store

# The most comparisons whose texts an estimate (or a queued run's bound) reads and looks up in
# the judge cache; more are bounded unread.
EXACT_MAX_KEYS = 20_000

ROUTE = "POST /pairwise"
ID_PREFIX = "pw_"


# ---- the request -------------------------------------------------------------------------------


def _check_ids(body: PairwiseIn) -> None:
    for rid in body.result_ids:
        check_client_id(rid, "result id")


def _runs(identity: Identity, body: PairwiseIn) -> list[EvaluationResult]:
    """The results to compare: each must exist (404) and be complete (409)."""
    _check_ids(body)
    return [existing_result(identity, rid, require_complete=True) for rid in body.result_ids]


def pairwise(
    identity: Identity,
    body: PairwiseIn,
    deadline: Deadline,
    *,
    respond_async: bool = False,
    wait_seconds: float = 0.0,
    request_key: str | None = None,
) -> PairwiseRun:
    """Judge the runs' shared pairs, inside the request or queued (logic.dispatch); the run,
    complete, or running when the caller asked to be answered at once or it did not fit."""
    cap = None if body.max_cost_usd is None else Decimal(str(body.max_cost_usd))
    with spending.session(identity.tenant, ROUTE, deadline.left(), cap) as spend:
        work = _Pairwise(identity, body, deadline, request_key, spend)
        if request_key is not None:
            # A retry of a request whose run exists (done inside it, or queued): that run.
            stored = store.get(identity.tenant, work.run.pairwise_id)
            if stored is not None:
                return stored
        outcome = dispatch.submit(
            work,
            spend,
            deadline,
            respond_async=respond_async,
            wait_seconds=wait_seconds,
            # E5 answers a run that goes on in the background at once (202), even handed over.
            answer_running=True,
        )
        return outcome.made(work.of_job)


SUBJECT = dispatch.Subject(
    location="pairwise/{id}",
    still_running="pairwise run {id!r} is still running ({done} of {total} pairs judged) and goes "
    "on in the background: follow it with GET /pairwise/{id}",
    handed_over="pairwise run {id!r} goes on in the background because {why}; the judge's "
    "answers so far are kept: follow it with GET /pairwise/{id}",
    failed="pairwise run {id!r} failed: {failure}",
    out_of_time="the pairwise run stopped at the request's time limit: {why}. The judge's answers "
    "so far are kept: send the same request again to go on from them",
)


class _Pairwise:
    """One POST /pairwise as dispatch runs it."""

    subject = SUBJECT

    def __init__(
        self,
        identity: Identity,
        body: PairwiseIn,
        deadline: Deadline,
        key: str | None,
        spend: spending.Spending,
    ) -> None:
        self.identity, self.body, self.spend = identity, body, spend
        self.results = _runs(identity, body)
        self.judge = configured_judge(identity.tenant, judge_cache, deadline)
        if self.judge is None:
            raise InvalidInput(
                "pairwise judging needs the judge (EVALSVC_LLM), and this deployment has none "
                "configured"
            )
        self.run = PairwiseRun(
            tenant=identity.tenant,
            pairwise_id=job_id(ID_PREFIX, identity.tenant, key),
            created_ms=now_ms(),
            question=body.question,
            result_ids=list(body.result_ids),
            both_orders=body.both_orders,
            alpha=body.alpha,
            max_pairs=body.max_pairs,
            pairs_used=0,
            model=self.judge.llm.name,
        )
        self._shared: list[str] | None = None

    # ---- what dispatch reads -------------------------------------------------------------------

    def _shared_ids(self) -> list[str]:
        if self._shared is None:
            shared = shared_pair_ids(self.identity.tenant, self.results)
            if not shared:
                ids = ", ".join(repr(r.results_id) for r in self.results)
                raise InvalidInput(
                    f"the runs {ids} share no pair id: compare runs over the same pairs (the same "
                    "dataset, or datasets with the same pair ids)"
                )
            self._shared = sample(shared, self.body.max_pairs, self.run.pairwise_id)
        return self._shared

    def size(self) -> tuple[int, int | None]:
        return min(self.body.max_pairs, min(r.pair_count for r in self.results)), None

    def fits_inline(self, pair_count: int, pair_bytes: int | None) -> bool:
        settings = get_settings()
        calls = pair_count * calls_per_pair(len(self.results), self.body.both_orders)
        return (
            calls <= settings.inline_max_judge_calls
            and (pair_bytes or 0) <= settings.inline_max_bytes
        )

    def select(self, *, keys_only: bool, keys: PairSelection | None = None) -> PairSelection:
        selection = keys or PairSelection(self._shared_ids())
        return selection if keys_only else self._with_texts(selection)

    def _with_texts(self, selection: PairSelection) -> PairSelection:
        texts, unread = read_texts(
            self.identity.tenant,
            self.results,
            selection.pair_ids,
            get_settings().inline_max_bytes,
        )
        return PairSelection(selection.pair_ids, texts, unread)

    # ---- inside the request --------------------------------------------------------------------

    def run_inline(
        self, selection: PairSelection, deadline: Deadline, spend: spending.Spending
    ) -> PairwiseRun:
        run, judge = self.run, self.judge
        assert judge is not None and selection.texts is not None
        if selection.unread:
            raise HandOver("its texts are too large to read in one request")
        work_deadline = deadline.earlier(storing_seconds(selection.count))
        judge.llm.deadline = work_deadline
        judged = judge_pairs(
            judge,
            run.question,
            len(run.result_ids),
            run.both_orders,
            selection.texts,
            selection.pair_ids,
        )
        if not judged.complete:
            raise HandOver("it did not fit in this request")
        run.pairs_used = len({v.pair_id for v in judged.verdicts})
        run.counts = counts_of(judged.verdicts).as_json()
        run.status = Status.COMPLETE
        run.usage = spend.usage()
        store.put_complete(run, judged.verdicts)
        metrics.add_metric(name="PairwiseRuns", unit="Count", value=1)
        logger.info(
            "pairwise run stored",
            extra={"pairwise_id": run.pairwise_id, "pairs": run.pairs_used},
        )
        return run

    # ---- queued --------------------------------------------------------------------------------

    def queue(self, selection: PairSelection, spend: spending.Spending, *, bounded: bool) -> Job:
        """Within max_cost_usd and what the month's limit leaves, as POST /pairwise/estimate
        bounds it (each chunk reserves its own), when `bounded`; then the job."""
        if bounded and (spend.max_cost is not None or spend.limit() is not None):
            bound = estimate_bound(self, selection)
            spend.check_cap(bound)
            spend.check_room(bound)
        run = self.run
        run.pairs_used = selection.count
        run.usage = spend.usage()
        return pairwise_kind.queued(run, selection.pair_ids, spend.max_cost)

    def of_job(self, job: Job) -> PairwiseRun:
        """The run of the queued job: running, or as it was stored when it completed."""
        if job.status is Status.RUNNING:
            running = self.run
            running.pairwise_id, running.status = job.job_id, Status.RUNNING
            running.pairs_used = job.pairs_total
            return running
        done = store.get(self.identity.tenant, job.job_id)
        if done is None:
            raise StorageUnavailable(
                f"pairwise run {job.job_id!r} completed but is not readable yet"
            )
        return done


# ---- estimates ---------------------------------------------------------------------------------


def estimate_bound(work: _Pairwise, selection: PairSelection) -> Bound:
    """The bound of judging the selection: from its texts and the judge cache when they are
    worth reading (at most EXACT_MAX_KEYS comparisons, within EVALSVC_INLINE_MAX_BYTES), and
    for the rest as if each text were as large as a text can be, every comparison a call."""
    judge, run = work.judge, work.run
    assert judge is not None
    runs = len(run.result_ids)
    each = calls_per_pair(runs, run.both_orders)
    if selection.texts is None and selection.count * each <= EXACT_MAX_KEYS:
        selection = work.select(keys_only=False, keys=selection)
    texts = selection.texts or {}
    asked = [
        comparison
        for pid, text in texts.items()
        for comparison, *_ in comparisons_of(pid, text, runs, run.both_orders)
    ]
    bound = judge.plan_preferences(run.question, asked).bound
    unread = selection.unread if selection.texts is not None else set(selection.pair_ids)
    if unread:
        calls = len(unread) * each
        bound += judge.bound_preferences_unread(
            run.question, calls, calls * (MAX_PAIR_TEXT_BYTES * 3 // 2)
        )
    return bound


def estimate(identity: Identity, body: PairwiseIn, deadline: Deadline) -> tuple[int, Bound]:
    """(pairs compared, at most; bound of their judge calls) of POST /pairwise with `body`; no
    call, no write."""
    with spending.session(
        identity.tenant, "POST /pairwise/estimate", deadline.left(), None
    ) as spend:
        work = _Pairwise(identity, body, deadline, None, spend)
        selection = work.select(keys_only=True)
        bound = estimate_bound(work, selection)
        return selection.count, bound
