"""Dispatch: where a request's work runs. Small work runs inside the request, against its
deadline; large work goes to the job engine (logic.jobs) as a job of its kind and, unless the
caller asked to be answered at once, is waited for while the request safely can. Work begun
inside the request that turns out not to fit it (a judge slower than expected) is handed to the
queue, what it did so far kept. Every kind of request-started work goes through `submit`: the
flow is written once, and a kind gives it five things (`Work`) and the words of its answers
(`Subject`), so that the use case is called back only to weigh, select, do and queue.

What is read, once each (docs/performance.md counts the calls):

    the source's size    one read (a dataset's header), only when there is a queue to choose
    the selection        one read: the pairs with their texts when the size says the work fits;
                         else their keys (and each one's bytes), and, when the selection turns
                         out to fit, their texts by key
    the job's end        one read of what it made, when it completes while the request waits

The LLM work of the whole request is metered and held to its cap and the tenant's monthly
limit in one session (logic.spending), which the use case opens before it makes its work.

Work that would queue is refused (429) before anything is stored or any model is called when
the tenant runs as many queued jobs as it may (logic.jobs.start). Work handed over mid-request
is not: its calls were made, and refusing it would waste them; it may pass the cap by a few.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import DomainError, Failure, OutOfTime, StillRunning
from evalsvc.core.observability import metrics
from evalsvc.core.settings import get_settings
from evalsvc.logic import jobs, spending
from evalsvc.models.jobs import Job, Status

R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class Selected(Protocol):
    """What a request's work selected (a dataset's pairs, the pairs several results share...),
    as dispatch weighs it: how many items, and their texts' bytes (None: not known)."""

    @property
    def count(self) -> int: ...

    @property
    def bytes(self) -> int | None: ...


S = TypeVar("S", bound=Selected)

# What storing costs in the plan of work done inside a request: DynamoDB takes ~25 items per
# batch write, 8 in flight; the base covers the commit, the answer, and queueing instead.
STORING_BASE_SECONDS = 3.0
STORED_PAIRS_PER_SECOND = 2_000.0


def storing_seconds(pair_count: int) -> float:
    """Time kept back from a request's deadline to store what `pair_count` pairs of work made
    (or to queue it instead) and answer: a few seconds, and more for large outputs."""
    return STORING_BASE_SECONDS + pair_count / STORED_PAIRS_PER_SECOND


class HandOver(Exception):
    """Work begun inside the request will not fit it: the rest goes to the queue, what was done
    kept. `why` finishes the sentence "... because" for the caller."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass(frozen=True, slots=True)
class Subject:
    """What a caller is told of one kind's work that did not end inside the request: templates
    filled with the job's `id`, `done` and `total` pairs, `why` it was handed over, or its
    `failure`; and where to follow it (`location`, relative to the API's base)."""

    location: str
    still_running: str
    handed_over: str
    failed: str
    out_of_time: str

    def where(self, work_id: str) -> str:
        """Where the work `work_id` (its job's id, or what it made inside the request) is
        followed, relative to the API's base."""
        return self.location.format(id=work_id)

    def running(self, job: Job, *, located: bool = True) -> StillRunning:
        """`located`: with where to follow it (not for a reader already there)."""
        message = self.still_running.format(
            id=job.job_id, done=job.pairs_done, total=job.pairs_total
        )
        location = self.where(job.job_id) if located else None
        return StillRunning(message, retry_after_seconds=10, location=location)

    def moved(self, job: Job, why: str) -> StillRunning:
        message = self.handed_over.format(id=job.job_id, why=why)
        return StillRunning(message, retry_after_seconds=10, location=self.where(job.job_id))

    def failure(self, job: Job) -> DomainError:
        failure = job.failure or Failure("no reason was kept")
        message = self.failed.format(id=job.job_id, failure=failure.message)
        return Failure(message, failure.error).exception()

    def late(self, why: str) -> OutOfTime:
        return OutOfTime(self.out_of_time.format(why=why), retry_after_seconds=1)


class Work(Protocol[R_co, S]):
    """One request's work of some kind, as dispatch runs it: what it weighs, its selection,
    doing it inside the request, and queueing it. What the caller is told of work that did not
    end in the request is data (`subject`); a queued job is given back to the use case, which
    reads what it made."""

    @property
    def subject(self) -> Subject: ...

    def size(self) -> tuple[int, int | None]:
        """How many pairs the work could take at most, and their bytes: from the source's
        header (one read, kept for `select`)."""
        ...

    def fits_inline(self, pair_count: int, pair_bytes: int | None) -> bool:
        """Whether work over that many pairs (and bytes, None: unknown) runs inside a request."""
        ...

    def select(self, *, keys_only: bool, keys: S | None = None) -> S:
        """The selected pairs (a 400 when there are none); with `keys`, a keys-only selection
        made before, the same pairs with their texts (read by key)."""
        ...

    def run_inline(self, selection: S, deadline: Deadline, spend: spending.Spending) -> R_co:
        """Do the work inside the request, before `deadline`; HandOver when it will not fit."""
        ...

    def queue(self, selection: S, spend: spending.Spending, *, bounded: bool) -> Job:
        """Start the job (logic.kinds) over the selection: the job, or the one a retry of the
        same request started. `bounded`: first refuse what the job could not be allowed to do
        (its cap, the month's limit); work handed over mid-request is not refused."""
        ...


@dataclass(frozen=True, slots=True)
class Outcome(Generic[R]):
    """What became of a request's work: `done` inside the request, or its `job` (running, or
    complete when the request waited for it)."""

    done: R | None = None
    job: Job | None = None

    def made(self, of_job: Callable[[Job], R]) -> R:
        """What the work made: done inside the request, or `of_job(job)` (running, or what the
        job made, read once)."""
        if self.job is not None:
            return of_job(self.job)
        assert self.done is not None
        return self.done


def queue_available() -> bool:
    return get_settings().work_queue_url is not None


@dataclass(slots=True)
class _Dispatch(Generic[R, S]):
    work: Work[R, S]
    deadline: Deadline
    spend: spending.Spending
    respond_async: bool
    wait_seconds: float
    answer_running: bool

    def run(self) -> Outcome[R]:
        work = self.work
        if not queue_available():
            return self._inline(work.select(keys_only=False), queue=False)
        pair_count, pair_bytes = work.size()
        if not self.respond_async and work.fits_inline(pair_count, pair_bytes):
            return self._inline(work.select(keys_only=False), queue=True)
        selection = work.select(keys_only=True)
        if self.respond_async or not work.fits_inline(selection.count, selection.bytes):
            return self._queued(selection)
        return self._inline(work.select(keys_only=False, keys=selection), queue=True)

    def _queued(self, selection: S) -> Outcome[R]:
        job = self.work.queue(selection, self.spend, bounded=True)
        if not self.respond_async:
            job = jobs.wait(job, self.wait_seconds)
        if job.status is Status.FAILED:
            raise self.work.subject.failure(job)
        if job.status is Status.RUNNING and not (self.respond_async or self.answer_running):
            raise self.work.subject.running(job)
        return Outcome(job=job)

    def _inline(self, selection: S, *, queue: bool) -> Outcome[R]:
        try:
            return Outcome(done=self.work.run_inline(selection, self.deadline, self.spend))
        except HandOver as over:
            if not queue:
                raise self.work.subject.late(over.why) from None
            # Its calls were made: a tenant at its cap of running jobs is not refused them.
            with jobs.handing_over():
                job = self.work.queue(selection, self.spend, bounded=False)
            metrics.add_metric(name="WorkHandedOver", unit="Count", value=1)
            if self.answer_running:
                return Outcome(job=job)
            raise self.work.subject.moved(job, over.why) from None


def submit(
    work: Work[R, S],
    spend: spending.Spending,
    deadline: Deadline,
    *,
    respond_async: bool = False,
    wait_seconds: float = 0.0,
    answer_running: bool = False,
) -> Outcome[R]:
    """Run `work` inside the request (before `deadline`) or as a queued job: at once when it
    is large or `respond_async` (then the outcome is the running job), handed over when it
    turns out not to fit. A plain request waits up to `wait_seconds` for a queued job; one
    still running then (or handed over) is a StillRunning naming what to poll, unless
    `answer_running` (the kind answers with the running job). `spend` is the request's
    spending session (logic.spending), open before the work was made: every LLM call made for
    it meters there."""
    return _Dispatch(work, deadline, spend, respond_async, wait_seconds, answer_running).run()
