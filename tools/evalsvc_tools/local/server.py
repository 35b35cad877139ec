"""`evalsvc serve`: the whole API (the same routers as the Lambdas) on uvicorn under /v1, backed
by the embedded DynamoDB."""

from __future__ import annotations

import gc
import os
import secrets
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import uvicorn
from evalsvc.api.app import create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.core.identifiers import now_ms
from evalsvc.core.settings import reset_settings
from evalsvc.logic import api_keys, jobs, monitors
from evalsvc.storage import work_queue
from evalsvc.storage.dynamo import reset_clients

from evalsvc_tools.local.review_app import mount_review_app
from evalsvc_tools.local.store import EmbeddedDynamoDB
from evalsvc_tools.local.workers import LocalWorkers, local_worker_counts

DEV_TENANT = "local"
DEV_USER = "dev"
DEV_EMAIL = "dev@localhost"


def apply_environment(env: dict[str, str]) -> None:
    """Point this process's service code at the embedded store."""
    os.environ.update(env)
    reset_settings()
    reset_clients()
    work_queue.reset_clients()
    api_keys.clear_cache()
    # Only if it was ever imported: importing it here would cost every process its start-up.
    if "evalsvc.api.idempotency" in sys.modules:
        sys.modules["evalsvc.api.idempotency"].reset()
    if "evalsvc.scoring.llm.credentials" in sys.modules:
        sys.modules["evalsvc.scoring.llm.credentials"].reset()


def dev_key(data_dir: Path) -> str:
    """EVALSVC_DEV_API_KEY when set; otherwise the key generated on first start, kept in the
    data directory so clients keep working across restarts."""
    explicit = os.environ.get("EVALSVC_DEV_API_KEY")
    if explicit:
        return explicit
    path = data_dir / "dev-api-key"
    if path.exists():
        return path.read_text().strip()
    key = api_keys.KEY_PREFIX + secrets.token_urlsafe(32)
    path.touch(mode=0o600)
    path.write_text(key + "\n")
    return key


class Ticker:
    """Does `action` every `seconds` on a thread of its own, as a schedule does deployed (the
    sweeper every 5 minutes, the monitors' dispatcher every minute): a round that fails is
    reported and the next tries again."""

    def __init__(self, name: str, seconds: float, action: Callable[[], object]) -> None:
        self.name = name
        self.seconds = seconds
        self.action = action
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.seconds):
            try:
                self.action()
            except Exception as exc:  # the next round tries again
                print(f"{self.name} failed: {exc!r}", file=sys.stderr, flush=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


def sweeper(seconds: float) -> Ticker:
    """Stalled jobs swept (logic.jobs.sweep)."""
    return Ticker("sweeping stalled jobs", seconds, jobs.sweep)


def dispatcher(seconds: float) -> Ticker:
    """The monitors' due runs claimed and started, alerts left pending delivered
    (logic.monitors.dispatch): the local server's own clock drives the same dispatcher."""
    return Ticker("dispatching monitors", seconds, lambda: monitors.dispatch(now_ms()))


def serve(host: str, port: int, dynamodb_port: int, data_dir: Path) -> None:
    store = EmbeddedDynamoDB(
        data_dir, host=host, port=dynamodb_port, progress=lambda line: print(line, flush=True)
    )
    env = store.start()
    # What was loaded lives as long as the process: keep the collector from walking it again.
    gc.freeze()
    # This process's clients call the store directly; other processes use its endpoint.
    store.attach_in_process()
    # The embedded store serves one request at a time: spreading a dataset over partitions, or
    # sending batch writes at once, only adds work here.
    local = {"EVALSVC_DATASET_SHARDS": "1", "EVALSVC_WRITE_THREADS": "1"}
    apply_environment({**env, **{k: os.environ.get(k, v) for k, v in local.items()}})
    workers = LocalWorkers(
        store.sqs_client(),
        store.queues["WorkQueue"],
        store.queues["WorkDeadLetterQueue"],
        **local_worker_counts(os.environ),
    )
    clocks = [
        sweeper(float(os.environ.get("EVALSVC_SWEEP_SECONDS", "60"))),
        dispatcher(float(os.environ.get("EVALSVC_DISPATCH_SECONDS", "60"))),
    ]
    try:
        # The queue is not kept with the tables: every job left running at the last stop has
        # its unfinished chunks queued again from its own state (however many restarts came
        # in a row); then stalled jobs are swept on a timer, as the scheduled sweeper does
        # deployed.
        resumed = jobs.sweep(restart=True)
        if resumed.resumed_jobs:
            print(
                f"{resumed.resumed_jobs} job(s) left running at the last stop queued again",
                flush=True,
            )
        for clock in clocks:
            clock.start()
        workers.start()
        key = dev_key(data_dir)
        api_keys.ensure_key(DEV_TENANT, DEV_USER, DEV_EMAIL, key)
        app = create_versioned_app(all_routers())
        mount_review_app(app)
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_level="warning",
            access_log=False,
            # A stop waits this long for requests in flight; what they had written is on disk.
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        base = f"http://{host}:{port}/v1"
        print(f"evalsvc serving {base}  (API reference: {base}/docs)", flush=True)
        print(f"review app: http://{host}:{port}/app/", flush=True)
        print(f"embedded DynamoDB at {store.endpoint}, data in {data_dir}", flush=True)
        print(f"dev API key (tenant {DEV_TENANT!r}, user {DEV_USER!r}):", flush=True)
        print(key, flush=True)
        # uvicorn stops gracefully on SIGINT/SIGTERM, then raises the signal again once its own
        # handlers are gone; these no-op handlers let the store be closed after that.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: None)
        server.run()
    finally:
        for clock in clocks:
            clock.stop()
        # A chunk still running is abandoned: what it wrote is on disk, and the next start
        # queues what it had left.
        workers.stop(timeout=1.0)
        store.stop()
        print("evalsvc stopped", file=sys.stderr, flush=True)
