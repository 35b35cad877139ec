"""An embedded DynamoDB (and SQS) for the local run: moto's server in this process, listening
on 127.0.0.1, with the tables and queues of template.yaml; the tables are saved to disk.

Persistence: every `interval` seconds after a write, all tables are written to
`<data_dir>/snapshot.jsonl` (a temporary file, fsynced, then renamed over the old one), and once
more on a clean stop. A kill loses at most the writes of the last interval.
"""

from __future__ import annotations

import base64
import fcntl
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from evalsvc.storage.dynamo import batch_write
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import BaseWSGIServer, make_server

from evalsvc_tools.local.tables import create_queues, create_tables, queue_env_vars

TABLE_PREFIX = "evalsvc-local"
SNAPSHOT = "snapshot.jsonl"
_WRITES = frozenset(
    {
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactWriteItems",
        "CreateTable",
        "DeleteTable",
        "UpdateTable",
    }
)
LOCAL_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}


class StoreBusy(Exception):
    """Another process already serves this data directory."""


def _encode(value: Any) -> Any:
    """DynamoDB JSON with binary values as base64 text, for the snapshot file."""
    if isinstance(value, bytes):
        return {"__b64__": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"__b64__"}:
            return base64.b64decode(value["__b64__"])
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


class _SerializedBackend:
    """WSGI middleware in front of moto: one request at a time (moto's in-memory tables are not
    safe under concurrent writes), counting the write operations so snapshots happen only
    after one."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.writes = 0
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        target = environ.get("HTTP_X_AMZ_TARGET", "")
        with self._lock:
            if target.rpartition(".")[2] in _WRITES:
                self.writes += 1
            return list(self.app(environ, start_response))


class EmbeddedDynamoDB:
    def __init__(
        self,
        data_dir: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        interval: float = 2.0,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.host = host
        self.port = port
        self.interval = interval
        self._server: BaseWSGIServer | None = None
        self._counter: _SerializedBackend | None = None
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._saved_writes = 0
        self._save_lock = threading.Lock()
        self._lock_file: Any = None
        self.env: dict[str, str] = {}
        self.tables: dict[str, str] = {}
        self.queues: dict[str, str] = {}

    @property
    def endpoint(self) -> str:
        assert self._server is not None, "start() first"
        return f"http://{self.host}:{self._server.server_port}"

    def _client(self, service: str) -> Any:
        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name=LOCAL_CREDENTIALS["AWS_REGION"],
            aws_access_key_id=LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=LOCAL_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            config=Config(retries={"mode": "standard", "max_attempts": 3}),
        )

    def client(self) -> Any:
        return self._client("dynamodb")

    def sqs_client(self) -> Any:
        return self._client("sqs")

    def start(self) -> dict[str, str]:
        """Start serving; returns the environment that points the service at this store."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._lock_file = (self.data_dir / "lock").open("w")
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            self._lock_file.close()
            raise StoreBusy(f"{self.data_dir} is in use by another evalsvc process") from exc
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        self._counter = _SerializedBackend(DomainDispatcherApplication(create_backend_app))
        try:
            self._server = make_server(
                self.host,
                self.port,
                self._counter,
                threaded=True,
                request_handler=MotoRequestHandler,
            )
        except OSError as exc:
            self._release_lock()
            raise OSError(
                f"cannot listen on {self.host}:{self.port} for the embedded DynamoDB ({exc}); "
                "set EVALSVC_DYNAMODB_PORT to a free port"
            ) from exc
        serve = threading.Thread(target=self._server.serve_forever, name="dynamodb", daemon=True)
        serve.start()
        self._threads.append(serve)
        client = self.client()
        self.tables = create_tables(client, TABLE_PREFIX)
        self._load(client)
        self._saved_writes = self._counter.writes
        self.queues = create_queues(self.sqs_client(), TABLE_PREFIX)
        queue_vars = {var: self.queues[ref] for var, ref in queue_env_vars().items()}
        self.env = {
            **LOCAL_CREDENTIALS,
            **self.tables,
            **queue_vars,
            "DYNAMODB_ENDPOINT_URL": self.endpoint,
            "SQS_ENDPOINT_URL": self.endpoint,
        }
        (self.data_dir / "endpoint").write_text(self.endpoint)
        saver = threading.Thread(target=self._save_periodically, name="snapshot", daemon=True)
        saver.start()
        self._threads.append(saver)
        return self.env

    def stop(self) -> None:
        """Save what changed, then stop serving."""
        self._stopping.set()
        try:
            self.save()
        finally:
            if self._server is not None:
                self._server.shutdown()
                self._server.server_close()
            for thread in self._threads:
                thread.join(timeout=5)
            (self.data_dir / "endpoint").unlink(missing_ok=True)
            self._release_lock()

    def _release_lock(self) -> None:
        if self._lock_file is not None:
            fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            self._lock_file.close()
            self._lock_file = None

    def __enter__(self) -> EmbeddedDynamoDB:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- snapshots -------------------------------------------------------------------------

    def _save_periodically(self) -> None:
        while not self._stopping.wait(self.interval):
            self.save()

    def save(self) -> bool:
        """Write every table to the snapshot if anything was written since the last save."""
        assert self._counter is not None
        with self._save_lock:
            writes = self._counter.writes
            if writes == self._saved_writes:
                return False
            path = self.data_dir / SNAPSHOT
            tmp = path.with_suffix(".tmp")
            with tmp.open("w") as handle:
                for line in self._dump_lines(self.client()):
                    handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            tmp.replace(path)
            self._saved_writes = writes
            return True

    def _dump_lines(self, client: Any) -> Iterator[str]:
        for env_var, table in sorted(self.tables.items()):
            for page in client.get_paginator("scan").paginate(TableName=table):
                for item in page.get("Items", []):
                    yield json.dumps({"table": env_var, "item": _encode(item)}) + "\n"

    def _load(self, client: Any) -> None:
        path = self.data_dir / SNAPSHOT
        if not path.exists():
            return
        batches: dict[str, list[dict[str, Any]]] = {}
        with path.open() as handle:
            for line in handle:
                if not line.strip():
                    continue
                record = json.loads(line)
                table = self.tables.get(record["table"])
                if table is None:
                    continue
                batches.setdefault(table, []).append(
                    {"PutRequest": {"Item": _decode(record["item"])}}
                )
        for table, requests in batches.items():
            batch_write(table, requests, via=client)
