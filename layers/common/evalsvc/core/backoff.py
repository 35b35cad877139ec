"""The one backoff rule of the service: exponential, capped, with jitter, so retries of many
clients spread out instead of arriving together."""

from __future__ import annotations

import random


def delay(retry: int, base: float, cap: float) -> float:
    """Seconds to wait before retry number `retry` (1 for the first): `base` doubling with each
    retry, at most `cap`, times a random factor in [0.5, 1)."""
    grown: float = base * 2.0 ** max(0, retry - 1)
    return min(cap, grown) * random.uniform(0.5, 1.0)  # noqa: S311
