"""`evalsvc serve`: the whole API (the same routers as the Lambdas) on uvicorn under /v1, backed
by the embedded DynamoDB."""

from __future__ import annotations

import os
import secrets
import signal
import sys
from pathlib import Path

import uvicorn

from evalsvc.api.app import create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.local.store import EmbeddedDynamoDB
from evalsvc.local.workers import LocalWorkers
from evalsvc.logic import api_keys, augment_jobs, evaluation_jobs
from evalsvc.settings import reset_settings
from evalsvc.storage import work_queue
from evalsvc.storage.dynamo import reset_clients

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


def serve(host: str, port: int, dynamodb_port: int, data_dir: Path) -> None:
    store = EmbeddedDynamoDB(data_dir, host=host, port=dynamodb_port)
    apply_environment(store.start())
    workers = LocalWorkers(
        store.sqs_client(),
        store.queues["WorkQueue"],
        store.queues["WorkDeadLetterQueue"],
        workers=int(os.environ.get("EVALSVC_LOCAL_WORKERS", "2")),
    )
    try:
        # The queue is not saved with the tables: work queued before the last stop is gone.
        stale = evaluation_jobs.fail_abandoned(
            "the local server stopped while this evaluation ran; evaluate again"
        ) + augment_jobs.fail_abandoned(
            "the local server stopped while this dataset was generated; augment again"
        )
        if stale:
            print(f"{stale} job(s) left running at the last stop marked failed", flush=True)
        workers.start()
        key = dev_key(data_dir)
        api_keys.ensure_key(DEV_TENANT, DEV_USER, DEV_EMAIL, key)
        app = create_versioned_app(all_routers())
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
        server = uvicorn.Server(config)
        base = f"http://{host}:{port}/v1"
        print(f"evalsvc serving {base}  (docs: {base}/docs)", flush=True)
        print(f"embedded DynamoDB at {store.endpoint}, data in {data_dir}", flush=True)
        print(f"dev API key (tenant {DEV_TENANT!r}, user {DEV_USER!r}):", flush=True)
        print(key, flush=True)
        # uvicorn stops gracefully on SIGINT/SIGTERM, then raises the signal again once its own
        # handlers are gone; these no-op handlers let the store be saved after that.
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: None)
        server.run()
    finally:
        workers.stop()
        store.stop()
        print("evalsvc stopped; data saved", file=sys.stderr, flush=True)
