"""Monitor runs (E8), one kind of work of the job engine (logic.jobs): one run of a monitor is
a job of one chunk, started by whoever claims the run (the dispatcher, or POST
/monitors/{id}/run) in the transaction that claims it.

    started   the claim: the run's record (claimed) and the job, in one transaction
    run       a worker: the run's evaluation (its id fixed by the run, so a chunk delivered
              twice starts one), scored inside the chunk when it fits, else queued; while it
              runs, the chunk waits (logic.chunks.Waiting: back on the queue, delayed); once
              it ended, the comparison with the baseline (E1), the run's outcome and its alert
              (pending) in one write, then the alert's delivery (logic.monitor_alerts)
    complete  nothing more: the chunk ended the run
    failed    the run failed, saying why, its alert pending (the dispatcher delivers it)

A run's evaluation may start past the tenant's cap of running jobs (jobs.handing_over): the
run already holds a slot, and a tenant whose runs filled every slot would otherwise wait on
itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import (
    DomainError,
    Failure,
    ModelFailed,
    OverLimit,
    StillRunning,
    StorageUnavailable,
    TooManyJobs,
    Unrecoverable,
)
from evalsvc.core.identifiers import job_id, now_ms
from evalsvc.core.observability import logger, metrics
from evalsvc.core.settings import get_settings
from evalsvc.logic import comparisons, evaluations, jobs, monitor_alerts
from evalsvc.logic.chunks import Waiting
from evalsvc.logic.pairs_digest import definitions_sha256
from evalsvc.models.api_keys import Identity
from evalsvc.models.comparisons import CompareIn
from evalsvc.models.evaluations import EvaluateIn, EvaluationResult
from evalsvc.models.jobs import Chunk, Job, Status, Tally
from evalsvc.models.monitors import (
    MAX_WAIT_MS,
    PREVIOUS,
    MonitorIn,
    Run,
    RunMetric,
    run_id,
)
from evalsvc.spending.meter import Usage
from evalsvc.storage import monitors as store
from evalsvc.storage import results as results_store
from evalsvc.storage.writes import NONE, Writes, commit

# The kind's name (a job of it is one run of a monitor; its id, the run's).
MONITOR_RUN = "monitor"
ROUTE = "monitor run"
# How long a run waits on its evaluation (MAX_WAIT_MS) and holds its monitor (HOLD_MS) are
# models.monitors' (the monitor routes read HOLD_MS without importing this module).
# Of a worker's time, at most this many seconds (and no more than a plain request waits,
# EVALSVC_SYNC_WAIT_SECONDS) are spent waiting on a queued evaluation inside the chunk before
# it is put back on the queue to look again later.
WAIT_INSIDE_SECONDS = 20.0


def parse_run_id(value: str) -> tuple[str, int] | None:
    monitor_id, dot, ms = value.rpartition(".")
    if not (dot and monitor_id and ms.isdigit() and len(ms) <= 13):
        return None
    return monitor_id, int(ms)


def evaluation_id(tenant: str, monitor_id: str, scheduled_ms: int) -> str:
    """The id of a run's evaluation, known before it starts."""
    return job_id("ev_", tenant, _evaluation_key(monitor_id, scheduled_ms))


def _evaluation_key(monitor_id: str, scheduled_ms: int) -> str:
    return f"monitor-run\n{run_id(monitor_id, scheduled_ms)}"


def start(
    tenant: str,
    monitor_id: str,
    scheduled_ms: int,
    next_run_ms: int | None,
    last_run_ms: int | None,
) -> bool:
    """Claim the run of `monitor_id` scheduled for `scheduled_ms` (moving the monitor's next
    run to `next_run_ms`; None: a run asked for now) and start its job, at once, if the monitor
    still names `last_run_ms` as its last run (which the caller found ended); False when it
    was claimed before (by another dispatch, or an earlier delivery of this one). TooManyJobs
    when the tenant runs as many jobs as it may (nothing is claimed: the next dispatch tries
    again); StorageUnavailable when the monitor changed since it was read (another run was
    claimed, or it was deleted)."""
    rid = run_id(monitor_id, scheduled_ms)
    created = now_ms()
    job = Job(
        kind=MONITOR_RUN,
        tenant=tenant,
        job_id=rid,
        chunk_count=1,
        pairs_total=1,
        created_ms=created,
        params={"monitor_id": monitor_id, "scheduled_ms": scheduled_ms},
    )
    chunk = Chunk(MONITOR_RUN, tenant, rid, 0, 0, 1, rid, rid)
    claim = store.claiming(tenant, monitor_id, scheduled_ms, next_run_ms, last_run_ms)
    started = jobs.start(job, [chunk], claim, "the run was not started; run it again")
    if started is job:
        metrics.add_metric(name="MonitorRuns", unit="Count", value=1)
    return started is job


def _identity(tenant: str, monitor_id: str) -> Identity:
    return Identity(tenant=tenant, user=f"monitor {monitor_id}", user_email="", key_id="monitor")


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0


class MonitorRuns:
    """Monitor runs as the job engine runs them."""

    name = MONITOR_RUN
    completed_metric = "MonitorRunsEnded"

    def run(self, job: Job, chunk: Chunk, attempt: int, deadline: Deadline) -> Tally | None:
        tenant = job.tenant
        monitor_id = str(job.params["monitor_id"])
        scheduled = int(job.params["scheduled_ms"])
        done = Tally(index=chunk.index, pairs=1, bytes=0)
        run = store.get_run(tenant, monitor_id, scheduled)
        if run is None:
            raise Unrecoverable(f"the record of monitor run {job.job_id!r} is missing")
        if run.status in store.ENDED:
            monitor_alerts.deliver_if_due(tenant, monitor_id, scheduled)
            return done
        stored = store.get_monitor(tenant, monitor_id)
        if stored is None:
            run.status, run.failure = "failed", "the monitor was deleted before its run ended"
            commit(store.ending(run, now_ms(), alert=False))
            return done
        monitor = MonitorIn.from_stored(stored.body)
        result = self._evaluation(run, monitor, deadline)
        if result is None:
            return done  # the run ended (its evaluation could not start)
        if result.status is Status.RUNNING:
            if now_ms() - scheduled > MAX_WAIT_MS:
                self._end(run, monitor, failure="its evaluation did not end within 24 hours")
                return done
            raise Waiting(f"evaluation {result.results_id}", get_settings().monitor_poll_seconds)
        if result.status is Status.FAILED:
            self._end(run, monitor, result, failure=f"the evaluation failed: {result.failure}")
            return done
        self._compared(run, monitor, result, deadline)
        return done

    # ---- the evaluation ------------------------------------------------------------------------

    def _evaluation(
        self, run: Run, monitor: MonitorIn, deadline: Deadline
    ) -> EvaluationResult | None:
        """The run's evaluation as it stands, started now if it was not; None when it could not
        start (the run has ended, failed, saying why)."""
        tenant, monitor_id, scheduled = run.tenant, run.monitor_id, run.scheduled_ms
        rid = evaluation_id(tenant, monitor_id, scheduled)
        if run.result_id is None:
            store.set_evaluation(tenant, monitor_id, scheduled, rid)
            run.result_id = rid
        found = results_store.get(tenant, rid)
        if found is not None:
            return found
        body = EvaluateIn(
            seed_data_id=monitor.seed_data_id,
            metrics_id=monitor.metrics_id,
            pair_query=monitor.pair_query,
            max_cost_usd=monitor.max_cost_usd,
        )
        try:
            with jobs.handing_over():
                return evaluations.evaluate(
                    _identity(tenant, monitor_id),
                    body,
                    deadline,
                    wait_seconds=self._wait_inside(deadline),
                    request_key=_evaluation_key(monitor_id, scheduled),
                    keyed_id=True,
                    route=ROUTE,
                )
        except (StillRunning, TooManyJobs) as exc:
            raise Waiting(exc.message[:200], get_settings().monitor_poll_seconds) from None
        except StorageUnavailable:
            raise
        except (ModelFailed, OverLimit) as exc:
            if exc.transient:
                raise  # throttled, or the month's room held by work in flight: later
            return self._not_started(run, monitor, rid, exc)
        except DomainError as exc:
            return self._not_started(run, monitor, rid, exc)

    def _not_started(
        self, run: Run, monitor: MonitorIn, rid: str, exc: DomainError
    ) -> EvaluationResult | None:
        """The evaluation raised `exc`: the result if it started (it says why it failed), else
        the run ends failed, saying why it could not start."""
        found = results_store.get(run.tenant, rid)
        if found is not None:
            return found  # it started, then failed: its result says why
        self._end(run, monitor, failure=f"the evaluation could not start: {exc.message}")
        return None

    @staticmethod
    def _wait_inside(deadline: Deadline) -> float:
        limit = min(WAIT_INSIDE_SECONDS, get_settings().sync_wait_seconds)
        return max(0.0, min(limit, deadline.left() / 4))

    # ---- what it found -------------------------------------------------------------------------

    def _compared(
        self, run: Run, monitor: MonitorIn, result: EvaluationResult, deadline: Deadline
    ) -> None:
        baseline_id: str | None = monitor.baseline
        if baseline_id == PREVIOUS:
            previous = store.previous_complete(run.tenant, run.monitor_id, run.scheduled_ms)
            baseline_id = previous.result_id if previous else None
        verdicts: dict[int, str] = {}
        fell: dict[int, int] = {}
        if baseline_id is not None:
            run.baseline_id = baseline_id
            body = CompareIn(
                baseline_id=baseline_id,
                candidate_id=result.results_id,
                alpha=monitor.alpha,
                regression_threshold=monitor.regression_threshold,
                limit=1,
            )
            try:
                comparison, _, _ = comparisons.figures(
                    _identity(run.tenant, run.monitor_id), body, deadline
                )
            except StorageUnavailable:
                raise
            except DomainError as exc:
                failure = f"it could not be compared with baseline {baseline_id!r}: {exc.message}"
                self._end(run, monitor, result, failure=failure)
                return
            verdicts = {m.metric.candidate_idx: m.verdict for m in comparison.metrics}
            fell = {m.metric.candidate_idx: m.pairs_regressed for m in comparison.metrics}
            run.pairs_matched = comparison.pairs_matched
        run.metrics = [
            RunMetric(
                k,
                _finite(s.mean),
                _finite(s.ci_low),
                _finite(s.ci_high),
                verdicts.get(k),
                fell.get(k),
            )
            for k, s in enumerate(result.summaries)
            if s is not None  # a metric no pair applied to has no figures to watch (E10)
        ]
        self._end(run, monitor, result)

    def _end(
        self,
        run: Run,
        monitor: MonitorIn,
        result: EvaluationResult | None = None,
        *,
        failure: str | None = None,
    ) -> None:
        """Record the run's outcome (complete, or failed with `failure`) and its alert, when it
        has one to send; then send it."""
        run.status = "failed" if failure else "complete"
        run.failure = failure
        if result is not None:
            run.result_id = result.results_id
            run.definitions_sha256 = definitions_sha256(result.definitions)
            cost = result.usage.cost()
            run.cost_usd = None if cost is None else str(cost)
        alert = monitor.webhook_url is not None and bool(failure or run.regressed)
        at = now_ms()
        if not commit(store.ending(run, at, alert=alert)):
            return  # another delivery of the chunk ended it first
        logger.info(
            "monitor run ended",
            extra={
                "monitor_id": run.monitor_id,
                "run": run_id(run.monitor_id, run.scheduled_ms),
                "status": run.status,
                "regressed": len(run.regressed),
                "alert": alert,
            },
        )
        metrics.add_metric(
            name="MonitorRunsFailed" if failure else "MonitorRunsComplete", unit="Count", value=1
        )
        if run.regressed:
            metrics.add_metric(name="MonitorRegressions", unit="Count", value=1)
        if alert:
            monitor_alerts.deliver_if_due(run.tenant, run.monitor_id, run.scheduled_ms)

    # ---- the engine's other steps ----------------------------------------------------------------

    def complete(self, job: Job, tallies: Iterable[Tally], spent: Usage) -> Writes:
        for _ in tallies:
            pass
        return NONE

    def failed(self, job: Job, failure: Failure) -> Writes:
        tenant = job.tenant
        monitor_id = str(job.params["monitor_id"])
        scheduled = int(job.params["scheduled_ms"])
        run = store.get_run(tenant, monitor_id, scheduled)
        if run is None or run.status in store.ENDED:
            return NONE
        stored = store.get_monitor(tenant, monitor_id)
        alert = stored is not None and MonitorIn.from_stored(stored.body).webhook_url is not None
        run.status, run.failure = "failed", failure.message
        return store.ending(run, now_ms(), alert=alert)

    def discard(self, job: Job) -> None:
        """A failed run's evaluation stays: it is a result of its own."""


MONITOR_RUNS = jobs.register(MonitorRuns())
