"""The job engine: every kind of queued work (evaluations, augmentations, ...) starts, runs its
chunks, finishes, fails and is swept the same way; a kind (a `Kind`, registered by its module
in logic.kinds) says only how to do one chunk and what completing or failing the job changes
besides the job itself. How a request's work comes here (inside the request, or queued, then
waited for) is logic.dispatch.

    start      the request: the job (and whatever the kind creates with it, in one
               transaction, with its slot among the tenant's running jobs: at most
               EVALSVC_MAX_RUNNING_JOBS_PER_TENANT), then one message per chunk on the work
               queue
    wait       the request, for a plain POST: until the job ends, or out of time
    run_chunk  a worker: do one chunk, then count it once (storage.jobs.count), leaving its
               tally (the kind's aggregates); each delivery's LLM usage is added to its
               chunk's (storage.jobs.add_spent) and to the tenant's month (logic.spending) as
               its calls end, whatever its outcome
    finish     whoever counts the last chunk: reads the tallies (one item per chunk) and the
               chunks' usage, and ends the job complete, with the kind's actions, in one
               transaction; then the deliveries that never settled (killed) are charged in the
               month at once, as they are in the result
    give_up    the dead-letter worker: a chunk that kept failing fails the job
    sweep      on a schedule: a running job with no progress for EVALSVC_JOB_STALL_SECONDS has
               its missing chunks queued again (MAX_SWEEPS times), then fails, saying why; at
               a local server's start, every running job (its queue was not kept)

Every step may run twice (SQS delivers at least once, a worker or a request may die
anywhere): chunk writes are idempotent, a chunk is counted once, and ending a job is
conditional on it still running. A job stored but never queued (its request died) is found by
the sweeper, which queues its chunks from the job's plan.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Protocol

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import Failure, StorageUnavailable, TooManyJobs, Unrecoverable
from evalsvc.core.identifiers import now_ms
from evalsvc.core.observability import logger, metrics
from evalsvc.core.settings import get_settings
from evalsvc.logic import chunks, spending
from evalsvc.models.jobs import Chunk, Job, Piece, Status, Tally
from evalsvc.spending.meter import Usage
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage import work_queue
from evalsvc.storage.datasets import fingerprint
from evalsvc.storage.writes import Writes, commit

# The job parameter that holds the request's max_cost_usd, which every chunk is held to.
MAX_COST_PARAM = "max_cost_usd"


def cap_params(max_cost: Decimal | None) -> dict[str, str]:
    """The job params that hold every chunk of a job to the request's max_cost_usd (none
    without one): what _cap_left reads."""
    return {} if max_cost is None else {MAX_COST_PARAM: str(max_cost)}


# Times the sweeper queues a stalled job's missing chunks again before failing it.
MAX_SWEEPS = 3
# Work handed over mid-request (its calls already made) may start past the tenant's cap of
# running jobs, by at most this many jobs: hand-overs are small, and the set stays small.
HAND_OVER_ROOM = 32
# Seconds a caller refused for running too many jobs is told to wait.
TOO_MANY_RETRY_SECONDS = 30
# Running jobs a refusal names, at most.
NAMED_JOBS = 10

_HANDING_OVER: ContextVar[bool] = ContextVar("handing_over", default=False)


class Kind(Protocol):
    """One kind of queued work, as the engine runs it (docs/design.md, "The job engine")."""

    # Its name: part of every job's key and chunk's message; never changes once jobs exist.
    name: str
    # The metric counted when a job of this kind completes.
    completed_metric: str

    def run(self, job: Job, chunk: Chunk, attempt: int, deadline: Deadline) -> Tally | None:
        """Do `chunk` (delivery `attempt`) before `deadline`, idempotently; its tally to count,
        or None when it must not be counted (another delivery counted it meanwhile)."""
        ...

    def complete(self, job: Job, tallies: Iterable[Tally], spent: Usage) -> Writes:
        """The writes that make what the job produced exist, from the tallies of all its
        chunks (read as they are iterated, once: a large job's are not held at once) and the
        LLM usage of their deliveries (committed with the job's end). Raises Unrecoverable when
        the job must fail instead."""
        ...

    def failed(self, job: Job, failure: Failure) -> Writes:
        """The writes that record the failure besides the job's own."""
        ...

    def discard(self, job: Job) -> None:
        """Remove what a failed job wrote (best effort)."""
        ...


_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Make `kind` known to the engine (its module does this on import)."""
    known = _KINDS.setdefault(kind.name, kind)
    if known is not kind:
        raise ValueError(f"two kinds of queued work are named {kind.name!r}")
    return kind


def is_known(name: str) -> bool:
    return name in _KINDS


def kind_named(name: str) -> Kind:
    """The registered kind called `name` (logic.kinds.load_all registers every one)."""
    kind = _KINDS.get(name)
    if kind is None:
        raise Unrecoverable(f"no kind of queued work is called {name!r} in this version")
    return kind


def pieces(ords: Sequence[str], size: int) -> list[Piece]:
    """Consecutive pieces of `size` pairs (the last may be smaller) of the selection whose ords,
    in dataset order, are `ords`; each names its pairs by their ords' fingerprints."""
    return [
        Piece(
            first_ord=ords[start],
            last_ord=ords[min(start + size, len(ords)) - 1],
            count=len(ords[start : start + size]),
            members=b"".join(fingerprint(ord_) for ord_ in ords[start : start + size]),
        )
        for start in range(0, len(ords), size)
    ]


def cut(kind: str, tenant: str, job_id: str, ords: Sequence[str], size: int) -> list[Chunk]:
    """The chunks of a job: pieces(ords, size), numbered, each knowing where it starts."""
    return [
        Chunk(
            kind=kind,
            tenant=tenant,
            job_id=job_id,
            index=k,
            start=k * size,
            count=piece.count,
            first_ord=piece.first_ord,
            last_ord=piece.last_ord,
            members=piece.members,
        )
        for k, piece in enumerate(pieces(ords, size))
    ]


@contextmanager
def handing_over() -> Iterator[None]:
    """Jobs started in the block take over work a request began (its calls already made): they
    may pass the tenant's cap of running jobs, by at most HAND_OVER_ROOM."""
    token = _HANDING_OVER.set(True)
    try:
        yield
    finally:
        _HANDING_OVER.reset(token)


def _room() -> int:
    """How many running jobs the tenant may have for this one to start."""
    cap = get_settings().max_running_jobs_per_tenant
    return cap + HAND_OVER_ROOM if _HANDING_OVER.get() else cap


def _too_many(running: Sequence[tuple[str, str]]) -> TooManyJobs:
    cap = get_settings().max_running_jobs_per_tenant
    named = ", ".join(f"{kind} {job_id!r}" for kind, job_id in running[:NAMED_JOBS])
    more = f" and {len(running) - NAMED_JOBS} more" if len(running) > NAMED_JOBS else ""
    return TooManyJobs(
        f"this tenant has {len(running)} queued jobs running ({named}{more}), and may run "
        f"{cap} at once: nothing was started; retry once one of them has ended, or ask the "
        "operator to raise EVALSVC_MAX_RUNNING_JOBS_PER_TENANT",
        retry_after_seconds=TOO_MANY_RETRY_SECONDS,
    )


def start(job: Job, pieces: Sequence[Chunk], also: Writes, again: str) -> Job:
    """Store the job (with the writes `also`) and queue its chunks; the job. A job with its id
    already stored (a retry of the same request) is returned as it is. A tenant running as
    many jobs as it may is refused (TooManyJobs) before anything is stored: one read first,
    and the condition of the transaction that stores the job, which two requests racing for
    the last slot cannot both pass. If the chunks cannot be queued the job fails, saying to
    `again` (what to do), and the error is raised; a request that dies before queueing leaves
    the job to the sweeper."""
    room = _room()
    running = jobs_store.running(job.tenant)
    if (job.kind, job.job_id) not in running and len(running) >= room:
        return _existing(job, running)
    if not jobs_store.create(job, pieces, also, room=room):
        return _existing(job, jobs_store.running(job.tenant), room)
    try:
        work_queue.send(pieces)
    except BaseException:
        failure = Failure.of(StorageUnavailable(f"the work could not be queued: {again}"))
        fail(job.tenant, job.kind, job.job_id, failure)
        raise
    metrics.add_metric(name=f"{job.kind.title()}sQueued", unit="Count", value=1)
    logger.info("job queued", extra={"kind": job.kind, "job": job.job_id, "chunks": len(pieces)})
    return job


def _existing(job: Job, running: Sequence[tuple[str, str]], room: int | None = None) -> Job:
    """The job a retry of the same request started (running or ended), when it was not
    started now; else why not: the tenant's running jobs fill its room (`room`; None: they
    were found to), or a concurrent change (`also`'s condition)."""
    existing = jobs_store.get(job.tenant, job.kind, job.job_id, params=True)
    if existing is not None:
        return existing
    if room is None or len(running) >= room:
        raise _too_many(running)
    raise StorageUnavailable(f"the {job.kind} changed while it was started; retry")


def get(tenant: str, kind: str, job_id: str) -> Job | None:
    return jobs_store.get(tenant, kind, job_id)


def spent_of(job: Job) -> Usage:
    """The LLM usage of the job's chunks so far (every delivery; the calls in flight of one
    running or killed counted at the most they could use, as lost work)."""
    return jobs_store.spent(job.tenant, job.kind, job.job_id).usage


def wait(job: Job, seconds: float) -> Job:
    """The job's state once it has ended, or after `seconds` (with the params of `job`: the
    polls read the small state only)."""
    state = chunks.poll(
        lambda: jobs_store.get(job.tenant, job.kind, job.job_id) or job,
        lambda j: j.status is not Status.RUNNING,
        seconds,
    )
    state.params = state.params or job.params
    return state


# ---- workers -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Record:
    """How the failure rules (logic.chunks) record an outcome on a chunk's job."""

    def fail(self, chunk: Chunk, failure: Failure) -> None:
        fail(chunk.tenant, chunk.kind, chunk.job_id, failure)

    def note_error(self, chunk: Chunk, error: Failure) -> None:
        jobs_store.note_error(chunk, error, now_ms())

    def requeued(self, chunk: Chunk) -> None:
        jobs_store.touch(chunk, now_ms())


_RECORD = _Record()


def run_chunk(chunk: Chunk, attempt: int, deadline: Deadline) -> None:
    """Do one chunk (delivery number `attempt`) before `deadline` and count it; finish the job
    when it is the last. Raises RetryChunk when another attempt may succeed; fails the job
    itself when none can."""
    job = jobs_store.get(chunk.tenant, chunk.kind, chunk.job_id, params=True)
    if job is None or job.status is not Status.RUNNING:
        logger.info(
            "chunk of an ended or unknown job skipped",
            extra={"job": chunk.job_id, "chunk": chunk.index},
        )
        return
    chunks.run(chunk, attempt, partial(_run, job, chunk, attempt, deadline), _RECORD)


def _run(job: Job, chunk: Chunk, attempt: int, deadline: Deadline) -> None:
    redelivered = attempt > 1 or chunk.requeues > 0
    if redelivered and jobs_store.is_counted(chunk):
        # Counted by an earlier delivery, which may have died before finishing the job. (A
        # duplicate first delivery does the chunk again, and its count is refused.)
        _finish_if_all_counted(job)
        return
    kind = kind_named(chunk.kind)
    route = f"worker {chunk.kind}"
    cap = _cap_left(job)
    # The delivery's usage is kept on the chunk as its calls end, and the rooms of its calls in
    # flight held there (and in the month): a delivery killed mid-call leaves its hold, counted
    # in full. Settled on leaving, before the chunk is counted: the finish that counting may
    # trigger sums it.
    with spending.session(chunk.tenant, route, deadline.left(), cap, _ChunkCopy(chunk)):
        tally = kind.run(job, chunk, attempt, deadline)
    if tally is None:
        _finish_if_all_counted(jobs_store.get(job.tenant, job.kind, job.job_id))
        return
    counted = jobs_store.count(chunk, tally, now_ms())
    if counted is None:
        # Counted meanwhile by another delivery of the same chunk, or the job ended: if it
        # failed, what this delivery just wrote goes with the rest of what it wrote.
        again = jobs_store.get(job.tenant, job.kind, job.job_id, params=True)
        if again is not None and again.status is Status.FAILED:
            kind.discard(again)
        _finish_if_all_counted(again)
        return
    done, total = counted
    if done >= total:
        finish(job.tenant, job.kind, job.job_id)


def _cap_left(job: Job) -> Decimal | None:
    """What is left of the job's max_cost_usd after what its chunks spent so far (None: the
    job has no cap). Chunk deliveries done again (out of time, throttled, duplicated) spend
    more than an uninterrupted run: the cap holds all the same."""
    cap = job.params.get(MAX_COST_PARAM)
    if cap is None:
        return None
    spent = spent_of(job).cost()
    left = Decimal(str(cap)) - (spent or Decimal(0))
    return max(left, Decimal(0))


@dataclass(frozen=True, slots=True)
class _ChunkCopy:
    """A delivery's LLM usage, kept on its chunk's spent item (spending.Copy)."""

    chunk: Chunk

    def hold(self, reservation: str, month: str, most: Usage) -> None:
        jobs_store.hold_spent(self.chunk, reservation, month, most)

    def add(self, used: Usage) -> None:
        jobs_store.add_spent(self.chunk, used)

    def settle(self, used: Usage, reservation: str | None) -> None:
        jobs_store.add_spent(self.chunk, used, [reservation] if reservation else [])


def _finish_if_all_counted(job: Job | None) -> None:
    if job is not None and job.status is Status.RUNNING and job.chunks_done >= job.chunk_count:
        finish(job.tenant, job.kind, job.job_id)


class _NotAllCounted(Exception):
    """Fewer tallies than chunks were read: the job is not ready to finish."""


def _all_tallies(job: Job) -> Iterator[Tally]:
    """The job's tallies as its kind reads them, a page at a time; _NotAllCounted at their end
    when fewer than its chunks were found (a kind reads them all before it decides)."""
    seen = 0
    for tally in jobs_store.tallies(job.tenant, job.kind, job.job_id):
        seen += 1
        yield tally
    if seen < job.chunk_count:
        raise _NotAllCounted


def finish(tenant: str, kind: str, job_id: str) -> None:
    """End the job complete from its chunks' tallies (a no-op if it has ended)."""
    job = jobs_store.get(tenant, kind, job_id, params=True)
    if job is None or job.status is not Status.RUNNING:
        return
    work = kind_named(kind)
    spent = jobs_store.spent(tenant, kind, job_id)
    try:
        made = work.complete(job, _all_tallies(job), spent.usage)
    except _NotAllCounted:
        return  # not every chunk is counted yet
    except Unrecoverable as exc:
        fail(tenant, kind, job_id, Failure(exc.message))
        return
    # Every chunk is counted, so a hold still standing is a killed delivery's: charged in the
    # month before the job is seen complete, so that a caller who reads the month once it is
    # sees it charged (charging a reservation twice finds it gone: a finisher that loses the
    # race below charges nothing more).
    spending.charge_lost_work(tenant, spent.holds)
    if commit(jobs_store.completing(job, now_ms()) + made):
        metrics.add_metric(name=work.completed_metric, unit="Count", value=1)
        logger.info("job complete", extra={"kind": kind, "job": job_id, "pairs": job.pairs_done})


def fail(tenant: str, kind: str, job_id: str, failure: Failure) -> bool:
    """Fail a running job, saying why, and remove what it wrote; False when it had ended."""
    job = jobs_store.get(tenant, kind, job_id, params=True)
    if job is None or job.status is not Status.RUNNING:
        return False
    work = kind_named(kind)
    if not commit(jobs_store.failing(job, failure) + work.failed(job, failure)):
        return False
    work.discard(job)
    metrics.add_metric(name=f"{kind.title()}sFailed", unit="Count", value=1)
    logger.warning("job failed", extra={"kind": kind, "job": job_id, "why": failure.message})
    return True


def give_up(chunk: Chunk) -> None:
    """A chunk that kept failing reached the dead-letter queue: its job fails, saying why."""
    job = jobs_store.get(chunk.tenant, chunk.kind, chunk.job_id)
    if job is None or job.status is not Status.RUNNING:
        return
    if jobs_store.is_counted(chunk):
        _finish_if_all_counted(job)  # a copy of a chunk already counted
        return
    fail(chunk.tenant, chunk.kind, chunk.job_id, chunks.give_up_reason(chunk, job.last_error))


# ---- the sweeper -------------------------------------------------------------------------------


@dataclass(slots=True)
class Sweep:
    """What one sweep did."""

    requeued_chunks: int = 0
    resumed_jobs: int = 0
    finished_jobs: int = 0
    failed_jobs: int = 0


def sweep(at_ms: int | None = None, *, restart: bool = False) -> Sweep:
    """Find the running jobs that made no progress for EVALSVC_JOB_STALL_SECONDS before
    `at_ms` (now) and get each moving again: finish it when every chunk is counted, else queue
    its missing chunks again; after MAX_SWEEPS such tries, fail it saying why.

    `restart`: a local server starts, and its queue was not kept: every running job is taken
    again, whatever its last progress, and this does not count as one of its MAX_SWEEPS (a
    restart is not a stall; however many restarts come in a row, each takes every job again).

    Taking a job stores the time it was taken (now, never `at_ms`) as its progress: a job
    taken and then left again (its worker died) is stalled one stall time later."""
    now = now_ms()
    as_of = now if at_ms is None else at_ms
    stall_ms = int(get_settings().job_stall_seconds * 1000)
    stalled_before = now + 1 if restart else as_of - stall_ms
    report = Sweep()
    for tenant, kind, job_id in list(jobs_store.stalled(stalled_before)):
        try:
            _sweep_one(tenant, kind, job_id, stalled_before, stall_ms, report, restart)
        except Exception:
            logger.exception("a stalled job could not be swept", extra={"job": job_id})
    if report.resumed_jobs or report.finished_jobs or report.failed_jobs:
        logger.info("stalled jobs swept", extra=dataclasses.asdict(report))
        metrics.add_metric(name="JobsSwept", unit="Count", value=report.resumed_jobs)
    return report


def _sweep_finish(job: Job, minutes: int, report: Sweep, restart: bool) -> None:
    """Every chunk of the stalled job is counted: end it complete. Each try counts as a sweep,
    so a job whose completion keeps being refused (or raising) fails after MAX_SWEEPS tries
    instead of being tried forever, holding its tenant's slot among the running jobs."""
    if job.sweeps >= MAX_SWEEPS and not restart:
        failure = Failure(
            f"every chunk was done, but the job could not be completed in {job.sweeps} tries "
            f"over {job.sweeps * minutes} minutes; run it again"
        )
        if fail(job.tenant, job.kind, job.job_id, failure):
            report.failed_jobs += 1
        return
    if not jobs_store.claim_sweep(job, now_ms(), count=not restart):
        return
    finish(job.tenant, job.kind, job.job_id)
    report.finished_jobs += 1


def _sweep_one(
    tenant: str,
    kind: str,
    job_id: str,
    stalled_before: int,
    stall_ms: int,
    report: Sweep,
    restart: bool,
) -> None:
    job = jobs_store.get(tenant, kind, job_id)
    if job is None or job.status is not Status.RUNNING or job.progress_ms >= stalled_before:
        return  # ended or moved since the index was read
    minutes = max(1, stall_ms // 60_000)
    if job.chunks_done >= job.chunk_count:
        _sweep_finish(job, minutes, report, restart)
        return
    if job.sweeps >= MAX_SWEEPS and not restart:
        last = job.last_error
        reason = (
            f"no progress for {minutes} minutes, after its unfinished chunks were queued again "
            f"{job.sweeps} times" + (f"; last error: {last.message}" if last else "")
        )
        failure = Failure(reason, last.error) if last else Failure(reason)
        if fail(tenant, kind, job_id, failure):
            report.failed_jobs += 1
        return
    if not jobs_store.claim_sweep(job, now_ms(), count=not restart):
        return
    counted = jobs_store.counted_indexes(job)
    missing = [
        dataclasses.replace(chunk, requeues=chunk.requeues + 1)
        for chunk in jobs_store.plan(job)
        if chunk.index not in counted
    ]
    work_queue.send(missing)
    report.resumed_jobs += 1
    report.requeued_chunks += len(missing)
    logger.warning(
        "stalled job queued again",
        extra={"kind": kind, "job": job_id, "chunks": len(missing), "sweep": job.sweeps + 1},
    )
