"""The recent latency of each provider, kept for the life of the process (LATENCY)."""

from __future__ import annotations

import threading


class Latency:
    """The recent time of a provider's calls (an exponentially weighted mean), kept for the
    life of the process: what planning against a deadline expects of the next call."""

    WEIGHT = 0.3

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seconds: dict[str, float] = {}

    def record(self, provider: str, seconds: float) -> None:
        with self._lock:
            before = self._seconds.get(provider)
            self._seconds[provider] = (
                seconds if before is None else before + self.WEIGHT * (seconds - before)
            )

    def expected(self, provider: str) -> float | None:
        with self._lock:
            return self._seconds.get(provider)

    def forget(self) -> None:
        with self._lock:
            self._seconds.clear()


LATENCY = Latency()
