"""The one backoff rule of the service and its command line: exponential and capped (`grown`);
with jitter where many clients retry at once (`delay`), so that their retries spread out
instead of arriving together."""

from __future__ import annotations

import random


def grown(retry: int, base: float, cap: float) -> float:
    """Seconds before retry number `retry` (1 for the first): `base` doubling with each retry,
    at most `cap`."""
    pause: float = base * 2.0 ** max(0, retry - 1)
    return min(cap, pause)


def delay(retry: int, base: float, cap: float) -> float:
    """`grown(retry, base, cap)` times a random factor in [0.5, 1)."""
    return grown(retry, base, cap) * random.uniform(0.5, 1.0)  # noqa: S311
