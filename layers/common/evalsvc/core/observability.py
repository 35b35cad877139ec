"""The one place the Powertools logger, tracer and metrics are created, and where log lines get
their context.

A log line's context (the invocation's Lambda keys and correlation id, the caller's tenant and
key id, the chunk being worked on) is kept in Powertools' context-local keys, never in the
logger's global keys: in one process, requests served at once (the local server, a test) and
the local queue workers each see only their own. Threads the service starts for a request
(`LogContextPool`) carry its keys with them.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.jmespath_utils import query

SERVICE = "evalsvc"

logger = Logger(service=SERVICE)
tracer = Tracer(service=SERVICE)
metrics = Metrics(namespace="EvalService", service=SERVICE)

P = ParamSpec("P")
T = TypeVar("T")
LambdaHandler = Callable[[Any, Any], Any]


def log_keys() -> dict[str, Any]:
    """The keys this context's log lines carry."""
    return dict(logger.thread_safe_get_current_keys())


def _replace_log_keys(keys: dict[str, Any]) -> None:
    # Powertools replaces the context's dict when keys are added (never changes it in place),
    # so a context copied from this one keeps its own.
    logger.thread_safe_clear_keys()
    if keys:
        logger.thread_safe_append_keys(**keys)


def add_log_keys(**keys: Any) -> None:
    """Add `keys` to every later log line of this context (this request: each request runs in
    its own task, whose context ends with it)."""
    logger.thread_safe_append_keys(**keys)


@contextmanager
def log_context(**keys: Any) -> Iterator[None]:
    """`keys` on every log line of this context inside the block; the keys before it after."""
    before = log_keys()
    logger.thread_safe_append_keys(**keys)
    try:
        yield
    finally:
        _replace_log_keys(before)


def carry_log_context(function: Callable[P, T]) -> Callable[P, T]:
    """`function`, run with the log keys of the context that wraps it (wherever it runs)."""
    keys = log_keys()

    @functools.wraps(function)
    def carried(*args: P.args, **kwargs: P.kwargs) -> T:
        with log_context(**keys):
            return function(*args, **kwargs)

    return carried


class LogContextPool(ThreadPoolExecutor):
    """A thread pool whose tasks log with the keys of the context that submitted them."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        return super().submit(carry_log_context(fn), *args, **kwargs)


_cold = True
_cold_lock = threading.Lock()


def _cold_start() -> bool:
    global _cold
    with _cold_lock:
        cold, _cold = _cold, False
    return cold


def invocation_log_context(
    correlation_id_path: str | None = None,
) -> Callable[[LambdaHandler], LambdaHandler]:
    """Decorate a Lambda handler: each invocation's log lines carry its Lambda context (function,
    request id, cold start) and its correlation id (`correlation_id_path` into the event), as
    Powertools' `inject_lambda_context` would, but in the invocation's own context rather than
    the logger's global keys, which another invocation in the same process (a local queue
    worker beside the local server's requests) would see."""

    def decorate(handler: LambdaHandler) -> LambdaHandler:
        @functools.wraps(handler)
        def invoked(event: Any, context: Any) -> Any:
            keys: dict[str, Any] = {
                "cold_start": _cold_start(),
                "function_name": context.function_name,
                "function_memory_size": context.memory_limit_in_mb,
                "function_arn": context.invoked_function_arn,
                "function_request_id": context.aws_request_id,
            }
            if correlation_id_path:
                keys["correlation_id"] = query(envelope=correlation_id_path, data=event)
            with log_context(**keys):
                return handler(event, context)

        return invoked

    return decorate
