"""Statistics, standard library only. Per metric: mean, median, min, max, sample standard
deviation and the two-sided Student-t confidence interval of the mean, clipped to the score
scale [1, 5], and how many scores fall in each 1-5 bin. Between two evaluations (`paired`,
`holm`): the paired t interval and test, the Wilcoxon signed-rank (Pratt) and exact sign tests,
and Holm's adjustment across metrics."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

SCALE_MIN = 1.0
SCALE_MAX = 5.0
CONFIDENCE = 0.95
SCORE_BINS = (1, 2, 3, 4, 5)


@dataclass(frozen=True, slots=True)
class Summary:
    mean: float
    median: float
    min: float
    max: float
    std_dev: float
    ci_low: float
    ci_high: float
    ci_confidence: float = CONFIDENCE


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            break
    return h


def regularized_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_cdf(t: float, df: float) -> float:
    tail = student_t_upper_tail(abs(t), df)
    return 1.0 - tail if t > 0 else tail


def student_t_upper_tail(t: float, df: float) -> float:
    """P(T > t) for t >= 0."""
    return 0.5 * regularized_beta(df / 2.0, 0.5, df / (df + t * t))


@lru_cache(maxsize=4096)
def student_t_isf(tail: float, df: float) -> float:
    """The t >= 0 with P(T > t) = tail, for 0 < tail <= 0.5: found on the tail itself, so a
    tiny tail keeps its precision (1 - tail would round it away)."""
    if not 0.0 < tail <= 0.5:
        raise ValueError("tail must be in (0, 0.5]")
    low, high = 0.0, 1.0
    while student_t_upper_tail(high, df) > tail:
        low, high = high, high * 2.0
    for _ in range(2_000):
        # Geometric halves while the bracket spans orders of magnitude, then arithmetic ones.
        mid = math.sqrt(low * high) if low > 0.0 and high > 4.0 * low else (low + high) / 2.0
        if mid in (low, high):
            break
        if student_t_upper_tail(mid, df) > tail:
            low = mid
        else:
            high = mid
    return (low + high) / 2.0


def student_t_ppf(p: float, df: float) -> float:
    """The t with P(T <= t) = p, for 0.5 <= p < 1."""
    if not 0.5 <= p < 1.0:
        raise ValueError("p must be in [0.5, 1)")
    return student_t_isf(1.0 - p, df)


def score_bin(score: float) -> int:
    """The 1-5 bin of a (possibly fractional) score: floor(score + 0.5), within 1..5."""
    return min(SCORE_BINS[-1], max(SCORE_BINS[0], math.floor(score + 0.5)))


def histogram(counts: Mapping[float, int]) -> list[int]:
    """How many of the scores `counts` counts ({score: how many times}) fall in each 1-5 bin
    (score_bin), the count of bin 1 first."""
    bins = [0] * len(SCORE_BINS)
    for score, times in counts.items():
        bins[score_bin(score) - SCORE_BINS[0]] += times
    return bins


def _clip(value: float) -> float:
    return min(SCALE_MAX, max(SCALE_MIN, value))


def summarize(scores: Sequence[float], confidence: float = CONFIDENCE) -> Summary:
    """Statistics of one metric's scores. With one score the spread is unknown: std_dev 0 and
    the interval is the whole scale. All-equal scores: std_dev 0 and the interval is the mean."""
    return summarize_counts(Counter(scores), confidence)


def _exact_sum(terms: Iterable[tuple[float, int]]) -> float:
    """The sum of `count` copies of each `value`, rounded once (as math.fsum rounds the sum of
    the copies), however the copies were grouped."""
    return float(sum((Fraction(value) * count for value, count in terms), Fraction(0)))


def summarize_counts(counts: Mapping[float, int], confidence: float = CONFIDENCE) -> Summary:
    """summarize() of the scores that `counts` counts ({score: how many times}): the same
    numbers, bit for bit, however the scores were split before counting (a queued evaluation
    adds up the counts of its chunks)."""
    ordered = sorted((value, count) for value, count in counts.items() if count > 0)
    if not ordered:
        raise ValueError("no scores to summarize")
    n, mean, median, std_dev = _moments(ordered)
    low, high = ordered[0][0], ordered[-1][0]
    if n == 1:
        return Summary(mean, median, low, high, 0.0, SCALE_MIN, SCALE_MAX, confidence)
    if std_dev == 0.0:
        return Summary(mean, median, low, high, 0.0, mean, mean, confidence)
    half_width = student_t_ppf(0.5 + confidence / 2.0, n - 1) * std_dev / math.sqrt(n)
    return Summary(
        mean,
        median,
        low,
        high,
        std_dev,
        _clip(mean - half_width),
        _clip(mean + half_width),
        confidence,
    )


def mean_of_counts(counts: Mapping[float, int]) -> float:
    """The mean of the values that `counts` counts ({value: how many times}), rounded once."""
    ordered = [(value, count) for value, count in counts.items() if count > 0]
    if not ordered:
        raise ValueError("no values to average")
    return _exact_sum(ordered) / sum(count for _, count in ordered)


def _moments(ordered: Sequence[tuple[float, int]]) -> tuple[int, float, float, float]:
    """n, mean, median and sample standard deviation (0 for one value) of the values that
    sorted (value, count) pairs count, each sum rounded once."""
    n = sum(count for _, count in ordered)
    if len(ordered) == 1:  # every value the same: exactly it, with no spread
        return n, ordered[0][0], ordered[0][0], 0.0
    mean = _exact_sum(ordered) / n
    median = (
        _nth(ordered, n // 2)
        if n % 2
        else (_nth(ordered, n // 2 - 1) + _nth(ordered, n // 2)) / 2.0
    )
    if n == 1:
        return n, mean, median, 0.0
    variance = _exact_sum(((value - mean) ** 2, count) for value, count in ordered) / (n - 1)
    return n, mean, median, math.sqrt(variance)


def _nth(ordered: Sequence[tuple[float, int]], k: int) -> float:
    """The k-th (from 0) smallest score of sorted (score, count) pairs."""
    for value, count in ordered:
        if k < count:
            return value
        k -= count
    raise IndexError(k)


# ---- paired comparison of two evaluations (E1) ------------------------------------------------


@dataclass(frozen=True, slots=True)
class Paired:
    """Statistics of the paired differences d = candidate - baseline of one metric. None where
    a figure is undefined (fewer than 2 pairs, no spread, every d zero, no wins or losses)."""

    n: int
    mean_diff: float | None
    median_diff: float | None
    std_diff: float | None
    ci_low: float | None
    ci_high: float | None
    t_statistic: float | None
    p_value: float | None
    wilcoxon_p: float | None
    sign_test_p: float | None
    wins: int
    ties: int
    losses: int
    effect_size_dz: float | None


def _normal_two_sided(z: float) -> float:
    """P(|Z| >= |z|) for a standard normal Z."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def _wilcoxon_pratt_counts(ordered: Sequence[tuple[float, int]]) -> float | None:
    """Two-sided p of the Wilcoxon signed-rank test of the differences that sorted (difference,
    count) pairs count, with Pratt's treatment of zeros (ranked, then dropped), by the normal
    approximation with the tie correction, without continuity correction; None when every
    difference is zero."""
    # Per |d|: how many differences have it, and how many of those are positive.
    by_size: dict[float, list[int]] = {}
    for d, count in ordered:
        tally = by_size.setdefault(abs(d), [0, 0])
        tally[0] += count
        if d > 0:
            tally[1] += count
    zeros = by_size.get(0.0, [0, 0])[0]
    n = sum(count for count, _ in by_size.values())
    if zeros == n:
        return None
    r_plus = 0.0
    ties_term = 0.0
    below = 0  # how many differences are smaller in size
    for size in sorted(by_size):
        group, positive = by_size[size]
        rank = below + (group + 1) / 2.0  # the average of ranks below+1 .. below+group
        r_plus += rank * positive
        if group > 1 and size != 0:
            ties_term += group * (group * group - 1)
        below += group
    mean = (n * (n + 1) - zeros * (zeros + 1)) / 4.0
    variance = (
        n * (n + 1) * (2 * n + 1) - zeros * (zeros + 1) * (2 * zeros + 1) - 0.5 * ties_term
    ) / 24.0
    return _normal_two_sided((r_plus - mean) / math.sqrt(variance))


def sign_test_p(wins: int, losses: int) -> float | None:
    """Exact two-sided binomial test of `wins` out of `wins + losses` at 1/2 (the sum of the
    probabilities of outcomes no more likely than the one seen); None without any."""
    n = wins + losses
    if n == 0:
        return None
    k = min(wins, losses)
    if 2 * k == n:
        return 1.0
    # P(X <= k) for X ~ Binomial(n, 1/2), as the regularized incomplete beta I_1/2(n-k, k+1).
    return min(1.0, 2.0 * regularized_beta(n - k, k + 1, 0.5))


def paired(diffs: Sequence[float], alpha: float) -> Paired:
    """The paired t interval and test of the mean difference at 1 - alpha, and the robustness
    checks, of differences d = candidate - baseline."""
    return paired_counts(Counter(diffs), alpha)


def paired_counts(counts: Mapping[float, int], alpha: float) -> Paired:
    """paired() of the differences that `counts` counts ({difference: how many times}): what a
    comparison keeps per metric while it reads two results, however many pairs they hold."""
    ordered = sorted((d, count) for d, count in counts.items() if count > 0)
    n = sum(count for _, count in ordered)
    wins = sum(count for d, count in ordered if d > 0)
    losses = sum(count for d, count in ordered if d < 0)
    ties = n - wins - losses
    if n < 2:
        return Paired(
            n, None, None, None, None, None, None, None, None, None, wins, ties, losses, None
        )
    _, mean, median, std = _moments(ordered)
    if std == 0.0:
        t_statistic = None
        dz = None
        low = high = mean
        p_value = 1.0 if mean == 0.0 else 0.0
    else:
        error = std / math.sqrt(n)
        t_statistic = mean / error
        dz = mean / std
        margin = student_t_isf(alpha / 2.0, n - 1) * error
        low, high = mean - margin, mean + margin
        p_value = 2.0 * student_t_upper_tail(abs(t_statistic), n - 1.0)
    return Paired(
        n=n,
        mean_diff=mean,
        median_diff=median,
        std_diff=std,
        ci_low=low,
        ci_high=high,
        t_statistic=t_statistic,
        p_value=p_value,
        wilcoxon_p=_wilcoxon_pratt_counts(ordered),
        sign_test_p=sign_test_p(wins, losses),
        wins=wins,
        ties=ties,
        losses=losses,
        effect_size_dz=dz,
    )


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-Bonferroni adjusted p-values, in the order given; None stays None and does not
    count among the m tests."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(present)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for j, (p, i) in enumerate(present):
        running = max(running, min(1.0, (m - j) * p))
        adjusted[i] = running
    return adjusted
