"""Error bars that hold (E6, docs/error-bars.md), standard library only: the clustered
standard error and interval of a mean, the judge's own noise when each pair is judged k times,
and the power of a paired comparison (its minimum detectable effect, and how many pairs a
planned one needs).

Clustered standard error (pairs that share a topic are not independent). For scores s_i,
i = 1..n, in G clusters, with mean s̄:

    se_clustered = √(Σ_c (Σ_{i∈c} (s_i - s̄))²) / n
    ci_low_clustered, ci_high_clustered = s̄ ± t.ppf(0.975, G - 1)·se_clustered

and for a comparison's differences d_i at 1 - alpha: mean_diff ± t.ppf(1 - alpha/2, G - 1)·
se_clustered. Since Σ_{i∈c} (s_i - s̄) = S_c - n_c·s̄ (S_c the cluster's sum, n_c its size), only
S_c and n_c are kept per cluster: O(n) time, memory bounded by the number of clusters. With every
pair its own cluster, se_clustered = √(Σ_i (s_i - s̄)²) / n = √(var_pop / n), the standard error
with the population variance (ddof = 0).

Judge noise: judge_noise_sd = √(mean over pairs of the within-pair sample variance (ddof = 1) of
its k scores); the pair's score is the mean of its k.

Power: mde = (z_{1-alpha/2} + z_{0.8})·std_diff/√n and
pairs_needed = ⌈((z_{1-alpha/2} + z_{power})·sd / effect)²⌉, at least 2, with z_p the standard
normal quantile (normal_ppf)."""

from __future__ import annotations

import base64
import hashlib
import math
from array import array
from collections import Counter
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from evalsvc.statistics.scores import Paired, student_t_isf

CONFIDENCE = 0.95
ALPHA = 1.0 - CONFIDENCE
MDE_POWER = 0.8
DEFAULT_POWER = 0.8
MIN_PAIRS = 2
# pairs_needed: a value within this relative distance above an integer is that integer (see
# pairs_needed).
CEIL_TOLERANCE = 1e-9


# ---- the standard normal quantile --------------------------------------------------------------

# Acklam's rational approximations (relative error below 1.15e-9 before refinement).
_A = (
    -3.969683028665376e01,
    2.209460984245205e02,
    -2.759285104469687e02,
    1.383577518672690e02,
    -3.066479806614716e01,
    2.506628277459239e00,
)
_B = (
    -5.447609879822406e01,
    1.615858368580409e02,
    -1.556989798598866e02,
    6.680131188771972e01,
    -1.328068155288572e01,
)
_C = (
    -7.784894002430293e-03,
    -3.223964580411365e-01,
    -2.400758277161838e00,
    -2.549732539343734e00,
    4.374664141464968e00,
    2.938163982698783e00,
)
_D = (
    7.784695709041462e-03,
    3.224671290700398e-01,
    2.445134137142996e00,
    3.754408661907416e00,
)
_P_LOW = 0.02425
_SQRT2 = math.sqrt(2.0)
_LOG_SQRT2PI = 0.5 * math.log(2.0 * math.pi)


def _acklam_lower(p: float) -> float:
    """Acklam's approximation of the quantile, for 0 < p <= 0.5."""
    if p < _P_LOW:
        q = math.sqrt(-2.0 * math.log(p))
        return (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0
        )
    q = p - 0.5
    r = q * q
    return (
        (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5])
        * q
        / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0)
    )


def _normal_ppf_lower(p: float) -> float:
    """The quantile for 0 < p <= 0.5 (x <= 0): Acklam's value refined by one Halley step on
    Φ(x) - p, with Φ(x) = erfc(-x/√2)/2, which keeps its relative precision in the lower tail."""
    x = _acklam_lower(p)
    error = 0.5 * math.erfc(-x / _SQRT2) - p
    if error == 0.0:
        return x
    # u = error / φ(x), in logarithms: φ(x) underflows for the smallest subnormal p.
    u = math.copysign(math.exp(math.log(abs(error)) + _LOG_SQRT2PI + x * x / 2.0), error)
    return x - u / (1.0 + x * u / 2.0)


def normal_ppf(p: float) -> float:
    """The standard normal quantile z_p, Φ(z_p) = p, for 0 < p < 1: Acklam's algorithm refined
    by one Halley step using math.erfc (about 1e-12 relative or better, tails included). Above
    1/2 it is -z_{1-p}: 1 - p is exact there, so the upper tail is as precise as the lower."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if p == 0.5:
        return 0.0
    if p < 0.5:
        return _normal_ppf_lower(p)
    return -_normal_ppf_lower(1.0 - p)


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 0.5:
        raise ValueError("alpha must be in (0, 0.5)")


# ---- clustered standard error ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClusteredMean:
    """The mean of n scores in `clusters` (G) clusters, its clustered standard error
    √(Σ_c (Σ_{i∈c} (s_i - s̄))²) / n and the interval s̄ ± t.ppf(1 - alpha/2, G - 1)·se_clustered
    at `confidence` = 1 - alpha (not clipped to the score scale: differences may be negative).
    With fewer than 2 clusters se_clustered and the interval are None: with one cluster the
    formula is identically 0 (the residuals sum to 0), which would claim a certainty it has no
    grounds for, and t has no degrees of freedom."""

    n: int
    clusters: int
    mean: float
    se_clustered: float | None
    ci_low_clustered: float | None
    ci_high_clustered: float | None
    confidence: float


def _neumaier_add(acc: list[float], x: float) -> None:
    """Adds x to the compensated sum acc = [sum, compensation, count]."""
    s = acc[0]
    t = s + x
    if abs(s) >= abs(x):
        acc[1] += (s - t) + x
    else:
        acc[1] += (x - t) + s
    acc[0] = t
    acc[2] += 1.0


def clustered_mean(items: Iterable[tuple[Hashable, float]], alpha: float = ALPHA) -> ClusteredMean:
    """The clustered standard error and interval at 1 - alpha of the mean of the scores of
    `items`, (cluster_key, score) pairs in any order (the default alpha gives t.ppf(0.975, G - 1);
    for a comparison pass the differences d_i and its alpha). An unlabelled item is its own
    cluster: the caller gives it a key no other item has.

        se_clustered = √(Σ_c (Σ_{i∈c} (s_i - s̄))²) / n = √(Σ_c (S_c - n_c·s̄)²) / n

    One pass keeps per cluster only S_c (a compensated sum of the scores less the first one,
    so that a large common offset does not cancel away the residuals) and n_c: O(n) time,
    memory bounded by G. Then s̄ from the exactly rounded total (math.fsum over clusters), and
    Σ_c (S_c - n_c·s̄)² over the clusters. With every item its own cluster this is
    √(Σ_i (s_i - s̄)²) / n = √(var_pop / n), the population-variance (ddof = 0) standard error."""
    _check_alpha(alpha)
    iterator = iter(items)
    first = next(iterator, None)
    if first is None:
        raise ValueError("no scores")
    shift = float(first[1])
    sums: dict[Hashable, list[float]] = {first[0]: [0.0, 0.0, 1.0]}
    for key, score in iterator:
        acc = sums.get(key)
        if acc is None:
            sums[key] = [score - shift, 0.0, 1.0]
        else:
            _neumaier_add(acc, score - shift)
    cluster_sums = [(acc[0] + acc[1], acc[2]) for acc in sums.values()]
    n_float = math.fsum(count for _, count in cluster_sums)
    n = int(n_float)
    shifted_mean = math.fsum(total for total, _ in cluster_sums) / n_float
    mean = shift + shifted_mean
    if not math.isfinite(mean):
        raise ValueError("scores must be finite")
    clusters = len(cluster_sums)
    if clusters < 2:
        return ClusteredMean(n, clusters, mean, None, None, None, 1.0 - alpha)
    se = math.sqrt(math.fsum((total - count * shifted_mean) ** 2 for total, count in cluster_sums))
    se /= n_float
    margin = student_t_isf(alpha / 2.0, clusters - 1) * se
    return ClusteredMean(n, clusters, mean, se, mean - margin, mean + margin, 1.0 - alpha)


def clustered_around(
    mean: float, clusters: Iterable[tuple[int, float]], alpha: float = ALPHA
) -> ClusteredMean:
    """The clustered standard error and interval at 1 - alpha around `mean` (the exact mean of
    every score, as the result's summary gives it) from each cluster's (n_c, S_c), its size and
    the sum of its scores, in any order: √(Σ_c (S_c - n_c·s̄)²) / n. One pass, O(1) memory
    beyond what `clusters` holds: what a queued evaluation's finish does with the cluster sums
    its chunks left."""
    _check_alpha(alpha)
    count = 0
    groups = 0

    def residuals() -> Iterable[float]:
        nonlocal count, groups
        for n_c, total in clusters:
            if n_c < 1:
                raise ValueError("a cluster without scores")
            count += n_c
            groups += 1
            yield (total - n_c * mean) ** 2

    squares = math.fsum(residuals())
    if count == 0:
        raise ValueError("no scores")
    if not math.isfinite(squares):
        raise ValueError("scores must be finite")
    if groups < 2:
        return ClusteredMean(count, groups, mean, None, None, None, 1.0 - alpha)
    se = math.sqrt(squares) / count
    margin = student_t_isf(alpha / 2.0, groups - 1) * se
    return ClusteredMean(count, groups, mean, se, mean - margin, mean + margin, 1.0 - alpha)


class ClusterSums:
    """What the clustered figures of several metrics need, added up one item at a time: per
    named cluster its size and its sum of each metric's values (doubles: 8 bytes each, so
    100,000 clusters of 50 metrics take 40 MB), and per metric the counts of the values of
    items that are clusters of their own (no name to share), which need no entry each. A
    chunk's totals, a whole result's and a comparison's differences are all kept so; two are
    added up with merge (JSON: as_json and merge)."""

    def __init__(self, metrics: int) -> None:
        self.metrics = metrics
        # name: [n_c of each metric, S_c of each metric]: a metric not applicable to an item
        # (E10) counts neither its size nor its value there.
        self.named: dict[str, array[float]] = {}
        self.singles: list[Counter[float]] = [Counter() for _ in range(metrics)]

    def add(self, name: str | None, values: Sequence[float | None]) -> None:
        """One item of the cluster `name` (None: a cluster of its own) with a value per
        metric (None where the metric does not apply to it)."""
        if name is None:
            for single, value in zip(self.singles, values, strict=True):
                if value is not None:
                    single[value] += 1
        else:
            sizes = [0.0 if value is None else 1.0 for value in values]
            self._add_to(name, sizes, [0.0 if value is None else value for value in values])

    def _add_to(self, name: str, sizes: Sequence[float], sums: Sequence[float]) -> None:
        if len(sums) != self.metrics or len(sizes) != self.metrics:
            raise ValueError("cluster sums do not match the metrics")
        entry = self.named.get(name)
        if entry is None:
            self.named[name] = array("d", [*sizes, *sums])
            return
        for m, value in enumerate((*sizes, *sums)):
            entry[m] += value

    def as_json(self) -> dict[str, Any]:
        """`sums`: per cluster [name, n_c, [S_c per metric]], n_c one number when every metric
        applied to each of its items, else a list of one per metric."""
        sums = []
        for name, entry in self.named.items():
            sizes = [int(x) for x in entry[: self.metrics]]
            size: int | list[int] = sizes[0] if len(set(sizes)) == 1 else sizes
            sums.append([name, size, list(entry[self.metrics :])])
        return {"sums": sums, "singles": [sorted(c.items()) for c in self.singles]}

    def merge(self, part: dict[str, Any]) -> None:
        """Add what another ClusterSums' as_json holds (a cluster met in both is one)."""
        for name, size, sums in part["sums"]:
            sizes = (
                [float(x) for x in size] if isinstance(size, list) else [float(size)] * self.metrics
            )
            self._add_to(str(name), sizes, [float(x) for x in sums])
        for single, counts in zip(self.singles, part["singles"], strict=True):
            for value, times in counts:
                single[float(value)] += int(times)

    def sizes_and_sums(self, m: int) -> Iterator[tuple[int, float]]:
        """(n_c, S_c) of metric m for every cluster it applies to, each single its own."""
        for entry in self.named.values():
            if entry[m] > 0:
                yield int(entry[m]), entry[self.metrics + m]
        for value, times in self.singles[m].items():
            for _ in range(times):
                yield 1, value

    def clustered(self, m: int, mean: float, alpha: float = ALPHA) -> ClusteredMean:
        """clustered_around the metric's exact mean."""
        return clustered_around(mean, self.sizes_and_sums(m), alpha)


def cluster_digest(text: str) -> str:
    """A short name of the cluster of pairs whose label (or input) is `text`: 16 characters of
    base64url, the first 96 bits of its SHA-256 over UTF-8 (a lone surrogate as the 3 bytes it
    is stored as). 100,000 distinct texts collide with odds under 1e-19; a name is small
    enough to keep with every scored pair whatever the text's size."""
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:12]
    return base64.urlsafe_b64encode(digest).decode()


# ---- repeated judging --------------------------------------------------------------------------


def pair_score(samples: Sequence[float]) -> float:
    """A pair's score when it was judged k times: the mean of its k scores."""
    if not samples:
        raise ValueError("no samples")
    return math.fsum(samples) / len(samples)


def judge_noise_sd(samples_per_pair: Iterable[Sequence[float]]) -> float | None:
    """judge_noise_sd = √(mean over pairs of the within-pair sample variance (ddof = 1) of its k
    scores), one pass over the pairs. None when k = 1 (no pair has two scores to differ); a pair
    with a single score (fewer samples than asked) has no within-pair variance and is left out
    of the mean."""
    variances: list[float] = []
    for samples in samples_per_pair:
        k = len(samples)
        if k == 0:
            raise ValueError("a pair without samples")
        if k < 2:
            continue
        mean = math.fsum(samples) / k
        variances.append(math.fsum((s - mean) ** 2 for s in samples) / (k - 1))
    if not variances:
        return None
    return math.sqrt(math.fsum(variances) / len(variances))


def noise_numerator(samples: Sequence[int]) -> int:
    """k·Σs² - (Σs)² of one pair's k integer scores: its sample variance times k(k - 1),
    exact, so that the sum over pairs (what chunks of a queued evaluation add up) loses
    nothing."""
    return len(samples) * sum(x * x for x in samples) - sum(samples) ** 2


def judge_noise_from(numerators: int, pairs: int, k: int) -> float | None:
    """judge_noise_sd of `pairs` pairs judged k times each, from the sum of their
    noise_numerator: √(Σ numerator / (k(k - 1)) / pairs); None when k = 1 or no pair."""
    if k < 2 or pairs == 0:
        return None
    return math.sqrt(numerators / (k * (k - 1)) / pairs)


# ---- power -------------------------------------------------------------------------------------


def mde(std_diff: float | None, n: int, alpha: float = ALPHA) -> float | None:
    """The minimum detectable effect of a paired comparison of n pairs: the smallest mean
    difference it had an 80 % chance to detect at two-sided level alpha,

        mde = (z_{1-alpha/2} + z_{0.8})·std_diff/√n,

    None when n < 2 or std_diff is None (undefined)."""
    _check_alpha(alpha)
    if n < 2 or std_diff is None:
        return None
    if not (math.isfinite(std_diff) and std_diff >= 0.0):
        raise ValueError("std_diff must be finite and >= 0")
    z_sum = -normal_ppf(alpha / 2.0) + normal_ppf(MDE_POWER)
    return z_sum * std_diff / math.sqrt(n)


def pairs_needed(
    sd: float, effect: float, alpha: float = ALPHA, power: float = DEFAULT_POWER
) -> int:
    """How many pairs a comparison needs to detect a mean difference `effect` with probability
    `power` at two-sided level alpha:

        pairs_needed = ⌈((z_{1-alpha/2} + z_{power})·sd / effect)²⌉, at least 2.

    effect > 0, 0.5 <= power < 1, 0 < alpha < 0.5 and a finite sd >= 0, or ValueError. The
    ceiling forgives rounding: x is taken as the integer m when m < x <= m·(1 + 1e-9)
    (CEIL_TOLERANCE), i.e. ⌈x - 1e-9·max(1, x)⌉, so that an x that is an integer in exact
    arithmetic but came out a few ulps above it (from the quantiles, the division and the
    square) does not ask for one pair more; every larger excess rounds up."""
    _check_alpha(alpha)
    if not (math.isfinite(effect) and effect > 0.0):
        raise ValueError("effect must be > 0")
    if not 0.5 <= power < 1.0:
        raise ValueError("power must be in [0.5, 1)")
    if not (math.isfinite(sd) and sd >= 0.0):
        raise ValueError("sd must be finite and >= 0")
    z_sum = -normal_ppf(alpha / 2.0) - normal_ppf(1.0 - power)
    ratio = z_sum * sd / effect
    x = ratio * ratio  # not ** 2, which raises OverflowError where * gives inf
    if not math.isfinite(x):
        raise ValueError("sd / effect is too large")
    return max(MIN_PAIRS, math.ceil(x - CEIL_TOLERANCE * max(1.0, x)))


def plan_sd(std_dev: float | None = None, std_diff: float | None = None) -> tuple[float, bool]:
    """The sd of a planned comparison and whether it is paired: with a candidate, its std_diff
    over the matched pairs (paired, True); without, √2 x the baseline's std_dev (two independent
    runs, False). std_diff wins when both are given; ValueError when neither is."""
    if std_diff is not None:
        return std_diff, True
    if std_dev is not None:
        return math.sqrt(2.0) * std_dev, False
    raise ValueError("std_dev or std_diff is needed")


@dataclass(frozen=True, slots=True)
class Plan:
    """One metric of POST /plan: sd (plan_sd), pairs_needed (pairs_needed) and paired."""

    sd: float
    pairs_needed: int
    paired: bool


def plan(
    effect: float,
    alpha: float = ALPHA,
    power: float = DEFAULT_POWER,
    *,
    std_dev: float | None = None,
    std_diff: float | None = None,
) -> Plan:
    """plan_sd, then pairs_needed = ⌈((z_{1-alpha/2} + z_{power})·sd / effect)²⌉, at least 2."""
    sd, is_paired = plan_sd(std_dev=std_dev, std_diff=std_diff)
    return Plan(sd, pairs_needed(sd, effect, alpha, power), is_paired)


def pairs_to_see(figures: Paired, alpha: float) -> int | None:
    """How many matched pairs a comparison needs to see the difference this one observed
    (|mean_diff|) with 80 % power at level alpha, at this one's std_diff
    (error_bars.pairs_needed); None when there is no difference to see (mean_diff 0 or
    undefined) or no spread to plan with, or when no count of pairs can be given."""
    if figures.std_diff is None or not figures.mean_diff:
        return None
    try:
        return pairs_needed(figures.std_diff, abs(figures.mean_diff), alpha, MDE_POWER)
    except ValueError:
        return None
