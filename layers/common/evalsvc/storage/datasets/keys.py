"""Keys of the datasets table, and the order key of pairs (`ord`)."""

from __future__ import annotations

import hashlib
import time

from evalsvc import backoff
from evalsvc.models.datasets import (
    DatasetKind,
)
from evalsvc.settings import get_settings

HEADER_SK = "dataset"


POINTER_SK = "pointer"


ORDER_INDEX = "by_order"


COMMIT_ATTEMPTS = 10


def pause(attempt: int) -> None:
    """Jittered pause before retrying a write that lost a race for the dataset header."""
    if attempt:
        time.sleep(backoff.delay(attempt, 0.02, 0.5))


def table() -> str:
    return get_settings().datasets_table


def dataset_pk(tenant: str, kind: DatasetKind, dataset_id: str) -> str:
    return f"T#{tenant}#{kind.value}#{dataset_id}"


def version_pk(tenant: str, kind: DatasetKind, dataset_id: str, version: str) -> str:
    return f"{dataset_pk(tenant, kind, dataset_id)}#v#{version}"


def latest_pk(tenant: str, kind: DatasetKind) -> str:
    return f"T#{tenant}#latest#{kind.value}"


def prompt_hash(system_prompt: str) -> str:
    return hashlib.sha256(system_prompt.encode()).hexdigest()


def prompt_pk(tenant: str, system_prompt: str) -> str:
    return f"T#{tenant}#prompt#{prompt_hash(system_prompt)}"


def make_ord(ms: int, seq: int) -> str:
    return f"{ms:013d}#{seq:08d}"


def split_ord(ord_: str) -> tuple[int, int]:
    ms, seq = ord_.split("#")
    return int(ms), int(seq)


def next_ord(last_ord: str, at_ms: int) -> str:
    """The ord of a pair added after `last_ord`: never earlier, even if clocks disagree."""
    if not last_ord:
        return make_ord(at_ms, 0)
    last_ms, last_seq = split_ord(last_ord)
    if at_ms > last_ms:
        return make_ord(at_ms, 0)
    return make_ord(last_ms, last_seq + 1)
