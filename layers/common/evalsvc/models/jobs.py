"""Queued work (logic/jobs.py): what a job is, how it is cut into chunks, and what a counted
chunk leaves behind for the job's finish."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from evalsvc.core.errors import Failure


class Status(StrEnum):
    RUNNING = "running"
    COMPLETE = "complete"
    FAILED = "failed"


# A kind of queued work is named by the module that defines it (logic.kinds), which registers
# it with the engine (logic.jobs): "evaluation", "augmentation", ... The name is part of a job's
# key and of every chunk's message.


def fingerprint_set(members: bytes) -> frozenset[bytes]:
    """The 8-byte ord fingerprints `members` holds, one after another."""
    return frozenset(members[k : k + 8] for k in range(0, len(members), 8))


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of a selection, in dataset order: the `count` pairs of its dataset version with
    `first_ord` <= ord <= `last_ord` whose ords' fingerprints (8 bytes each) are in `members`
    (a pair appended after the selection can fall in the range). A queued job's chunks are
    pieces of its selection; so is what a result pinned (logic.reproduce)."""

    first_ord: str
    last_ord: str
    count: int
    members: bytes

    def member_set(self) -> frozenset[bytes]:
        return fingerprint_set(self.members)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One message on the queue: pairs `start` .. `start + count - 1` of the selection, which
    are the pairs (matching the job's labels) of the dataset version with `first_ord` <= ord <=
    `last_ord` whose ords' fingerprints are in `members` (8 bytes each: a pair appended after
    the selection can fall in the range; None, from a plan cut before, takes the range)."""

    kind: str
    tenant: str
    job_id: str
    index: int
    start: int
    count: int
    first_ord: str
    last_ord: str
    members: bytes | None = None
    # Times the chunk was put back on the queue (a throttled model, a stalled job).
    requeues: int = 0

    def member_set(self) -> frozenset[bytes] | None:
        return None if self.members is None else fingerprint_set(self.members)


def members_text(members: bytes | None) -> str | None:
    """A chunk's members as they are kept in JSON (its message, its job's plan): base64."""
    return None if members is None else base64.b64encode(members).decode()


def members_from_text(text: str | None) -> bytes | None:
    """The members `members_text` kept (binascii.Error when `text` is not base64)."""
    return None if text is None else base64.b64decode(text, validate=True)


@dataclass(slots=True)
class Job:
    """The state of one queued job: small, whatever the job's size. `params` are what the
    job's kind needs to do a chunk (a dataset version, a label filter…)."""

    kind: str
    tenant: str
    job_id: str
    chunk_count: int
    pairs_total: int
    created_ms: int
    params: dict[str, Any] = field(default_factory=dict)
    status: Status = Status.RUNNING
    chunks_done: int = 0
    pairs_done: int = 0
    bytes_done: int = 0
    # When the job last moved (started, a chunk counted, a chunk failed or requeued).
    progress_ms: int = 0
    # Times the sweeper queued its missing chunks again.
    sweeps: int = 0
    failure: Failure | None = None
    # The latest error of a chunk that will be tried again (what the job fails with if the
    # chunk is given up).
    last_error: Failure | None = None


@dataclass(slots=True)
class Tally:
    """What one counted chunk leaves for its job's finish: how many pairs and bytes it did,
    and `totals`, its kind's aggregates (an evaluation's score counts and lowest pairs), so
    finishing reads one item per chunk, never the pairs."""

    index: int
    pairs: int
    bytes: int
    totals: dict[str, Any] = field(default_factory=dict)
