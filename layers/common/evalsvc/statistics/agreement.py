"""Agreement between a judge's scores and people's votes (E2), standard library only: AUC with
its DeLong interval, Kendall's tau-b, the best threshold with its 2 x 2 table and Cohen's kappa,
the confusion table and calibration with Wilson intervals.

An observation is one vote (+1 meets the metric, -1 does not, 0 unsure) paired with the judge's
score of that pair on that metric. Every figure is computed from counts per (score, vote), so
10,000 votes cost what their few distinct scores cost.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from evalsvc.statistics.scores import SCORE_BINS, score_bin

Z_95 = 1.959964
THRESHOLDS = (2, 3, 4, 5)
VOTES = (-1, 0, 1)


@dataclass(frozen=True, slots=True)
class Auc:
    auc: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True, slots=True)
class Threshold:
    threshold: int | None
    tpr: float | None
    tnr: float | None
    balanced_accuracy: float | None
    kappa: float | None


@dataclass(frozen=True, slots=True)
class CalibrationRow:
    score: int
    votes: int
    positive_rate: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, slots=True)
class Agreement:
    votes: int
    positive: int
    negative: int
    neutral: int
    auc: Auc
    kendall_tau_b: float | None
    threshold: Threshold
    confusion: dict[str, dict[str, int]]
    calibration: list[CalibrationRow]


class _Counted:
    """Values counted as (value, count), sorted, answering "how many are below v, how many
    equal it" by bisection."""

    def __init__(self, counts: Iterable[tuple[float, int]]) -> None:
        ordered = sorted((v, c) for v, c in counts if c > 0)
        self.values = [v for v, _ in ordered]
        self.before: list[int] = []  # how many come before each value
        total = 0
        for _, count in ordered:
            self.before.append(total)
            total += count
        self.total = total
        self.counts = [c for _, c in ordered]

    def below_equal(self, value: float) -> tuple[int, int]:
        k = bisect.bisect_left(self.values, value)
        below = self.before[k] if k < len(self.values) else self.total
        equal = self.counts[k] if k < len(self.values) and self.values[k] == value else 0
        return below, equal


def _sample_variance(values: Iterable[tuple[float, int]]) -> float:
    """Sample variance (n - 1) of the values that (value, count) pairs count."""
    terms = list(values)
    n = sum(count for _, count in terms)
    mean = math.fsum(v * count for v, count in terms) / n
    return math.fsum((v - mean) ** 2 * count for v, count in terms) / (n - 1)


def auc_delong(positive: Mapping[float, int], negative: Mapping[float, int]) -> Auc:
    """P(score of a +1 > score of a -1) + 1/2 P(tie), from counts of scores per side; its DeLong
    95 % interval (variance S10/m + S01/n), clipped to [0, 1]. The AUC needs one vote of each
    kind, its interval two."""
    pos = _Counted(positive.items())
    neg = _Counted(negative.items())
    m, n = pos.total, neg.total
    if m == 0 or n == 0:
        return Auc(None, None, None)
    # Structural components: for a +1 vote scored x, the share of -1 votes it beats (ties 1/2);
    # for a -1 vote scored y, the share of +1 votes that beat it.
    v10 = []
    for x, count in zip(pos.values, pos.counts, strict=True):
        below, equal = neg.below_equal(x)
        v10.append(((below + 0.5 * equal) / n, count))
    v01 = []
    for y, count in zip(neg.values, neg.counts, strict=True):
        below, equal = pos.below_equal(y)
        v01.append(((m - below - equal + 0.5 * equal) / m, count))
    auc = math.fsum(v * c for v, c in v10) / m
    if m < 2 or n < 2:
        return Auc(auc, None, None)
    error = math.sqrt(_sample_variance(v10) / m + _sample_variance(v01) / n)
    return Auc(auc, max(0.0, auc - Z_95 * error), min(1.0, auc + Z_95 * error))


def kendall_tau_b(observations: Mapping[tuple[float, int], int]) -> float | None:
    """Kendall's tau-b of (score, vote) observations counted as {(score, vote): how many}, as
    scipy's kendalltau; None when either side is constant."""
    n = sum(observations.values())
    if n < 2:
        return None
    by_vote: dict[int, Counter[float]] = {}
    scores: Counter[float] = Counter()
    votes: Counter[int] = Counter()
    for (score, vote), count in observations.items():
        if count > 0:
            by_vote.setdefault(vote, Counter())[score] += count
            scores[score] += count
            votes[vote] += count
    counted = {vote: _Counted(c.items()) for vote, c in by_vote.items()}
    # Concordant minus discordant pairs: only pairs with different votes count, by how their
    # scores compare.
    s = 0
    kinds = sorted(counted)
    for i, low in enumerate(kinds):
        for high in kinds[i + 1 :]:
            lows = counted[low]
            for score, count in zip(counted[high].values, counted[high].counts, strict=True):
                below, equal = lows.below_equal(score)
                s += count * (below - (lows.total - below - equal))
    pairs = n * (n - 1) // 2
    tied_scores = sum(c * (c - 1) // 2 for c in scores.values())
    tied_votes = sum(c * (c - 1) // 2 for c in votes.values())
    denominator = (pairs - tied_scores) * (pairs - tied_votes)
    if denominator == 0:
        return None
    return s / math.sqrt(denominator)


def best_threshold(positive: Mapping[float, int], negative: Mapping[float, int]) -> Threshold:
    """The threshold t in 2..5 (the judge says "meets" when score >= t) that maximises
    tpr + tnr over the +1 and -1 votes, the smallest on ties; with Cohen's kappa of its 2 x 2
    table (None when chance agreement is 1). All None without a vote of each kind."""
    m = sum(positive.values())
    n = sum(negative.values())
    if m == 0 or n == 0:
        return Threshold(None, None, None, None, None)
    best: tuple[int, int, int, int] | None = None
    for t in THRESHOLDS:
        tp = sum(c for s, c in positive.items() if s >= t)
        tn = sum(c for s, c in negative.items() if s < t)
        total = tp * n + tn * m  # (tpr + tnr) * m * n: exact, so ties are ties
        if best is None or total > best[0]:
            best = (total, t, tp, tn)
    assert best is not None
    _, t, tp, tn = best
    fn, fp = m - tp, n - tn
    everyone = m + n
    observed = (tp + tn) / everyone
    chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (everyone * everyone)
    kappa = None if chance == 1 else (observed - chance) / (1 - chance)
    tpr, tnr = tp / m, tn / n
    return Threshold(t, tpr, tnr, (tpr + tnr) / 2, kappa)


def wilson(successes: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval of a proportion."""
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def agreement(observations: Mapping[tuple[float, int], int]) -> Agreement:
    """Every agreement figure of (score, vote) observations counted as {(score, vote): count}."""
    positive: Counter[float] = Counter()
    negative: Counter[float] = Counter()
    confusion = {str(b): {str(v): 0 for v in VOTES} for b in SCORE_BINS}
    binned: dict[int, list[int]] = {}
    neutral = 0
    for (score, vote), count in observations.items():
        if count <= 0:
            continue
        if vote not in VOTES:
            raise ValueError(f"a vote is -1, 0 or 1, not {vote}")
        confusion[str(score_bin(score))][str(vote)] += count
        if vote == 1:
            positive[score] += count
        elif vote == -1:
            negative[score] += count
        else:
            neutral += count
        if vote != 0:
            row = binned.setdefault(score_bin(score), [0, 0])
            row[0] += count
            row[1] += count if vote == 1 else 0
    calibration = []
    for b in sorted(binned):
        votes, positives = binned[b]
        low, high = wilson(positives, votes)
        calibration.append(CalibrationRow(b, votes, positives / votes, low, high))
    m, n = sum(positive.values()), sum(negative.values())
    return Agreement(
        votes=m + n + neutral,
        positive=m,
        negative=n,
        neutral=neutral,
        auc=auc_delong(positive, negative),
        kendall_tau_b=kendall_tau_b(observations),
        threshold=best_threshold(positive, negative),
        confusion=confusion,
        calibration=calibration,
    )
