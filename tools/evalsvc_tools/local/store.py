"""An embedded DynamoDB (and SQS) for the local run: moto in this process, listening on
127.0.0.1 for other processes (`evalsvc ... --local`) and called directly by this one, with the
tables and queues of template.yaml. The tables are kept on disk by a write-ahead journal.

Durability: every write the store acknowledges is in the journal, fsynced, before its response
leaves; so is every write a read could have seen (a read waits for the writes before it). A
journal that cannot be written (disk full, read-only) undoes the writes not on disk and answers
503 (ServiceUnavailable); reads go on. Snapshots are compacted from the journal files by a child
process; a stop only closes the journal. Queues are not kept: jobs left running are queued again
from their own state at start (`evalsvc serve`).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import BaseWSGIServer, make_server

from evalsvc_tools.local import fastpath
from evalsvc_tools.local.direct_calls import direct_caller
from evalsvc_tools.local.front import Front
from evalsvc_tools.local.item_images import load_item, replay_item
from evalsvc_tools.local.journal import (
    SNAPSHOT,
    Journal,
    Replay,
    StoreBusy,
    StoreFileError,
    binary_values,
    decode_item,
    fsync_directory,
    read_records,
    read_snapshot,
    segment_path,
    segments,
)
from evalsvc_tools.local.tables import create_queues, create_tables, queue_env_vars

TABLE_PREFIX = "evalsvc-local"
LOCAL_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "local",
    "AWS_SECRET_ACCESS_KEY": "local",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
}
# A snapshot is compacted once the journal since the last one outgrows it this many times
# (and at least COMPACT_MIN_BYTES): replaying the journal at start then costs at most about
# as much as loading the snapshot.
COMPACT_RATIO = 1.0
COMPACT_MIN_BYTES = 64 * 1024 * 1024
Progress = Callable[[str], None]
__all__ = ["EmbeddedDynamoDB", "StoreBusy", "StoreFileError"]


class EmbeddedDynamoDB:
    def __init__(
        self,
        data_dir: Path,
        *,
        host: str = "127.0.0.1",
        port: int = 8000,
        progress: Progress | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.host = host
        self.port = port
        self.progress = progress or (lambda line: None)
        self._server: BaseWSGIServer | None = None
        self._front: Front | None = None
        self._threads: list[threading.Thread] = []
        self._lock_file: Any = None
        self._compaction: subprocess.Popen[bytes] | None = None
        self._compaction_lock = threading.Lock()
        self._stopping = False
        self._snapshot_bytes = 0
        self._in_process: Callable[..., Any] | None = None
        self._fastpath = False
        self.env: dict[str, str] = {}
        self.tables: dict[str, str] = {}
        self.queues: dict[str, str] = {}
        self.replay = Replay()

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

    @property
    def journal(self) -> Journal | None:
        return self._front.journal if self._front is not None else None

    # ---- start and stop ----------------------------------------------------------------------

    def start(self) -> dict[str, str]:
        """Load the data and start serving; returns the environment that points the service at
        this store. StoreFileError if the data directory cannot be used."""
        self._open_data_dir()
        try:
            return self._start()
        except BaseException:
            self._shutdown()
            raise

    def _open_data_dir(self) -> None:
        directory = self.data_dir
        try:
            directory.mkdir(parents=True, exist_ok=True)
            self._lock_file = (directory / "lock").open("a")
        except OSError as exc:
            raise StoreFileError(
                f"cannot use the data directory {directory} ({exc.strerror or exc}): make it "
                "writable, or point EVALSVC_DATA_DIR at one that is"
            ) from exc
        try:
            fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            self._lock_file.close()
            self._lock_file = None
            raise StoreBusy(f"{directory} is in use by another evalsvc process") from exc
        probe = directory / "write-probe"
        try:
            with probe.open("wb") as handle:
                handle.write(b"probe")
                handle.flush()
                os.fsync(handle.fileno())
            probe.unlink()
        except OSError as exc:
            self._release_lock()
            raise StoreFileError(
                f"the data directory {directory} cannot be written ({exc.strerror or exc}): free "
                "space or fix its permissions, or point EVALSVC_DATA_DIR elsewhere"
            ) from exc

    def _start(self) -> dict[str, str]:
        # moto is patched while this store runs, and only then (fastpath.uninstall at stop).
        self._fastpath = fastpath.install()
        logging.getLogger("werkzeug").setLevel(logging.WARNING)
        self._front = Front(DomainDispatcherApplication(create_backend_app))
        try:
            self._server = make_server(
                self.host,
                self.port,
                self._front,
                threaded=True,
                request_handler=MotoRequestHandler,
            )
        except OSError as exc:
            raise OSError(
                f"cannot listen on {self.host}:{self.port} for the embedded DynamoDB ({exc}); "
                "set EVALSVC_DYNAMODB_PORT to a free port"
            ) from exc
        serve = threading.Thread(target=self._server.serve_forever, name="dynamodb", daemon=True)
        serve.start()
        self._threads.append(serve)
        client = self.client()
        self.tables = create_tables(client, TABLE_PREFIX)
        self._front.backend = self._find_backend()
        # Loading makes an object or more for every attribute value stored; none of them is
        # garbage, so the collector's passes over them while they accumulate are wasted.
        collecting = gc.isenabled()
        gc.disable()
        try:
            number = self._load(client)
        finally:
            if collecting:
                gc.enable()
        for name in self.tables.values():
            fastpath.track(self._front.table(name))
        self._front.journal = Journal(
            self.data_dir,
            number,
            undo=self._front.undo,
            store_lock=self._front.lock,
            rotate_when=self._rotate_when,
            rotated=self._compact,
        )
        self.queues = create_queues(self.sqs_client(), TABLE_PREFIX)
        queue_vars = {var: self.queues[ref] for var, ref in queue_env_vars().items()}
        self.env = {
            **LOCAL_CREDENTIALS,
            **self.tables,
            **queue_vars,
            "EVALSVC_DYNAMODB_ENDPOINT_URL": self.endpoint,
            "EVALSVC_SQS_ENDPOINT_URL": self.endpoint,
        }
        (self.data_dir / "endpoint").write_text(self.endpoint)
        return self.env

    def stop(self) -> None:
        """Stop serving and close the journal (everything acknowledged is on disk already)."""
        self._shutdown()

    def _shutdown(self) -> None:
        self.detach_in_process()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        for thread in self._threads:
            thread.join(timeout=2)
        self._threads.clear()
        if self._front is not None and self._front.journal is not None:
            # Not under the store lock: a write failing now undoes itself under that lock. A
            # write arriving after this is refused (503) and not acknowledged.
            self._front.journal.close()
        if self._compaction is not None and self._compaction.poll() is None:
            # A snapshot half written is only a temporary file: the next start removes it.
            self._stopping = True
            self._compaction.kill()
            self._compaction.wait()
        with contextlib.suppress(OSError):
            (self.data_dir / "endpoint").unlink(missing_ok=True)
        if self._fastpath:
            # Under the store lock: no request is inside moto while its patches come off.
            self._fastpath = False
            with self._front.lock if self._front is not None else contextlib.nullcontext():
                fastpath.uninstall()
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

    def _find_backend(self) -> Any:
        from moto.dynamodb.models import dynamodb_backends

        name = next(iter(self.tables.values()))
        region = LOCAL_CREDENTIALS["AWS_REGION"]
        for account in list(dynamodb_backends):
            backend = dynamodb_backends[account][region]
            if name in backend.tables:
                return backend
        raise RuntimeError(f"the embedded store lost its table {name}")

    # ---- loading -------------------------------------------------------------------------------

    def _load(self, client: Any) -> int:
        """Load the snapshot and replay the journal after it, straight into moto; the number of
        the segment to append to next."""
        assert self._front is not None
        directory = self.data_dir
        (directory / (SNAPSHOT + ".tmp")).unlink(missing_ok=True)
        replay = self.replay
        snapshot = read_snapshot(directory, replay)
        first = snapshot.journal if snapshot is not None else 0
        numbers = [n for n in segments(directory) if n >= first]
        total = sum(segment_path(directory, n).stat().st_size for n in numbers)
        snapshot_path = directory / SNAPSHOT
        self._snapshot_bytes = snapshot_path.stat().st_size if snapshot is not None else 0
        total += self._snapshot_bytes
        if total > 0:
            self.progress(f"loading {total / 1e6:.1f} MB of data from {directory}")
        started = last_line = time.monotonic()

        def tick() -> None:
            nonlocal last_line
            now = time.monotonic()
            if now - last_line >= 2.0:
                last_line = now
                self.progress(
                    f"  loaded {replay.items} items and {replay.records} journal records "
                    f"({now - started:.0f} s)"
                )

        tables: dict[str, Any] = {}

        def table(name: str) -> Any:
            if name not in tables:
                try:
                    tables[name] = self._front.table(name)  # type: ignore[union-attr]
                except Exception:
                    tables[name] = None  # a table no longer in the template: its items go
            return tables[name]

        if snapshot is not None:
            for request in snapshot.tables:
                self._table_request(client, request)
            for count, (name, _, item) in enumerate(snapshot.lines):
                found = table(name)
                if found is not None:
                    load_item(found, decode_item(item))
                if count % 4096 == 0:
                    tick()
        for position, number in enumerate(numbers):
            last = position == len(numbers) - 1
            path = segment_path(directory, number)
            for payload, binary in read_records(path, last=last, replay=replay):
                if "t" in payload:
                    self._table_request(client, payload["t"])
                    tables.clear()
                    continue
                for name, key, image in payload["i"]:
                    found = table(name)
                    if found is not None:
                        if binary:
                            key, image = binary_values(key), binary_values(image)
                        replay_item(found, key, image)
                if replay.records % 1024 == 0:
                    tick()
        for line in replay.torn:
            print(f"evalsvc: {line}", file=sys.stderr, flush=True)
        if total > 0:
            self.progress(
                f"loaded {replay.items} items and {replay.records} journal records in "
                f"{time.monotonic() - started:.1f} s"
            )
        for number in segments(directory):
            if number < first:
                segment_path(directory, number).unlink()
        return max([first - 1, *numbers]) + 1

    def _table_request(self, client: Any, request: list[Any]) -> None:
        """Replay a table change (CreateTable…) through the API; one that no longer applies
        (a table of the template, already there) is skipped."""
        from botocore import xform_name
        from botocore.exceptions import ClientError

        operation, body = request
        with contextlib.suppress(ClientError):
            getattr(client, xform_name(operation))(**body)

    # ---- compaction ----------------------------------------------------------------------------

    def _rotate_when(self, journal_bytes: int) -> bool:
        if self._compaction is not None and self._compaction.poll() is None:
            return False
        return journal_bytes > max(COMPACT_MIN_BYTES, COMPACT_RATIO * self._snapshot_bytes)

    def _compact(self, upto: int) -> None:
        """Build a snapshot of everything before segment `upto` in a child process (files only:
        writes go on meanwhile), then drop the segments it holds."""
        with self._compaction_lock:
            if self._compaction is not None and self._compaction.poll() is None:
                return
            command = [sys.executable, "-m", "evalsvc_tools.local.journal", "compact"]
            self._compaction = subprocess.Popen(  # noqa: S603 - this interpreter, our module
                [*command, str(self.data_dir), str(upto)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            child = self._compaction
        watcher = threading.Thread(
            target=self._compacted, args=(child, upto), name="compaction", daemon=True
        )
        watcher.start()

    def _compacted(self, child: subprocess.Popen[bytes], upto: int) -> None:
        _, errors = child.communicate()
        if self._stopping:
            return  # stopped by the stop: the next start removes its temporary file
        if child.returncode != 0:
            message = errors.decode(errors="replace").strip().splitlines()[-1:] or ["killed"]
            print(f"evalsvc: compacting the journal failed: {message[0]}", file=sys.stderr)
            return
        self._snapshot_bytes = (self.data_dir / SNAPSHOT).stat().st_size
        for number in segments(self.data_dir):
            if number < upto:
                segment_path(self.data_dir, number).unlink(missing_ok=True)
        fsync_directory(self.data_dir)

    # ---- in-process calls ------------------------------------------------------------------------

    def attach_in_process(self) -> None:
        """Let this process's boto3 clients for the store call it directly, rather than over
        HTTP (direct_calls.py): handed to the same front door, one at a time, writes
        journaled."""
        assert self._front is not None
        call = direct_caller(
            self._front,
            self.endpoint,
            LOCAL_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            LOCAL_CREDENTIALS["AWS_REGION"],
        )
        events = boto3._get_default_session().events
        for service in ("dynamodb", "sqs"):
            events.register(f"before-call.{service}", call, unique_id=f"evalsvc-local-{service}")
        self._in_process = call

    def detach_in_process(self) -> None:
        if self._in_process is None:
            return
        events = boto3._get_default_session().events
        for service in ("dynamodb", "sqs"):
            events.unregister(f"before-call.{service}", unique_id=f"evalsvc-local-{service}")
        self._in_process = None
