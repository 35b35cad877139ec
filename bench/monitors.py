"""What monitors (E8) cost, in DynamoDB and SQS calls and moto's seconds, and how large their
items grow at the field limits. Everything runs in moto in-process, with a metrics set of checks
only (no judge).

1. dispatch: one `logic.monitors.dispatch(at_ms)` (the dispatcher's minute) with no monitor
   due, which is what every minute costs (43,200 dispatches a month), then with N monitors due
   at once across 10 tenants (N = 10, 100, 1000; 1000 is the most 10 tenants keep), each
   claimed and started by the real start (logic.kinds.monitor_run.start: the run's record and
   its job in one transaction, its chunk on the work queue); per monitor claimed; then the next
   minute's dispatch, no run having ended. Once at the tenants' cap of running jobs as deployed
   (EVALSVC_MAX_RUNNING_JOBS_PER_TENANT, 4 by default: the monitors past it are left for a
   later dispatch, which tries them again), once with the cap at its most (1000), so that
   every due monitor is claimed. The SQS calls are the service's own (its work-queue client),
   not the workers' receives; the log records are those at the harness's level (WARNING and
   above), counted and kept off the output. moto's seconds grow with the tables: moto copies
   every table a TransactWriteItems touches (to roll it back), so the 1000-run dispatch takes
   minutes here (the whole command about 10 minutes on 2 cores).
2. run: one run of a monitor end to end over N pairs x 5 checks (`monitors.run_now`, as POST
   /monitors/{id}/run; then the work queue delivered, one message at a time, to the chunk
   worker's handler), its DynamoDB and SQS calls by phase: the claim and start; the run's
   chunk (the engine's reads and writes, the run's record and monitor read); the evaluation
   inside it; the comparison with the previous run; the outcome's write; the alert posted to a
   webhook receiver on 127.0.0.1. Three runs: the first (no baseline), a steady one (compared,
   no alert), a regressed one (compared, alerted). Against the same evaluation made by POST
   /evaluate's logic alone (logic.evaluations.evaluate): what a monitor adds. Then the same
   with the evaluation queued (EVALSVC_INLINE_MAX_CHECKS below the run's checks): the run's
   chunk starts the evaluation's job and waits for it on the queue; each wait is the run's
   chunk sent again and delivered again (EVALSVC_MONITOR_POLL_SECONDS=0 and
   EVALSVC_SYNC_WAIT_SECONDS=0 here, so no wait is made inside a chunk and none is delayed);
   a fourth run has its chunk delivered 4 times while its evaluation's chunk is held back
   (taken off the queue and put back unreceived), as when the workers are busy: the cost of
   each wait.
3. sizes: the largest items at the field limits, text in 4-byte UTF-8 (random characters,
   which do not compress): the monitor item (name 200 characters, webhook URL 2,000, secret
   256, schedule 200 (padded with U+3000, the widest whitespace a cron takes), pair_query with
   32 labels of 128 characters, tenant, monitor, dataset, metrics and baseline ids of 128
   characters: the ids the service makes are made that long for the measure); a run record
   ended with 50 metrics, a failure of 2,000 characters and its alert (pending, leased,
   failed), with result and baseline ids of 128 characters; a real run that regressed on 50
   metrics of 2,000 characters; the alert bodies (the one posted, and the most one can hold:
   50 regressed metrics of 2,000 characters and the failure); and the history page of such
   runs as GET /monitors/{id}/history answers it, against Lambda's 6 MB response.

    .venv/bin/python bench/monitors.py dispatch [--due 10 --due 100 --due 1000] [--tenants 10]
    .venv/bin/python bench/monitors.py run [--pairs 200]
    .venv/bin/python bench/monitors.py sizes
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from typing import Any

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, fresh_tables, shown

# isort: split

import boto3
from evalsvc.api.monitor_views import run_out
from evalsvc.api.responses import MAX_RESPONSE_BYTES, _encoded, _fits
from evalsvc.core.deadlines import Deadline
from evalsvc.core.identifiers import new_id
from evalsvc.core.observability import SERVICE
from evalsvc.core.settings import Settings, get_settings
from evalsvc.handlers.background import chunk_handler, dead_chunk_handler
from evalsvc.logic import (
    comparisons,
    datasets,
    evaluations,
    jobs,
    metric_set_create,
    metric_sets,
    monitor_alerts,
    monitors,
)
from evalsvc.logic.chunks import Waiting
from evalsvc.logic.kinds import monitor_run
from evalsvc.logic.kinds.evaluation import EVALUATION
from evalsvc.logic.pairs_digest import definitions_sha256
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import MAX_LABEL_CHARS, MAX_LABELS, MAX_PAIRS, PairIn, SeedDatasetIn
from evalsvc.models.evaluations import MAX_LAST_N_SECONDS, EvaluateIn, PairQuery
from evalsvc.models.metric_sets import MAX_DEFINITION_CHARS, MAX_DEFINITIONS
from evalsvc.models.monitors import MAX_NAME_CHARS, MAX_SECRET_CHARS, MonitorIn, Run, RunMetric
from evalsvc.monitoring.schedules import MAX_SCHEDULE_CHARS
from evalsvc.monitoring.webhook_targets import MAX_URL_CHARS
from evalsvc.storage import dynamo, work_queue
from evalsvc.storage import monitors as store
from evalsvc.storage import results as results_store
from evalsvc.storage.writes import commit
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.tables import create_queues
from evalsvc_tools.local.workers import QueueConsumer, drain
from fanout import SqsCounter
from starlette.requests import Request

from tests.webhook_receiver import Receiver, receiver

ITEM_LIMIT = 400 * 1024
MINUTE_MS = 60_000
MONTH_MINUTES = 30 * 24 * 60  # 43,200 dispatches
SIGNING_KEY = "a-secret-of-16-chars"
CHECKS = [
    "check:non_empty",
    "check:max_words:40",
    "check:contains:Settings",
    "check:no_pii",
    "check:readability",
]
# The phases of a run (the others are named where they are counted).
RUN_CHUNK = "run's chunk: engine, run record, monitor"
OTHER = "the rest (the queue's poller, the bench)"
WAITS = "waits on the queued evaluation"
# A time on the hour (2026-01-01T00:00Z): monitors created then on rate(1 hour) are all due
# an hour later.
T0 = 1_767_225_600_000


def identity(tenant: str) -> Identity:
    return Identity(tenant=tenant, user="bench", user_email="bench@example.test", key_id="b")


class Queue:
    """The work queue and its dead-letter queue (moto), delivered to the workers' handlers one
    message at a time, as tests/work_queue.py does."""

    def __init__(self) -> None:
        self.client = boto3.client("sqs", region_name="us-east-1")
        self.urls = create_queues(self.client, "bench")

    def drain(self) -> int:
        return drain(
            [
                QueueConsumer(self.client, self.urls["WorkQueue"], chunk_handler, batch_size=1),
                QueueConsumer(
                    self.client, self.urls["WorkDeadLetterQueue"], dead_chunk_handler, batch_size=10
                ),
            ]
        )


def _service(queue: Queue, **env: str) -> None:
    """Fresh tables, the service pointed at them and at the work queue."""
    fresh_tables(
        {
            "EVALSVC_WORK_QUEUE_URL": queue.urls["WorkQueue"],
            "EVALSVC_ALLOW_LOCAL_WEBHOOKS": "1",
            "EVALSVC_MONITOR_POLL_SECONDS": "0",
            "EVALSVC_SYNC_WAIT_SECONDS": "0",
            "EVALSVC_CHUNK_RETRY_BASE_SECONDS": "0",
            # The workers' handlers would print their CloudWatch metrics among the tables.
            "POWERTOOLS_METRICS_DISABLED": "true",
            **env,
        }
    )


class _Open:
    """A phase while it is open: its name (which may change before it closes) and what was
    counted in it so far, apart from the phases opened inside it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls: Counter[str] = Counter()
        self.seconds = 0.0


class Phases:
    """DynamoDB and SQS calls (the service's own clients) and seconds, by phase: a call belongs
    to the innermost phase open when it is made. One thing runs at a time here (the queue is
    delivered one message at a time), so the service's own worker threads work for the phase
    that is open."""

    def __init__(self) -> None:
        self.dynamo = CallCounter()
        self.sqs = SqsCounter(work_queue.client())
        self.calls: dict[str, Counter[str]] = defaultdict(Counter)
        self.seconds: dict[str, float] = defaultdict(float)
        self.times: Counter[str] = Counter()
        self._stack: list[_Open] = [_Open(OTHER)]
        self._since = time.perf_counter()

    def _flush(self) -> None:
        top = self._stack[-1]
        top.calls.update(self.dynamo.take())
        top.calls.update({f"SQS {op}": k for op, k in self.sqs.take().items()})
        now = time.perf_counter()
        top.seconds += now - self._since
        self._since = now

    def _close(self, phase: _Open) -> None:
        self.calls[phase.name].update(phase.calls)
        self.seconds[phase.name] += phase.seconds
        phase.calls, phase.seconds = Counter(), 0.0

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Calls made inside count for `name` (or for what it is renamed to before it
        closes)."""
        self._flush()
        opened = _Open(name)
        self._stack.append(opened)
        try:
            yield
        finally:
            self._flush()
            self._stack.pop()
            self._close(opened)
            self.times[opened.name] += 1

    def rename(self, old: str, new: str) -> None:
        """The innermost open phase called `old` counts as `new`, all of it."""
        for opened in reversed(self._stack):
            if opened.name == old:
                opened.name = new
                return

    def take(self) -> tuple[dict[str, Counter[str]], dict[str, float], Counter[str]]:
        self._flush()
        self._close(self._stack[0])
        taken = (dict(self.calls), dict(self.seconds), self.times)
        self.calls, self.seconds, self.times = defaultdict(Counter), defaultdict(float), Counter()
        return taken


def _wrapped(phases: Phases, name: str, real: Callable[..., Any]) -> Callable[..., Any]:
    def inside(*args: Any, **kwargs: Any) -> Any:
        with phases.phase(name):
            return real(*args, **kwargs)

    return inside


@contextmanager
def instrumented(phases: Phases) -> Iterator[None]:
    """A monitor run's steps each counted as their phase (the functions it calls, wrapped where
    it looks them up)."""
    real_run_chunk = jobs.run_chunk
    kind = monitor_run.MONITOR_RUNS
    real_kind_run = kind.run

    def run_chunk(chunk: Any, attempt: int, deadline: Deadline) -> None:
        name = "evaluation's chunks (its job)" if chunk.kind == EVALUATION else RUN_CHUNK
        with phases.phase(name):
            real_run_chunk(chunk, attempt, deadline)

    def kind_run(*args: Any) -> Any:
        try:
            return real_kind_run(*args)
        except Waiting:
            phases.rename(RUN_CHUNK, WAITS)
            raise

    patches: list[tuple[Any, str, Any]] = [
        (jobs, "run_chunk", run_chunk),
        (kind, "run", kind_run),
        (evaluations, "evaluate", _wrapped(phases, "evaluation", evaluations.evaluate)),
        (store, "previous_complete", _wrapped(phases, "comparison", store.previous_complete)),
        (comparisons, "figures", _wrapped(phases, "comparison", comparisons.figures)),
        (monitor_run, "commit", _wrapped(phases, "outcome (one write)", monitor_run.commit)),
        (
            monitor_alerts,
            "deliver_if_due",
            _wrapped(phases, "alert (to 127.0.0.1)", monitor_alerts.deliver_if_due),
        ),
    ]
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in patches]
    for owner, name, value in patches:
        setattr(owner, name, value)
    try:
        yield
    finally:
        for owner, name, value in saved:
            if owner is kind:
                delattr(kind, "run")  # the class's method again
            else:
                setattr(owner, name, value)


def _total(counts: dict[str, Counter[str]]) -> Counter[str]:
    everything: Counter[str] = Counter()
    for calls in counts.values():
        everything.update(calls)
    return everything


def _dynamo(calls: Counter[str]) -> Counter[str]:
    return Counter({op: k for op, k in calls.items() if not op.startswith("SQS ")})


def _sqs(calls: Counter[str]) -> Counter[str]:
    return Counter({op[4:]: k for op, k in calls.items() if op.startswith("SQS ")})


def _n(calls: Counter[str]) -> int:
    return sum(calls.values())


def _cell(calls: Counter[str]) -> str:
    return f"{shown(calls)} ({_n(calls)})" if calls else "—"


# ---- 1. dispatch -------------------------------------------------------------------------------


def _monitors_due(count: int, tenants: int) -> int:
    """`count` monitors across `tenants` tenants (each with a checks-only metrics set), created
    at T0 on rate(1 hour): all due at the same minute, which is returned. (Their dataset is not
    written: their runs are claimed and started here, never run.)"""
    per_tenant = [count // tenants + (1 if k < count % tenants else 0) for k in range(tenants)]
    due: set[int] = set()
    for k, many in enumerate(per_tenant):
        who = identity(f"tenant-{k:02d}")
        metrics_id = metric_set_create.create_metrics_set(who, CHECKS).metrics_id
        body = MonitorIn(
            name=f"monitor of tenant {k}",
            seed_data_id="prod",
            metrics_id=metrics_id,
            schedule="rate(1 hour)",
        )
        for _ in range(many):
            due.add(monitors.create(who, body, at_ms=T0).next_run_ms)
    assert len(due) <= 1
    return due.pop() if due else T0 + 3_600_000


class Quiet(logging.Filter):
    """Counts the service's log records (at the harness's level, WARNING) and keeps them off
    the output; CloudWatch metrics the service prints (Powertools publishes them once a metric
    has 100 values, whatever POWERTOOLS_METRICS_DISABLED says) are kept off too."""

    def __init__(self) -> None:
        super().__init__()
        self.records: Counter[str] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        self.records[record.levelname] += 1
        return False

    @contextmanager
    def on(self) -> Iterator[None]:
        service = logging.getLogger(SERVICE)
        service.addFilter(self)
        try:
            with redirect_stdout(io.StringIO()):
                yield
        finally:
            service.removeFilter(self)

    def take(self) -> Counter[str]:
        records, self.records = self.records, Counter()
        return records


def _dispatch_row(
    phases: Phases, quiet: Quiet, what: str, at_ms: int, due: int
) -> tuple[str, Counter[str]]:
    phases.take()
    quiet.take()
    with quiet.on():
        started = time.perf_counter()
        report = monitors.dispatch(at_ms)
        seconds = time.perf_counter() - started
    counts, _, _ = phases.take()
    logged = quiet.take()
    calls = _total(counts)
    claimed = len(report.claimed)
    dynamo_calls, sqs_calls = _dynamo(calls), _sqs(calls)
    per = (
        f"{_n(dynamo_calls) / claimed:.2f} + {_n(sqs_calls) / claimed:.2f}, "
        f"{seconds / claimed * 1000:.1f} ms"
        if claimed
        else "—"
    )
    lines = ", ".join(f"{level} {k}" for level, k in sorted(logged.items())) or "—"
    row = (
        f"| {what} | {due} | {claimed} | {due - claimed} | {_cell(dynamo_calls)} | "
        f"{_cell(sqs_calls)} | {lines} | {seconds:.3f} | {per} |"
    )
    return row, calls


def run_dispatch(counts: list[int], tenants: int) -> None:
    print(f"dispatch: monitors across {tenants} tenants, checks-only metrics sets, moto\n")
    head = (
        "| dispatch | due | runs claimed | left (tenant at its cap) | DynamoDB calls | "
        "SQS calls (the service's) | log records (WARNING+) | seconds (moto) | "
        "per run claimed: DynamoDB + SQS calls, seconds |"
    )
    quiet = Quiet()
    default = Settings.model_fields["max_running_jobs_per_tenant"].default
    idle: Counter[str] = Counter()
    for cap in (default, 1000):
        deployed = " (EVALSVC_MAX_RUNNING_JOBS_PER_TENANT's default)" if cap == default else ""
        print(f"### at most {cap} running jobs a tenant{deployed}\n")
        print(head)
        print("|---|---|---|---|---|---|---|---|---|")
        env = {"EVALSVC_MAX_RUNNING_JOBS_PER_TENANT": str(cap)}
        with moto_in_process():
            queue = Queue()
            _service(queue, **env)
            row, idle = _dispatch_row(Phases(), quiet, "idle: nothing stored", T0, 0)
            print(row)
        for count in counts:
            with moto_in_process():
                queue = Queue()
                _service(queue, **env)
                due = _monitors_due(count, tenants)
                phases = Phases()
                rows = [
                    _dispatch_row(phases, quiet, f"idle: {count} monitors, none due", due - 1, 0),
                    _dispatch_row(phases, quiet, f"{count} due at once", due, count),
                ]
                left = sum(1 for d in store.due(due + MINUTE_MS) if d.run_ms is None)
                next_minute = "the next minute (no run ended meanwhile)"
                rows.append(_dispatch_row(phases, quiet, next_minute, due + MINUTE_MS, left))
                for row, _ in rows:
                    print(row)
        print()
    month = Counter({op: k * MONTH_MINUTES for op, k in idle.items()})
    print(f"a month of idle minutes ({MONTH_MINUTES:,} dispatches): {shown(month)}")


# ---- 2. run ------------------------------------------------------------------------------------


def _seed(who: Identity, n: int, regressed: bool) -> None:
    """`n` pairs: steady, 1 in 10 answers without the word a check looks for; regressed, 2 in
    3 (the same pair ids)."""
    data = []
    for i in range(n):
        missing = (i % 3 != 0) if regressed else (i % 10 == 0)
        where = "the account page" if missing else "Settings"
        data.append(
            PairIn(
                id=f"pair-{i:05d}",
                input=f"Question {i}: how do I change the billing address on my account?",
                output=f"Open {where}, then Billing, edit the address and press Save ({i}).",
            )
        )
    datasets.write_seed_dataset(who, "prod", SeedDatasetIn(data=data))


ORDER = [
    "claim and start (POST /monitors/{id}/run)",
    RUN_CHUNK,
    "evaluation",
    WAITS,
    "evaluation's chunks (its job)",
    "comparison",
    "outcome (one write)",
    "alert (to 127.0.0.1)",
    OTHER,
]


def _phase_table(title: str, counts: dict[str, Counter[str]], seconds: dict[str, float]) -> None:
    print(f"{title}\n")
    print("| phase | DynamoDB calls | SQS calls | seconds (moto) |")
    print("|---|---|---|---|")
    for name in ORDER + sorted(set(counts) - set(ORDER)):
        if name in counts and (counts[name] or seconds.get(name, 0) > 0.0005):
            calls = counts[name]
            print(
                f"| {name} | {_cell(_dynamo(calls))} | {_cell(_sqs(calls))} | "
                f"{seconds.get(name, 0):.3f} |"
            )
    everything = _total(counts)
    print(
        f"| **all** | {_cell(_dynamo(everything))} | {_cell(_sqs(everything))} | "
        f"{sum(seconds.values()):.3f} |\n"
    )


def _plain(
    phases: Phases, quiet: Quiet, queue: Queue, who: Identity, metrics_id: str, queued: bool
) -> None:
    body = EvaluateIn(
        seed_data_id="prod", metrics_id=metrics_id, pair_query=PairQuery(latest_n_pairs=200)
    )
    phases.take()
    with quiet.on():
        with phases.phase("evaluation"):
            done = evaluations.evaluate(who, body, Deadline.never(), respond_async=queued)
        if queued:
            with instrumented(phases):
                queue.drain()
    counts, seconds, _ = phases.take()
    result = results_store.get(who.tenant, done.results_id)
    assert result is not None and result.status.value == "complete", result
    _phase_table("POST /evaluate's logic alone (logic.evaluations.evaluate)", counts, seconds)


def _deliver_run_chunk(queue: Queue, times: int) -> int:
    """Deliver the monitor run's chunk alone `times` times while its evaluation's chunks wait
    (as if every worker were busy with others: they are taken off the queue, then put back as
    they were, never received); how many deliveries were made."""
    consumer = QueueConsumer(queue.client, queue.urls["WorkQueue"], chunk_handler, batch_size=1)
    url = queue.urls["WorkQueue"]
    held: list[dict[str, Any]] = []
    made = 0
    for _ in range(times):
        messages = queue.client.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["All"]
        ).get("Messages", [])
        runs = [m for m in messages if json.loads(m["Body"])["kind"] == monitor_run.MONITOR_RUN]
        for message in messages:
            if message not in runs:
                queue.client.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                held.append(message)
        made += consumer._deliver(runs)
    for message in held:
        group = message["Attributes"].get("MessageGroupId")
        extra = {"MessageGroupId": group} if group else {}
        queue.client.send_message(QueueUrl=url, MessageBody=message["Body"], **extra)
    return made


def _runs(
    phases: Phases, quiet: Quiet, queue: Queue, hook: Receiver, who: Identity, n: int, queued: bool
) -> None:
    metrics_id = metric_sets.get_metrics_set(who, "latest").metrics_id
    body = MonitorIn(
        name="prod answers",
        seed_data_id="prod",
        metrics_id=metrics_id,
        schedule="rate(1 hour)",
        webhook_url=hook.url,
        webhook_secret=SIGNING_KEY,
    )
    monitor_id = monitors.create(who, body).monitor_id
    cases = [
        ("the first run (no baseline)", False, 0),
        ("a steady run (compared with the first)", False, 0),
        ("a regressed run (compared, alerted)", True, 0),
    ]
    if queued:
        back = (
            "a run back to the steady answers, its chunk delivered 4 times before its evaluation's"
        )
        cases.append((back, False, 4))
    for title, regressed, held in cases:
        _seed(who, n, regressed)
        phases.take()
        posted = len(hook.posts)
        with quiet.on(), instrumented(phases):
            with phases.phase("claim and start (POST /monitors/{id}/run)"):
                run_id = monitors.run_now(who, monitor_id)
            deliveries = _deliver_run_chunk(queue, held) + queue.drain()
        counts, seconds, times = phases.take()
        parsed = monitor_run.parse_run_id(run_id)
        assert parsed is not None
        ran = store.get_run(who.tenant, *parsed)
        assert ran is not None and ran.status == "complete", ran
        verdicts = Counter(m.verdict for m in ran.metrics)
        alert = "none" if ran.alert is None else f"{ran.alert.status} ({ran.alert.http_status})"
        found = ", ".join(f"{k} {v}" for v, k in sorted(verdicts.items(), key=str))
        _phase_table(
            f"{title}: deliveries {deliveries}, of them waits {times.get(WAITS, 0)}; verdicts: "
            f"{found}; alert: {alert}; posts received: {len(hook.posts) - posted}",
            counts,
            seconds,
        )


def run_run(n: int) -> None:
    quiet = Quiet()
    for queued in (False, True):
        how = "queued" if queued else "inside the run's chunk"
        print(f"## {n} pairs x {len(CHECKS)} checks, the evaluation {how}\n")
        with moto_in_process(), receiver() as hook:
            queue = Queue()
            env = {"EVALSVC_INLINE_MAX_CHECKS": "100"} if queued else {}
            _service(queue, **env)
            who = identity("acme")
            _seed(who, n, regressed=False)
            metrics_id = metric_set_create.create_metrics_set(who, CHECKS).metrics_id
            phases = Phases()
            _plain(phases, quiet, queue, who, metrics_id, queued)
            _runs(phases, quiet, queue, hook, who, n, queued)


# ---- 3. sizes ----------------------------------------------------------------------------------

_RANDOM = random.Random(11)


def wide(chars: int) -> str:
    """`chars` random characters of four UTF-8 bytes each (hard to compress)."""
    return "".join(map(chr, _RANDOM.choices(range(0x10000, 0x110000), k=chars)))


def longest(prefix: str = "") -> str:
    """An id as the service makes them, made as long as an id may be (128 characters)."""
    made = new_id(prefix)
    return made + "x" * (128 - len(made))


@contextmanager
def longest_ids() -> Iterator[None]:
    """The ids of monitors, metrics sets and results made 128 characters long."""
    owners = (monitors, metric_sets, evaluations)
    saved = [owner.new_id for owner in owners]
    for owner in owners:
        owner.new_id = longest
    try:
        yield
    finally:
        for owner, value in zip(owners, saved, strict=True):
            owner.new_id = value


def _schema_check(k: int) -> str:
    """A check of MAX_DEFINITION_CHARS characters, most of them 4-byte: a JSON schema (an
    object) whose description is long. "{}" passes it, "not json" fails it."""
    head = 'check:json_schema:{"type":"object","description":"' + f"{k:02d}"
    tail = '"}'
    return head + wide(MAX_DEFINITION_CHARS - len(head) - len(tail)) + tail


def _raw(tenant: str, sk: str) -> dict[str, Any]:
    item = dynamo.get_item(
        get_settings().monitors_table, {"pk": {"S": store.tenant_pk(tenant)}, "sk": {"S": sk}}
    )
    assert item is not None
    return item


def _share(size: int) -> str:
    return f"{size:,} | {size / ITEM_LIMIT:.1%}"


def _page(who: Identity, monitor_id: str, limit: int, gzip: bool) -> tuple[int, int, bool]:
    """GET /monitors/{id}/history?limit=`limit` as the route answers it: its JSON bytes, the
    bytes sent (gzip when asked for and large), and whether it fits one Lambda response."""
    page = monitors.history(who, monitor_id, limit, None)
    content = {
        "runs": [run_out(run, names).model_dump() for run, names in page.runs],
        "next_cursor": page.next_cursor,
    }
    body = json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode()
    headers = [(b"accept-encoding", b"gzip")] if gzip else []
    sent, compressed = _encoded(Request({"type": "http", "headers": headers}), body)
    return len(body), len(sent), _fits(sent, compressed)


def run_sizes() -> None:
    quiet = Quiet()
    with moto_in_process(), receiver() as hook:
        queue = Queue()
        _service(queue)
        tenant = "t" + "x" * 127
        who = identity(tenant)
        dataset_id = "d" + "x" * 127
        labels = [f"{k:02d}" + wide(MAX_LABEL_CHARS - 2) for k in range(MAX_LABELS)]
        definitions = [_schema_check(k) for k in range(MAX_DEFINITIONS)]

        def seed(regressed: bool) -> None:
            data = [
                PairIn(
                    id=f"p{i:03d}",
                    input=f"q {i}",
                    output="not json" if (i % 3 if regressed else i % 10 == 0) else "{}",
                    labels=labels,
                )
                for i in range(30)
            ]
            datasets.write_seed_dataset(who, dataset_id, SeedDatasetIn(data=data))

        seed(regressed=False)
        query = PairQuery(
            latest_n_pairs=MAX_PAIRS, pair_labels=labels, last_n_seconds=MAX_LAST_N_SECONDS
        )
        with longest_ids():
            metrics_id = metric_set_create.create_metrics_set(who, definitions).metrics_id
            baseline = evaluations.evaluate(
                who,
                EvaluateIn(seed_data_id=dataset_id, metrics_id=metrics_id, pair_query=query),
                Deadline.never(),
            )
            schedule = "0 * * * *"
            widest = MonitorIn(
                name=wide(MAX_NAME_CHARS),
                seed_data_id=dataset_id,
                metrics_id=metrics_id,
                schedule=schedule + "\u3000" * (MAX_SCHEDULE_CHARS - len(schedule)),
                pair_query=query,
                baseline=baseline.results_id,
                alpha=0.012345678901234567,
                regression_threshold=1.2345678901234567e-05,
                max_cost_usd=0.12345678901234568,
                # a URL is ASCII: its widest is 2,000 characters, percent-encoded
                webhook_url=_url("http://127.0.0.1:9/", lambda k: "%F0" * (k // 3)),
                webhook_secret=wide(MAX_SECRET_CHARS),
            )
            created = monitors.create(who, widest)
            # The one that runs: posts to the receiver (an ASCII URL of 2,000 characters),
            # compares with the previous run.
            ascii_url = _url(hook.url + "?", lambda k: "p" * k)
            runner = monitors.create(
                who,
                widest.model_copy(
                    update={"baseline": "previous", "webhook_url": ascii_url}, deep=True
                ),
            )
        item = _raw(tenant, store.monitor_sk(created.monitor_id))
        stored_body = item["body"]["S"]
        print("## The largest items at the field limits (4-byte UTF-8)\n")
        print("| item | what is at its limit | bytes | of 400 KB |")
        print("|---|---|---|---|")
        print(
            f"| monitor (M#) | name 200, webhook URL 2,000, secret 256, schedule 200, 32 labels "
            f"of 128, ids 128 | {_share(dynamo.item_size(item))} |"
        )
        print(
            f"| its `body` attribute | JSON, UTF-8: {len(stored_body.encode()):,} bytes "
            f"(with non-ASCII escaped it would be "
            f"{len(json.dumps(json.loads(stored_body)).encode()):,}) | "
            f"{_share(len(stored_body.encode()))} |"
        )

        # A run record with every field at once: 50 metrics, the longest verdict, a failure of
        # 2,000 4-byte characters, result and baseline ids of 128, its alert pending, then
        # leased, then failed after 3 attempts.
        scheduled = T0
        assert commit(store.claiming(tenant, created.monitor_id, scheduled, None, None))
        sk = store.run_sk(created.monitor_id, scheduled)
        failure = wide(store.MAX_FAILURE_CHARS)
        run = Run(
            tenant,
            created.monitor_id,
            scheduled,
            "failed",
            manual=True,
            result_id=baseline.results_id,
            baseline_id=longest("ev_"),
            metrics=[
                RunMetric(
                    k,
                    -1.2345678901234567e-300,
                    -1.2345678901234567e-300,
                    -1.2345678901234567e-300,
                    "no_significant_difference",
                )
                for k in range(MAX_DEFINITIONS)
            ],
            definitions_sha256=definitions_sha256(definitions),
            pairs_matched=MAX_PAIRS,
            cost_usd="0.12345678901234567890",
            failure=failure,
        )
        assert commit(store.ending(run, scheduled + 1, alert=True))
        ended = dynamo.item_size(_raw(tenant, sk))
        leased = store.lease_alert(tenant, created.monitor_id, scheduled, scheduled + 1, T0 * 2)
        assert leased is not None
        leased_size = dynamo.item_size(_raw(tenant, sk))
        store.alert_outcome(tenant, created.monitor_id, scheduled, "failed", 3, 503)
        failed_size = dynamo.item_size(_raw(tenant, sk))
        what = "50 metrics, failure 2,000, ids 128"
        print(f"| run record (R#), ended: alert pending | {what} | {_share(ended)} |")
        print(f"| the same, its alert leased | {what} | {_share(leased_size)} |")
        print(f"| the same, its alert failed (HTTP 503) | {what} | {_share(failed_size)} |")

        # A real run that regressed on all 50 metrics, alerted to the receiver.
        seed(regressed=False)
        with quiet.on():
            first_id = monitors.run_now(who, runner.monitor_id)
            queue.drain()
        seed(regressed=True)
        with quiet.on():
            second_id = monitors.run_now(who, runner.monitor_id)
            queue.drain()
        sizes = []
        for run_id in (first_id, second_id):
            parsed = monitor_run.parse_run_id(run_id)
            assert parsed is not None
            sizes.append(dynamo.item_size(_raw(tenant, store.run_sk(*parsed))))
            regressed_run = store.get_run(tenant, *parsed)
        assert regressed_run is not None and len(regressed_run.regressed) == MAX_DEFINITIONS
        print(
            f"| run record, a real first run (complete) | 50 metrics, no baseline | "
            f"{_share(sizes[0])} |"
        )
        print(
            f"| run record, a real run that regressed on 50 metrics, alert delivered | "
            f"50 metrics, verdicts | {_share(sizes[1])} |\n"
        )
        [posted] = hook.posts
        bound = Run(**{**_fields(run), "metrics": _regressed(run.metrics)})
        largest = json.dumps(
            monitor_alerts.body_of(bound), separators=(",", ":"), ensure_ascii=False
        ).encode()
        print("## Alert bodies (posted, not stored)\n")
        print("| alert | bytes |")
        print("|---|---|")
        print(
            f"| the real run's: 50 regressed metrics of 2,000 characters | {len(posted.body):,} |"
        )
        print(
            f"| the most one holds: 50 regressed of 2,000, failure of 2,000, ids 128 | "
            f"{len(largest):,} |\n"
        )

        # The history of such runs: 20 (the default page) like the record above.
        for k in range(1, 20):
            at = scheduled + k * MINUTE_MS
            last = at - MINUTE_MS
            assert commit(store.claiming(tenant, created.monitor_id, at, None, last))
            again = Run(**{**_fields(run), "scheduled_ms": at})
            assert commit(store.ending(again, at + 1, alert=False))
        print("## GET /monitors/{id}/history of runs at the limits (20 stored)\n")
        print("| limit | JSON bytes | sent without gzip: fits? | sent with gzip (bytes): fits? |")
        print("|---|---|---|---|")
        for limit in (1, 5, 6, 15, 16, 20):
            size, _, plain_fits = _page(who, created.monitor_id, limit, gzip=False)
            _, zipped, zipped_fits = _page(who, created.monitor_id, limit, gzip=True)
            print(
                f"| {limit} | {size:,} | {'yes' if plain_fits else 'no: 413'} | {zipped:,}: "
                f"{'yes' if zipped_fits else 'no: 413'} |"
            )
        print(
            f"\n(Lambda's limit as the service counts it: {MAX_RESPONSE_BYTES:,} bytes, with the "
            "body escaped as a JSON string when not compressed, base64 when compressed)"
        )


def _url(start: str, fill: Callable[[int], str]) -> str:
    return start + fill(MAX_URL_CHARS - len(start))


def _fields(run: Run) -> dict[str, Any]:
    return {name: getattr(run, name) for name in Run.__dataclass_fields__}


def _regressed(found: list[RunMetric]) -> list[RunMetric]:
    return [RunMetric(m.index, m.mean, m.ci_low, m.ci_high, "regressed") for m in found]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    dispatch = commands.add_parser("dispatch")
    dispatch.add_argument("--due", type=int, action="append")
    dispatch.add_argument("--tenants", type=int, default=10)
    run = commands.add_parser("run")
    run.add_argument("--pairs", type=int, default=200)
    commands.add_parser("sizes")
    args = parser.parse_args()
    if args.command == "dispatch":
        run_dispatch(args.due or [10, 100, 1000], args.tenants)
    elif args.command == "run":
        run_run(args.pairs)
    else:
        run_sizes()


if __name__ == "__main__":
    main()
