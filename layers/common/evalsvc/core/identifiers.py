"""Identifiers and timestamps, in the formats the contract fixes."""

import hashlib
import re
import time
import uuid
from datetime import UTC, datetime

from evalsvc.core.errors import InvalidInput

CLIENT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
_CLIENT_ID = re.compile(CLIENT_ID_PATTERN)
CLIENT_ID_RULE = (
    "1-128 characters of letters, digits, '.', '_', ':' or '-', starting with a letter or digit"
)
# Words that name something else in a path (`/data/seed/latest`, `/data/seed/pair`).
RESERVED_DATASET_IDS = frozenset({"latest", "pair"})


def is_client_id(value: str) -> bool:
    return bool(_CLIENT_ID.fullmatch(value))


def check_client_id(value: str, what: str) -> str:
    """Return `value` when it is a well-formed id, else raise InvalidInput naming `what`."""
    if not is_client_id(value):
        raise InvalidInput(f"{what} {value[:140]!r} is not valid: use {CLIENT_ID_RULE}")
    return value


def check_dataset_id(value: str, *, allow_latest: bool = False) -> str:
    """Return `value` when it can name a dataset, else raise InvalidInput saying why."""
    if allow_latest and value == "latest":
        return value
    check_client_id(value, "dataset id")
    if value in RESERVED_DATASET_IDS:
        raise InvalidInput(f"dataset id {value!r} is reserved; choose another id")
    return value


def new_id(prefix: str = "") -> str:
    return f"{prefix}{uuid.uuid4().hex}"


def job_id(prefix: str, tenant: str, request_key: str | None) -> str:
    """The id of the work a request starts: new, or, for a request carrying an Idempotency-Key
    (`request_key`: the key and the request it came with), the same for every retry of it, so
    a retry finds the work the first attempt started instead of starting it again."""
    if request_key is None:
        return new_id(prefix)
    digest = hashlib.sha256(f"{tenant}\n{request_key}".encode()).hexdigest()
    return f"{prefix}{digest[:32]}"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def format_ms(ms: int) -> str:
    """ISO 8601 UTC with milliseconds and Z, e.g. 2026-11-26T00:36:07.123Z."""
    dt = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"
