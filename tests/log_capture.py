"""The service's log lines, as Powertools formats them, captured for a test to read."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Iterator
from typing import Any

from evalsvc.core.observability import logger


class LogLines(logging.Handler):
    """Every line the service's logger writes while attached (from any thread)."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        line = self.format(record)
        with self._lock:
            self.lines.append(line)

    def records(self) -> list[dict[str, Any]]:
        with self._lock:
            return [json.loads(line) for line in self.lines]


@contextlib.contextmanager
def captured(level: str = "DEBUG") -> Iterator[LogLines]:
    """The lines logged at `level` and above inside the block."""
    collect = LogLines()
    collect.setFormatter(logger.registered_formatter)
    logger.addHandler(collect)
    previous = logger.log_level
    logger.setLevel(level)
    try:
        yield collect
    finally:
        logger.setLevel(previous)
        logger.removeHandler(collect)
