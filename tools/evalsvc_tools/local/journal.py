"""The embedded store's files: a write-ahead journal and a snapshot, in the data directory.

- `journal-<n>.log` (segments): one line per acknowledged write request, `<crc32> <json>`, the
  JSON holding the images of the items the request left behind (`null` for a deleted item), or
  a table request. A write is appended and fsynced before its response leaves (`Journal.wait`);
  requests arriving while one fsync runs share the next (group commit).
- `snapshot.jsonl`: every item at the start of segment `journal`, one `<table>\t<key>\t<item>`
  line each, between a header and a trailer that counts them.

The state is the snapshot plus the segments from its `journal` on, replayed in order. Images
are idempotent, so a snapshot is built from files alone (`compact`, in a child process) while
writes go on into a new segment. A torn last record (a crash mid-append) is dropped, with a log
line; anything else unreadable stops the start with a message naming the file.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import re
import sys
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1
SNAPSHOT = "snapshot.jsonl"
_SEGMENT = re.compile(r"^journal-(\d{8})\.log$")
_HEADER = {"evalsvc_journal": FORMAT}

# What a response waits for: (the last record applied before it, failures seen by then).
Ticket = tuple[int, int]


class StoreFileError(Exception):
    """The data directory cannot be used as it is: the message names the file and the fix."""


class StoreBusy(StoreFileError):
    """Another process already serves this data directory."""


class JournalFailed(Exception):
    """A write could not be made durable; it was undone and must not be acknowledged."""


def segment_path(directory: Path, number: int) -> Path:
    return directory / f"journal-{number:08d}.log"


def segments(directory: Path) -> list[int]:
    """The journal segments in `directory`, oldest first."""
    found = (_SEGMENT.match(path.name) for path in directory.iterdir())
    return sorted(int(match.group(1)) for match in found if match)


def fsync_directory(directory: Path) -> None:
    """Make a file created or renamed in `directory` survive a crash."""
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _binary(value: Any) -> str:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    raise TypeError(f"cannot journal a {type(value).__name__}")


def encode_record(payload: dict[str, Any]) -> bytes:
    """One journal line. Binary attribute values are written as base64 text."""
    body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False, default=_binary)
    # A string may hold a lone surrogate (JSON allows "\ud800"): kept as it is, both ways.
    data = body.encode("utf-8", "surrogatepass")
    return b"%08x %s\n" % (zlib.crc32(data), data)


def decode_item(text: str | dict[str, Any]) -> dict[str, Any]:
    """An item image as moto keeps it: binary values (base64 text in the files) as bytes."""
    item: dict[str, Any] = json.loads(text) if isinstance(text, str) else text
    if isinstance(text, str) and '"B' not in text:
        return item
    return {name: binary_values(value) for name, value in item.items()}


def binary_values(value: Any) -> Any:
    """Binary values (base64 text in JSON) as bytes, in an attribute value ({type: value}) or
    anything holding attribute values, at any depth: as moto keeps them and botocore returns
    them."""
    if isinstance(value, dict):
        if len(value) == 1:
            kind, inner = next(iter(value.items()))
            if kind == "B" and isinstance(inner, str):
                return {"B": base64.b64decode(inner)}
            if kind == "BS" and isinstance(inner, list):
                return {"BS": [base64.b64decode(v) if isinstance(v, str) else v for v in inner]}
        return {k: binary_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [binary_values(v) for v in value]
    return value


def key_text(key: dict[str, Any]) -> str:
    """One key's identity. Every table of the template has string or binary keys, whose JSON
    form is canonical once the attribute names are sorted."""
    return json.dumps(key, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---- reading ---------------------------------------------------------------------------------


@dataclass
class Replay:
    """What a start read: for the progress line and the log."""

    items: int = 0
    records: int = 0
    torn: list[str] = field(default_factory=list)


def read_segment(path: Path, *, last: bool, replay: Replay) -> Iterator[dict[str, Any]]:
    """The records of one segment. A bad record at the very end of the last segment is a torn
    append: it is dropped (and cut off the file, so appends never follow it)."""
    for payload, _ in read_records(path, last=last, replay=replay):
        yield payload


def read_records(
    path: Path, *, last: bool, replay: Replay
) -> Iterator[tuple[dict[str, Any], bool]]:
    """`read_segment`, each record with whether it may hold binary values (base64 text in the
    file, to be turned into bytes by `binary_values`): a record without them is read as it is."""
    with path.open("rb") as handle:
        data = handle.read()
    header_end = data.find(b"\n")
    if header_end < 0:
        if last:
            # Created, then the crash came before its header was written: nothing in it.
            replay.torn.append(f"{path}: a segment without its header (nothing in it) removed")
            path.unlink()
            return
        raise StoreFileError(f"{path} has no header: move it out of the data directory")
    try:
        header = json.loads(data[:header_end])
    except ValueError:
        header = None
    if header != _HEADER:
        raise StoreFileError(
            f"{path} is not a journal this version reads (header {data[:header_end][:80]!r}, "
            f"expected {json.dumps(_HEADER)}): start with the version that wrote it, or move "
            "the data directory aside to start empty"
        )
    offset = header_end + 1
    while offset < len(data):
        end = data.find(b"\n", offset)
        line = data[offset:end] if end >= 0 else data[offset:]
        payload = _decode(line)
        if payload is None:
            if last and end in (-1, len(data) - 1):
                replay.torn.append(
                    f"{path}: a torn last record of {len(line)} bytes at byte {offset} dropped "
                    "(the process stopped while appending it; it was never acknowledged)"
                )
                os.truncate(path, offset)
                return
            raise StoreFileError(
                f"{path} is damaged at byte {offset}, before its last record: restore the data "
                "directory from a copy, or cut the file at that byte to keep what comes before"
            )
        replay.records += 1
        yield payload, b'"B' in line
        offset = end + 1


def _decode(line: bytes) -> dict[str, Any] | None:
    if len(line) < 10 or line[8:9] != b" ":
        return None
    body = line[9:]
    try:
        if int(line[:8], 16) != zlib.crc32(body):
            return None
        payload = json.loads(body.decode("utf-8", "surrogatepass"))
    except ValueError:
        return None
    return payload if isinstance(payload, dict) else None


@dataclass
class Snapshot:
    journal: int
    tables: list[list[Any]]
    lines: Iterator[tuple[str, str, str]]


def read_snapshot(directory: Path, replay: Replay) -> Snapshot | None:
    """The snapshot's header and its item lines (table, key text, item JSON); None if there
    is none yet. Its lines are read lazily; a missing trailer is found at the end."""
    path = directory / SNAPSHOT
    if not path.exists():
        return None
    handle = path.open("r", encoding="utf-8", errors="surrogatepass")
    try:
        header = json.loads(handle.readline())
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("evalsvc_snapshot") != FORMAT:
        handle.close()
        raise StoreFileError(
            f"{path} is not a snapshot this version reads: start with the version that wrote it, "
            "or move the data directory aside to start empty"
        )

    def lines() -> Iterator[tuple[str, str, str]]:
        with handle:
            count = 0
            for line in handle:
                table, tab, rest = line.partition("\t")
                if not tab:
                    trailer = json.loads(line)
                    if trailer != {"end": count}:
                        break
                    return
                key, _, item = rest.partition("\t")
                count += 1
                replay.items += 1
                yield table, key, item
        raise StoreFileError(
            f"{path} ends early (no trailer after {count} items): restore the data directory "
            "from a copy"
        )

    return Snapshot(int(header["journal"]), list(header.get("tables", [])), lines())


# ---- compaction ------------------------------------------------------------------------------


def compact(directory: Path, upto: int) -> int:
    """Write a snapshot of the snapshot plus every segment before `upto`; returns its items.
    Reads files only: the store keeps serving (and appending to segment `upto`)."""
    replay = Replay()
    tables: list[list[Any]] = []
    state: dict[str, dict[str, str]] = {}
    snapshot = read_snapshot(directory, replay)
    first = 0
    if snapshot is not None:
        first = snapshot.journal
        tables = snapshot.tables
        for table, key, item in snapshot.lines:
            state.setdefault(table, {})[key] = item.rstrip("\n")
    for number in segments(directory):
        if first <= number < upto:
            for payload in read_segment(segment_path(directory, number), last=False, replay=replay):
                if "t" in payload:
                    tables.append(payload["t"])
                    if payload["t"][0] == "DeleteTable":
                        state.pop(str(payload["t"][1].get("TableName")), None)
                    continue
                for table, key, item in payload["i"]:
                    rows = state.setdefault(table, {})
                    if item is None:
                        rows.pop(key_text(key), None)
                    else:
                        rows[key_text(key)] = json.dumps(
                            item, separators=(",", ":"), ensure_ascii=False, default=_binary
                        )
    path = directory / SNAPSHOT
    tmp = directory / (SNAPSHOT + ".tmp")
    count = 0
    descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8", errors="surrogatepass") as handle:
        header = {"evalsvc_snapshot": FORMAT, "journal": upto, "tables": tables}
        handle.write(json.dumps(header) + "\n")
        for table, rows in state.items():
            for key, item in rows.items():
                handle.write(f"{table}\t{key}\t{item}\n")
                count += 1
        handle.write(json.dumps({"end": count}) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)
    fsync_directory(directory)
    return count


# ---- appending -------------------------------------------------------------------------------


class Journal:
    """Appends records to the current segment; `wait` returns once a record is on disk.

    Group commit: the first waiter writes and fsyncs everything buffered so far, the others
    wait for it; whoever waits next takes the records that arrived meanwhile. When a write or
    fsync fails, `undo` is called (under the store lock) for every record not yet on disk,
    newest first, the segment is cut back to its last good byte, and their waiters get
    JournalFailed: nothing is acknowledged that is not on disk, and later writes try again.
    """

    def __init__(
        self,
        directory: Path,
        number: int,
        *,
        undo: Callable[[Any], None],
        store_lock: threading.Lock,
        rotate_when: Callable[[int], bool],
        rotated: Callable[[int], None],
    ) -> None:
        self.directory = directory
        self.number = number
        self._undo = undo
        self._store_lock = store_lock
        self._rotate_when = rotate_when
        self._rotated = rotated
        self._cond = threading.Condition(threading.Lock())
        self._buffer: list[bytes] = []
        self._undo_log: list[Any] = []
        self._appended = 0
        self._durable = 0
        # For each failure so far, how far the journal was on disk when it came.
        self._failures: list[int] = []
        self.flushes = 0
        self._flushing = False
        self._closed = False
        self._broken: str | None = None
        self.error: str | None = None
        self.bytes_since_snapshot = 0
        self._fd, self._size = self._open(number)

    def _open(self, number: int) -> tuple[int, int]:
        path = segment_path(self.directory, number)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            header = json.dumps(_HEADER).encode() + b"\n"
            _write_all(fd, header)
            os.fsync(fd)
            fsync_directory(self.directory)
        except OSError:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise
        return fd, len(header)

    def ticket(self) -> Ticket:
        """What a response must wait for: every write applied so far (called under the store
        lock, like `append`)."""
        with self._cond:
            return self._appended, len(self._failures)

    def append(self, payload: dict[str, Any], undo: Any) -> Ticket:
        """Buffer one record (called under the store lock, in the order writes were applied);
        the ticket to `wait` on."""
        line = encode_record(payload)
        with self._cond:
            if self._closed or self._broken:
                raise JournalFailed(self._broken or "the store is stopping")
            self._buffer.append(line)
            self._undo_log.append(undo)
            self._appended += 1
            return self._appended, len(self._failures)

    def wait(self, ticket: Ticket) -> None:
        """Return once every record up to the ticket's is on disk; JournalFailed if one of them
        never will be (it was undone)."""
        seq, generation = ticket
        with self._cond:
            while True:
                if len(self._failures) > generation:
                    # A failure came after the ticket: what was not on disk then was undone.
                    if seq > self._failures[generation]:
                        raise JournalFailed(self.error or "the journal could not be written")
                    return
                if seq <= self._durable:
                    return
                if not self._flushing:
                    break
                self._cond.wait()
            self._flushing = True
            data = b"".join(self._buffer)
            taken = len(self._buffer)
            self._buffer = []
            through = self._appended
            fd, good = self._fd, self._size
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            self._fail(fd, good, exc)
            self.wait(ticket)  # raises JournalFailed
            return
        with self._cond:
            self.flushes += 1
            self._durable = through
            self._size = good + len(data)
            del self._undo_log[:taken]
            self.bytes_since_snapshot += len(data)
            self.error = None
            self._flushing = False
            self._cond.notify_all()
            rotate = not self._closed and self._rotate_when(self.bytes_since_snapshot)
        if rotate:
            self._rotate()

    def _fail(self, fd: int, good: int, error: OSError) -> None:
        """Undo every write not on disk, newest first, and cut the segment back to `good`."""
        with self._store_lock, self._cond:
            self.error = (
                f"the data directory {self.directory} could not be written "
                f"({error.strerror or error}): free space or fix its permissions; "
                "writes are refused until then"
            )
            for undo in reversed(self._undo_log):
                self._undo(undo)
            self._undo_log.clear()
            self._buffer.clear()
            self._failures.append(self._durable)
            try:
                os.ftruncate(fd, good)
            except OSError as exc:
                # What failed may still be in the file, and would be replayed: stop writing.
                self._broken = f"{self.error}; the journal could not be cut back ({exc}): restart"
            self._flushing = False
            self._cond.notify_all()

    def _rotate(self) -> None:
        """Start a new segment, so the ones before it can be compacted."""
        with self._store_lock, self._cond:
            if self._buffer or self._flushing or self._closed:
                return  # the next flush tries again
            try:
                fd, size = self._open(self.number + 1)
            except OSError:
                return
            os.close(self._fd)
            self._fd, self._size = fd, size
            self.number += 1
            self.bytes_since_snapshot = 0
        self._rotated(self.number)

    def close(self) -> None:
        """Refuse appends from now on, put what is buffered on disk, close the segment."""
        with self._cond:
            self._closed = True
            pending = self._appended, len(self._failures)
        with contextlib.suppress(JournalFailed):
            self.wait(pending)  # what failed was undone, and is not acknowledged
        with self._cond:
            while self._flushing:
                self._cond.wait()
            os.close(self._fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def main() -> None:
    """`python -m evalsvc_tools.local.journal compact DIR UPTO`: the compaction child."""
    if len(sys.argv) != 4 or sys.argv[1] != "compact":
        raise SystemExit("usage: python -m evalsvc_tools.local.journal compact DIR UPTO")
    directory = Path(sys.argv[2])
    # One compaction at a time, even with one left running by a server that was killed.
    with (directory / "compact.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        compact(directory, int(sys.argv[3]))


if __name__ == "__main__":
    main()
