"""E13: how a jury's judges agree with each other on a metric, and each judge's mean.

Krippendorff's alpha at the interval level, over the judges' scores of each pair (a unit: a
pair, its values: the R judges' scores; every pair has all R, the jury gives no verdict
otherwise). With n = N·R values in all,

    D_o = (1/n) · Σ_units Σ_{c≠k in the unit} (x_c - x_k)² / (R - 1)
    D_e = 1/(n(n - 1)) · Σ_{c≠k over all values} (x_c - x_k)²
    alpha = 1 - D_o / D_e

and each sum over ordered pairs of values is 2·(m·Σx² - (Σx)²) over its m values, so that a
chunk of pairs adds up to five numbers, and the chunks' sums to the whole's: the figures of a
queued evaluation are those of the same pairs scored at once. alpha is null with fewer than 2
pairs, or when every score is the same (no expected disagreement).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class JuryFigures:
    """A judged metric's jury: its judges (in order), its aggregate, their alpha and each
    judge's mean score (None when the metric scored no pair)."""

    judges: list[str]
    aggregate: str
    alpha: float | None
    means: list[float | None]


@dataclass(slots=True)
class JurySums:
    """What alpha and the judges' means need of some pairs' judge scores, added up."""

    judges: int
    units: int = 0
    # Σ over units of (R·Σx² - (Σx)²) within the unit, over R - 1.
    within: float = 0.0
    total: float = 0.0
    squares: float = 0.0
    low: float = math.inf
    high: float = -math.inf
    per_judge: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.per_judge:
            self.per_judge = [0.0] * self.judges

    def add(self, scores: Sequence[float]) -> None:
        """One pair's judge scores (one per judge, in the jury's order)."""
        if len(scores) != self.judges:
            raise ValueError(f"{len(scores)} scores for a jury of {self.judges}")
        s = math.fsum(scores)
        q = math.fsum(x * x for x in scores)
        self.units += 1
        self.within += (self.judges * q - s * s) / (self.judges - 1)
        self.total += s
        self.squares += q
        self.low = min(self.low, *scores)
        self.high = max(self.high, *scores)
        for r, x in enumerate(scores):
            self.per_judge[r] += x

    def merge(self, other: JurySums) -> None:
        self.units += other.units
        self.within += other.within
        self.total += other.total
        self.squares += other.squares
        self.low = min(self.low, other.low)
        self.high = max(self.high, other.high)
        for r, x in enumerate(other.per_judge):
            self.per_judge[r] += x

    def alpha(self) -> float | None:
        """Krippendorff's alpha (interval); None with fewer than 2 pairs or one value only."""
        if self.units < 2 or self.low == self.high:
            return None
        n = self.units * self.judges
        observed = 2 * self.within / n
        expected_sum = 2 * (n * self.squares - self.total * self.total)
        if expected_sum <= 0:
            return None
        expected = expected_sum / (n * (n - 1))
        return 1.0 - observed / expected

    def means(self) -> list[float | None]:
        if not self.units:
            return [None] * self.judges
        return [x / self.units for x in self.per_judge]

    def as_json(self) -> list[Any]:
        """Compact, for a chunk's totals (None for a bound never met)."""
        low = None if self.units == 0 else self.low
        high = None if self.units == 0 else self.high
        return [self.units, self.within, self.total, self.squares, low, high, self.per_judge]

    @classmethod
    def from_json(cls, judges: int, value: Sequence[Any]) -> JurySums:
        units, within, total, squares, low, high, per_judge = value
        return cls(
            judges,
            int(units),
            float(within),
            float(total),
            float(squares),
            math.inf if low is None else float(low),
            -math.inf if high is None else float(high),
            [float(x) for x in per_judge],
        )

    def figures(self, names: list[str], aggregate: str) -> JuryFigures:
        return JuryFigures(list(names), aggregate, self.alpha(), self.means())
