"""moto in this process (the tests' `tables` fixture, the benchmarks), one request at a time.

moto's tables are not safe under concurrent requests: a table keeps its items in a
`defaultdict(dict)` keyed by DynamoType, whose `__hash__` and `__eq__` are Python code, so the
interpreter can switch threads between a lookup that misses a partition and the insertion of
its new dict. Two threads putting the first items of one partition at once can each create it;
the later dict replaces the earlier, and the items already put into that one are gone, with
every write answered 200. (A GetItem of a missing partition creates it too.) The embedded
store serves one request at a time for the same reason (`front.Front`); `serialised()` does
the same for moto's in-process mock: every request botocore sends to it is handled under one
lock, whatever the number of threads sending them. The service's own threads (8 batch writers,
16 first-page readers) still run as they do deployed; only moto's handling is one at a time.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from moto import mock_aws
from moto.core.botocore_stubber import BotocoreStubber
from moto.core.config import DefaultConfig

# Reentrant: a request handled by moto may itself call moto (the same thread).
_one_at_a_time = threading.RLock()
_patching = threading.Lock()
_users = 0
_original: Any = None


def _serialised_request(self: BotocoreStubber, request: Any) -> Any:
    with _one_at_a_time:
        return _original(self, request)


@contextlib.contextmanager
def serialised() -> Iterator[None]:
    """While inside, moto's in-process mock handles one request at a time (counted: nested or
    overlapping users leave it serialised until the last leaves)."""
    global _users, _original
    with _patching:
        if _users == 0:
            _original = BotocoreStubber.process_request
            BotocoreStubber.process_request = _serialised_request  # type: ignore[method-assign]
        _users += 1
    try:
        yield
    finally:
        with _patching:
            _users -= 1
            if _users == 0:
                BotocoreStubber.process_request = _original  # type: ignore[method-assign]
                _original = None


def is_serialised() -> bool:
    return _users > 0


# moto replaces boto3's default session on every start, so each client made afterwards loads
# botocore's service models and endpoint rules again (about 0.1 s of JSON a client): most of a
# test's set-up. Its session is kept instead; moto answers every client whatever session made
# it, and the credentials any session finds here are moto's or the tests' fakes.
_KEEP_SESSION: DefaultConfig = {"core": {"reset_boto3_session": False}}


@contextlib.contextmanager
def moto_in_process() -> Iterator[None]:
    """moto's mock of AWS for this process, serialised (see above)."""
    with serialised(), mock_aws(config=_KEEP_SESSION):
        yield
