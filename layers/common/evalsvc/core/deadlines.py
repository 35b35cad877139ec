"""Deadlines: the moment a piece of work must be done by, on the monotonic clock.

A request has until API Gateway cuts it (29 s after the gateway received it) or until its Lambda
times out, whichever is first; a queue worker until its Lambda times out, less a margin. Work
reads how long it has left, plans against it, and hands what will not fit to the work queue.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Deadline:
    at: float  # time.monotonic() value

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    @classmethod
    def never(cls) -> Deadline:
        return cls(math.inf)

    def left(self) -> float:
        """Seconds left (negative once passed; infinite for `never`)."""
        return self.at - time.monotonic()

    def passed(self) -> bool:
        return self.left() <= 0

    def earlier(self, seconds: float) -> Deadline:
        return Deadline(self.at - seconds)

    def sooner_of(self, other: Deadline) -> Deadline:
        return self if self.at <= other.at else other


def lambda_remaining(context: Any) -> float | None:
    """Seconds until the Lambda invocation of `context` times out; None off Lambda."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if remaining is None:
        return None
    return float(remaining()) / 1000
