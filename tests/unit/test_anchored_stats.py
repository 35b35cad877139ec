"""statistics/anchored.py (E12) against two oracles: the formulas written again in numpy, on
hypothesis-drawn labels and predictions, and the published PPI implementation (ppi_py) where
its definitions are ours: with the same lambda its point estimate is ours, and its interval is
ours once its population variances (ddof 0) are put back to sample variances (ddof 1). Its own
lambda (a 1/n covariance over a variance pooled over labeled and unlabeled predictions) is not
ours: the difference is measured, not asserted away. Also the moments taken out of a whole
(`without`) against the moments of what is left, and the labels plan."""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import pytest
from evalsvc.statistics.anchored import (
    Moments,
    anchored,
    moments,
    plan_labels,
    without,
)
from evalsvc.statistics.error_bars import normal_ppf
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.anchored_oracle import ppi_oracle

# A judge's prediction: a 1-5 score with up to 4 decimals, as (score - 1)/4.
predictions = st.integers(0, 40_000).map(lambda k: k / 40_000)
label_values = st.sampled_from([0.0, 1.0, 0.5, 1 / 3, 2 / 3])
labeled_sets = st.lists(st.tuples(label_values, predictions), min_size=2, max_size=60)
unlabeled_sets = st.lists(predictions, min_size=2, max_size=200)
alphas = st.sampled_from([0.05, 0.1, 0.01, 0.2, 1e-6])


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-11)


@settings(max_examples=300, deadline=None)
@given(labeled_sets, unlabeled_sets, alphas)
def test_the_estimate_agrees_with_numpy(
    labeled: list[tuple[float, float]], unlabeled: list[float], alpha: float
) -> None:
    got = anchored(labeled, moments(unlabeled), alpha)
    want = ppi_oracle(labeled, unlabeled, alpha)

    assert got.anchored is not None and got.classical is not None and got.lam is not None
    assert (got.n_labeled, got.n_unlabeled) == (len(labeled), len(unlabeled))
    assert close(got.lam, want["lambda"])  # type: ignore[arg-type]
    assert close(got.anchored.estimate, want["estimate"])  # type: ignore[arg-type]
    assert close(got.anchored.se, want["se"])  # type: ignore[arg-type]
    assert close(got.anchored.ci_low, want["ci_low"])  # type: ignore[arg-type]
    assert close(got.anchored.ci_high, want["ci_high"])  # type: ignore[arg-type]
    assert close(got.classical.estimate, want["classical"]["estimate"])
    assert close(got.classical.se, want["classical"]["se"])
    if want["effective_labels"] is None:
        assert got.effective_labels is None
    else:
        assert got.effective_labels is not None
        assert close(got.effective_labels, want["effective_labels"])
    assert 0.0 <= got.anchored.ci_low <= got.anchored.ci_high <= 1.0
    assert 0.0 <= got.lam <= 1.0


@settings(max_examples=200, deadline=None)
@given(unlabeled_sets, st.data())
def test_taking_values_out_of_the_whole_gives_the_moments_of_the_rest(
    rest: list[float], data: st.DataObject
) -> None:
    part = data.draw(st.lists(predictions, max_size=40))
    whole = moments(rest + part)

    got = without(whole, part, constant=len(set(rest + part)) == 1)
    want = moments(rest)

    assert got.count == want.count
    assert math.isclose(got.mean, want.mean, rel_tol=1e-9, abs_tol=1e-12)
    assert math.isclose(got.variance, want.variance, rel_tol=1e-7, abs_tol=1e-12)


def test_equal_predictions_left_have_no_variance_and_lambda_zero() -> None:
    part = [0.0, 1.0, 0.25]
    rest = [0.5] * 997
    whole = moments(rest + part)

    left = without(whole, part)

    assert left == Moments(997, pytest.approx(0.5, abs=1e-15), 0.0)  # type: ignore[arg-type]
    labeled = [(0.0, 0.0), (1.0, 1.0), (0.0, 0.25)]
    figures = anchored(labeled, left, 0.05)
    assert figures.lam == 0.0
    assert figures.anchored is not None and figures.classical is not None
    assert figures.anchored == figures.classical  # lambda 0 is the labels alone


@pytest.mark.parametrize(
    ("labeled", "unlabeled"),
    [([(1.0, 0.5)], moments([0.1, 0.2])), ([(1.0, 0.5), (0.0, 0.1)], moments([0.3]))],
)
def test_below_two_of_either_every_figure_is_none(
    labeled: list[tuple[float, float]], unlabeled: Moments
) -> None:
    figures = anchored(labeled, unlabeled, 0.05)

    assert (figures.n_labeled, figures.n_unlabeled) == (len(labeled), unlabeled.count)
    assert figures.anchored is None and figures.classical is None
    assert figures.lam is None and figures.effective_labels is None


def test_labels_that_agree_exactly_have_no_effective_labels() -> None:
    figures = anchored([(1.0, 0.5), (1.0, 0.5)], moments([0.5, 0.5, 0.5]), 0.05)

    assert figures.anchored is not None
    assert figures.anchored.se == 0.0 and figures.effective_labels is None


@pytest.mark.parametrize("alpha", [0.0, 0.5, -0.1, math.nan])
def test_alpha_outside_the_open_interval_is_refused(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        anchored([(1.0, 0.5), (0.0, 0.1)], moments([0.1, 0.2]), alpha)


@settings(max_examples=200, deadline=None)
@given(labeled_sets, unlabeled_sets, st.floats(0.005, 0.5), alphas)
def test_the_labels_plan_agrees_with_numpy(
    labeled: list[tuple[float, float]], unlabeled: list[float], half_width: float, alpha: float
) -> None:
    got = plan_labels(labeled, moments(unlabeled), half_width, alpha)

    want = ppi_oracle(labeled, unlabeled, alpha)
    lam = want["lambda"]
    assert lam is not None
    z2 = normal_ppf(1 - alpha / 2) ** 2
    judge_part = z2 * lam**2 * want["var_u"] / len(unlabeled)
    denominator = half_width**2 - judge_part
    assert got.labels_now == len(labeled)
    exact_classical = z2 * want["var_y"] / half_width**2
    assert abs(got.classical_labels_needed - math.ceil(exact_classical)) <= (
        1 if abs(exact_classical - round(exact_classical)) < 1e-6 else 0
    )
    if denominator <= 1e-12:
        return  # at the edge, the sign of a difference of rounded numbers decides
    exact = z2 * want["var_r"] / denominator
    assert got.labels_needed is not None
    assert abs(got.labels_needed - math.ceil(exact)) <= (
        1 if abs(exact - round(exact)) < 1e-6 else 0
    )


def test_a_width_the_judge_alone_cannot_reach_has_no_count() -> None:
    labeled = [(1.0, 1.0), (0.0, 0.0), (1.0, 0.75), (0.0, 0.25)]
    unlabeled = moments([0.0, 1.0, 0.0, 1.0])  # 4 pairs, variance 1/3: a wide judge part

    planned = plan_labels(labeled, unlabeled, 0.05, 0.05)

    assert planned.labels_needed is None
    assert planned.classical_labels_needed == math.ceil(normal_ppf(0.975) ** 2 / 3 / 0.05**2)


def test_a_plan_needs_two_labels() -> None:
    with pytest.raises(ValueError, match="2 labels"):
        plan_labels([(1.0, 0.5)], moments([0.1, 0.2]), 0.1, 0.05)


# ---- the published implementation --------------------------------------------------------------


@pytest.fixture(scope="module")
def ppi_py() -> Any:
    """The published package, imported only by the tests that use it (it takes seconds: numba,
    scikit-learn and statsmodels come with it), never skipped: it is a dev dependency."""
    return importlib.import_module("ppi_py")


def _draw(seed: int, n: int, big_n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = rng.random(n + big_n) < 0.6
    scores = np.clip(np.rint(1.5 + 2.5 * truth + 1 + rng.normal(0, 1.2, n + big_n)), 1, 5)
    f = (scores - 1) / 4
    return truth[:n].astype(float), f[:n], f[n:]


@pytest.mark.parametrize(("seed", "n", "big_n"), [(1, 40, 500), (2, 200, 5000), (3, 12, 30)])
def test_with_our_lambda_ppi_py_gives_our_estimate_and_our_interval_in_its_variances(
    seed: int, n: int, big_n: int, ppi_py: Any
) -> None:
    y, f, u = _draw(seed, n, big_n)
    ours = anchored(list(zip(y.tolist(), f.tolist(), strict=True)), moments(u.tolist()), 0.05)
    assert ours.anchored is not None and ours.lam is not None

    estimate = ppi_py.ppi_mean_pointestimate(y, f, u, lam=ours.lam)
    low, high = ppi_py.ppi_mean_ci(y, f, u, alpha=0.05, lam=ours.lam)

    assert float(estimate[0]) == pytest.approx(ours.anchored.estimate, abs=1e-12)
    # ppi_py's standard error uses population variances (ddof 0): ours with ddof 0 is its.
    r = y - ours.lam * f
    se_ddof0 = math.sqrt(ours.lam**2 * np.var(u) / big_n + np.var(r) / n)
    z = normal_ppf(0.975)
    assert float(low[0]) == pytest.approx(ours.anchored.estimate - z * se_ddof0, abs=1e-9)
    assert float(high[0]) == pytest.approx(ours.anchored.estimate + z * se_ddof0, abs=1e-9)
    # ... and ours is that with ddof 1: each variance times n/(n - 1).
    se_ddof1 = math.sqrt(
        ours.lam**2 * np.var(u) * big_n / (big_n - 1) / big_n + np.var(r) * n / (n - 1) / n
    )
    assert ours.anchored.se == pytest.approx(se_ddof1, rel=1e-12)


@pytest.mark.parametrize(("seed", "n", "big_n"), [(4, 100, 2000), (5, 400, 10000)])
def test_ppi_py_at_lambda_zero_is_the_classical_mean(
    seed: int, n: int, big_n: int, ppi_py: Any
) -> None:
    y, f, u = _draw(seed, n, big_n)
    ours = anchored(list(zip(y.tolist(), f.tolist(), strict=True)), moments(u.tolist()), 0.05)
    assert ours.classical is not None

    estimate = ppi_py.ppi_mean_pointestimate(y, f, u, lam=0)

    assert float(estimate[0]) == pytest.approx(ours.classical.estimate, abs=1e-12)


@pytest.mark.parametrize(("seed", "n", "big_n"), [(6, 200, 5000), (7, 400, 10000)])
def test_ppi_py_tunes_its_own_lambda_close_to_ours_on_large_samples(
    seed: int, n: int, big_n: int, ppi_py: Any
) -> None:
    """Its lambda is not ours by definition (see the module's docstring); with hundreds of
    labels the two tunings land within a few hundredths, and so do the estimates."""
    y, f, u = _draw(seed, n, big_n)
    ours = anchored(list(zip(y.tolist(), f.tolist(), strict=True)), moments(u.tolist()), 0.05)
    assert ours.anchored is not None and ours.lam is not None

    theirs = float(ppi_py.ppi_mean_pointestimate(y, f, u)[0])

    assert theirs == pytest.approx(ours.anchored.estimate, abs=0.01)
