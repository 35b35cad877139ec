"""Estimates anchored to people (E12), standard library only: what people would say about every
pair of a metric, from their votes on a uniform random sample of the pairs and the judge's
score of every pair (prediction-powered inference with power tuning, PPI++).

The target is the share of pairs people say meet the metric. A pair's judge prediction is
f = (score - 1)/4, in [0, 1]. The labeled set L holds the n pairs with audit votes, each with
Y = the share of +1 among its ±1 votes; U holds the other N scored pairs. With sample
variances and covariances of ddof 1 and z the normal quantile at 1 - alpha/2:

    lambda   = clip(cov_L(Y, f) / ((1 + n/N)·var_U(f)), 0, 1)     (0 when var_U(f) = 0)
    estimate = lambda·mean_U(f) + mean_L(Y - lambda·f)
    se       = √(lambda²·var_U(f)/N + var_L(Y - lambda·f)/n)
    interval = estimate ± z·se, clipped to [0, 1]

beside the classical estimate from the labels alone (mean_L(Y), se = sd_L(Y)/√n) and
effective_labels = n·(se_classical/se)²: how many labels the classical estimate would need for
the same width. The estimate itself is not clipped (it is unbiased as it is).

Planning: with the current lambda and variances, a half-width h needs

    labels = ⌈z²·var_L(Y - lambda·f) / (h² - z²·lambda²·var_U(f)/N)⌉    (None: denominator <= 0)
    classical = ⌈z²·var_L(Y) / h²⌉

U is given by its moments (count, mean, variance): a result keeps its scores' mean and spread
over every scored pair, so removing the labeled pairs' predictions (`without`) gives U's
without reading a scored pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evalsvc.statistics.error_bars import CEIL_TOLERANCE, normal_ppf

MIN_LABELS = 2
MIN_UNLABELED = 2
# `without`: a sum of squares of U within this many ulps of the whole's sum of squares is zero
# (U's predictions all equal): the moments it is computed from were rounded once each.
_ZERO_ULPS = 16


@dataclass(frozen=True, slots=True)
class Moments:
    """Values by their count, mean and sample variance (ddof 1; 0.0 below two values)."""

    count: int
    mean: float
    variance: float


def moments(values: Sequence[float]) -> Moments:
    """The moments of `values` (two passes, each sum rounded once)."""
    count = len(values)
    if count == 0:
        return Moments(0, 0.0, 0.0)
    mean = math.fsum(values) / count
    if count < 2:
        return Moments(count, mean, 0.0)
    return Moments(count, mean, math.fsum((v - mean) ** 2 for v in values) / (count - 1))


def without(whole: Moments, part: Sequence[float], constant: bool = False) -> Moments:
    """The moments of `whole` once the values `part` (some of its values) are taken out;
    `constant` says every value of the whole is the same (its variance is then exactly 0)."""
    count = whole.count - len(part)
    if count <= 0:
        return Moments(0, 0.0, 0.0)
    mean = (whole.mean * whole.count - math.fsum(part)) / count
    if constant or count < 2:
        return Moments(count, mean, 0.0)
    squares = (whole.count - 1) * whole.variance + whole.count * whole.mean * whole.mean
    left = squares - math.fsum(v * v for v in part) - count * mean * mean
    if left <= _ZERO_ULPS * math.ulp(max(squares, 1.0)):
        return Moments(count, mean, 0.0)
    return Moments(count, mean, left / (count - 1))


@dataclass(frozen=True, slots=True)
class Interval:
    estimate: float
    se: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True, slots=True)
class Anchored:
    """The anchored estimate (None throughout when n < 2 or N < 2) and the counts."""

    n_labeled: int
    n_unlabeled: int
    anchored: Interval | None
    lam: float | None
    effective_labels: float | None
    classical: Interval | None


def _clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def _interval(estimate: float, se: float, z: float) -> Interval:
    return Interval(estimate, se, _clip01(estimate - z * se), _clip01(estimate + z * se))


def _z(alpha: float) -> float:
    if not 0.0 < alpha < 0.5:
        raise ValueError("alpha must be in (0, 0.5)")
    return normal_ppf(1.0 - alpha / 2.0)


@dataclass(frozen=True, slots=True)
class _Fit:
    """What the estimate and the plan share: lambda, the labels' Y and residuals' moments."""

    lam: float
    y: Moments
    residual: Moments
    unlabeled: Moments


def _fit(labeled: Sequence[tuple[float, float]], unlabeled: Moments) -> _Fit:
    n, big_n = len(labeled), unlabeled.count
    ys = [y for y, _ in labeled]
    fs = [f for _, f in labeled]
    y_m, f_m = moments(ys), moments(fs)
    covariance = math.fsum((y - y_m.mean) * (f - f_m.mean) for y, f in labeled) / (n - 1)
    var_u = unlabeled.variance if big_n >= MIN_UNLABELED else 0.0
    lam = 0.0
    if var_u > 0.0:
        lam = min(1.0, max(0.0, covariance / ((1.0 + n / big_n) * var_u)))
    residual = moments([y - lam * f for y, f in labeled])
    return _Fit(lam, y_m, residual, Moments(big_n, unlabeled.mean, var_u))


def anchored(labeled: Sequence[tuple[float, float]], unlabeled: Moments, alpha: float) -> Anchored:
    """The PPI++ estimate from the labeled pairs' (Y, f) and U's moments of f, at level
    alpha (0 < alpha < 0.5, else ValueError)."""
    z = _z(alpha)
    n, big_n = len(labeled), unlabeled.count
    if n < MIN_LABELS or big_n < MIN_UNLABELED:
        return Anchored(n, big_n, None, None, None, None)
    fit = _fit(labeled, unlabeled)
    lam, var_u = fit.lam, fit.unlabeled.variance
    estimate = lam * unlabeled.mean + fit.residual.mean
    se = math.sqrt(lam * lam * var_u / big_n + fit.residual.variance / n)
    classical = _interval(fit.y.mean, math.sqrt(fit.y.variance / n), z)
    effective = n * (classical.se / se) ** 2 if se > 0.0 else None
    return Anchored(n, big_n, _interval(estimate, se, z), lam, effective, classical)


@dataclass(frozen=True, slots=True)
class LabelPlan:
    labels_needed: int | None
    classical_labels_needed: int
    labels_now: int


def _ceil(x: float) -> int:
    """⌈x⌉ forgiving a few ulps above an integer (as error_bars.pairs_needed does)."""
    return math.ceil(x - CEIL_TOLERANCE * max(1.0, x))


def plan_labels(
    labeled: Sequence[tuple[float, float]], unlabeled: Moments, half_width: float, alpha: float
) -> LabelPlan:
    """The labels an interval of `half_width` needs, with PPI (None when no count of labels
    reaches it: the judge's part of the width alone is wider) and classically, from the current
    lambda and variances. ValueError below MIN_LABELS labels, for alpha outside (0, 0.5) or a
    half_width that is not finite and > 0."""
    z = _z(alpha)
    if not (math.isfinite(half_width) and half_width > 0.0):
        raise ValueError("half_width must be > 0")
    n = len(labeled)
    if n < MIN_LABELS:
        raise ValueError(f"at least {MIN_LABELS} labels are needed to plan")
    fit = _fit(labeled, unlabeled)
    z2, h2 = z * z, half_width * half_width
    classical = _ceil(z2 * fit.y.variance / h2)
    judge_part = (
        z2 * fit.lam * fit.lam * fit.unlabeled.variance / fit.unlabeled.count
        if fit.lam > 0.0
        else 0.0
    )
    denominator = h2 - judge_part
    needed = _ceil(z2 * fit.residual.variance / denominator) if denominator > 0.0 else None
    return LabelPlan(needed, classical, n)
