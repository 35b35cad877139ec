"""The paired comparison's statistics (stats.paired, stats.holm) against scipy, the oracle, to
1e-6 (E1, docs/comparing-runs.md): fixed designs of 2, 3, 30 and 10,000 pairs, all ties, all
equal differences, and random ones."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from evalsvc.statistics import scores as stats
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

TOLERANCE = 1e-6
ALPHA = 0.05


def close(mine: float | None, oracle: float) -> bool:
    assert mine is not None
    return math.isclose(mine, oracle, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def check_against_scipy(baseline: list[float], candidate: list[float]) -> stats.Paired:
    diffs = [c - b for b, c in zip(baseline, candidate, strict=True)]
    result = stats.paired(diffs, ALPHA)
    n = len(diffs)
    assert result.n == n
    assert (result.wins, result.ties, result.losses) == (
        sum(d > 0 for d in diffs),
        sum(d == 0 for d in diffs),
        sum(d < 0 for d in diffs),
    )
    assert close(result.mean_diff, sum(diffs) / n)
    assert close(result.median_diff, float(scipy_stats.scoreatpercentile(diffs, 50)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns when every difference is equal
        std = float(scipy_stats.tstd(diffs))
    assert close(result.std_diff, std)
    if std > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            test = scipy_stats.ttest_rel(candidate, baseline)
        assert close(result.t_statistic, float(test.statistic))
        assert close(result.p_value, float(test.pvalue))
        margin = scipy_stats.t.ppf(1 - ALPHA / 2, n - 1) * std / math.sqrt(n)
        assert close(result.ci_low, sum(diffs) / n - margin)
        assert close(result.ci_high, sum(diffs) / n + margin)
        assert close(result.effect_size_dz, (sum(diffs) / n) / std)
    if any(d != 0 for d in diffs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wilcoxon = scipy_stats.wilcoxon(diffs, zero_method="pratt", method="approx")
        assert close(result.wilcoxon_p, float(wilcoxon.pvalue))
    else:
        assert result.wilcoxon_p is None
    decided = result.wins + result.losses
    if decided:
        assert close(result.sign_test_p, scipy_stats.binomtest(result.wins, decided, 0.5).pvalue)
    else:
        assert result.sign_test_p is None
    return result


@pytest.mark.parametrize("n", [2, 3, 30, 10_000])
def test_fixed_designs_of_2_3_30_and_10000_pairs_agree_with_scipy(n: int) -> None:
    rng = random.Random(n)
    baseline = [float(rng.randint(1, 5)) for _ in range(n)]
    candidate = [min(5.0, max(1.0, b + rng.choice([-1, 0, 0, 1, 1, 2]))) for b in baseline]
    if n == 2:
        candidate = [baseline[0] + 1, baseline[1] + 3]  # two different differences
    check_against_scipy(baseline, candidate)


def test_all_ties_leave_the_tests_undefined_but_the_interval_a_point() -> None:
    result = check_against_scipy([3.0, 4.0, 2.0, 5.0], [3.0, 4.0, 2.0, 5.0])

    assert result.mean_diff == 0.0 and result.std_diff == 0.0
    assert result.ci_low == result.ci_high == 0.0
    assert result.t_statistic is None and result.effect_size_dz is None
    assert result.p_value == 1.0
    assert result.wilcoxon_p is None and result.sign_test_p is None
    assert (result.wins, result.ties, result.losses) == (0, 4, 0)


def test_all_equal_differences_have_no_spread_and_a_p_of_zero() -> None:
    result = check_against_scipy([1.0, 2.0, 3.0, 1.0, 2.0], [2.0, 3.0, 4.0, 2.0, 3.0])

    assert result.std_diff == 0.0 and result.mean_diff == 1.0
    assert result.ci_low == result.ci_high == 1.0
    assert result.t_statistic is None and result.effect_size_dz is None
    assert result.p_value == 0.0


def test_fewer_than_two_pairs_have_every_statistic_null() -> None:
    for diffs in ([], [1.5]):
        result = stats.paired(diffs, ALPHA)
        assert result.n == len(diffs)
        assert all(
            value is None
            for value in (
                result.mean_diff,
                result.median_diff,
                result.std_diff,
                result.ci_low,
                result.ci_high,
                result.t_statistic,
                result.p_value,
                result.wilcoxon_p,
                result.sign_test_p,
                result.effect_size_dz,
            )
        )


scores = st.sampled_from([1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(scores, scores), min_size=2, max_size=80))
def test_random_designs_agree_with_scipy(pairs: list[tuple[float, float]]) -> None:
    check_against_scipy([b for b, _ in pairs], [c for _, c in pairs])


def holm_by_definition(p_values: list[float | None]) -> list[float | None]:
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(present)
    out: list[float | None] = [None] * len(p_values)
    for rank, (_, i) in enumerate(present, start=1):
        out[i] = max(min(1.0, (m - j + 1) * present[j - 1][0]) for j in range(1, rank + 1))
    return out


probabilities = st.one_of(st.none(), st.floats(0.0, 1.0))


@settings(max_examples=200, deadline=None)
@given(st.lists(probabilities, max_size=12))
def test_holm_follows_its_definition_and_never_lowers_a_p_value(
    p_values: list[float | None],
) -> None:
    adjusted = stats.holm(p_values)

    assert adjusted == holm_by_definition(p_values)
    for p, q in zip(p_values, adjusted, strict=True):
        assert (p is None) == (q is None)
        if p is not None and q is not None:
            assert p <= q <= 1.0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(scores, scores), min_size=2, max_size=60))
def test_swapping_baseline_and_candidate_negates_the_differences_and_keeps_the_p_values(
    pairs: list[tuple[float, float]],
) -> None:
    forward = stats.paired([c - b for b, c in pairs], ALPHA)
    backward = stats.paired([b - c for b, c in pairs], ALPHA)

    assert forward.mean_diff == pytest.approx(-(backward.mean_diff or 0.0), abs=1e-12)
    assert forward.median_diff == pytest.approx(-(backward.median_diff or 0.0), abs=1e-12)
    for mine, theirs in [
        (forward.p_value, backward.p_value),
        (forward.wilcoxon_p, backward.wilcoxon_p),
        (forward.sign_test_p, backward.sign_test_p),
    ]:
        assert (mine is None) == (theirs is None)
        if mine is not None:
            assert mine == pytest.approx(theirs, abs=1e-12)
    assert (forward.wins, forward.ties, forward.losses) == (
        backward.losses,
        backward.ties,
        backward.wins,
    )


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(scores, scores), min_size=2, max_size=60),
    st.sampled_from([-2.0, -0.5, 0.25, 1.0, 3.0]),
)
def test_a_constant_added_to_every_candidate_score_moves_mean_diff_by_it(
    pairs: list[tuple[float, float]], shift: float
) -> None:
    before = stats.paired([c - b for b, c in pairs], ALPHA)
    after = stats.paired([(c + shift) - b for b, c in pairs], ALPHA)

    assert after.mean_diff == pytest.approx((before.mean_diff or 0.0) + shift, abs=1e-9)
    assert after.std_diff == pytest.approx(before.std_diff, abs=1e-9)


@pytest.mark.parametrize("alpha", [1e-4, 1e-10, 1e-16, 1e-50, 1e-100])
def test_a_tiny_alpha_keeps_its_precision(alpha: float) -> None:
    # 1 - alpha/2 rounds to 1 for alpha under about 1e-16: the quantile is found on the tail
    for diffs in ([1.0, 2.0], [1.0, 2.0, 4.0], [float(i % 5) for i in range(30)]):
        result = stats.paired(diffs, alpha)
        n = len(diffs)
        margin = scipy_stats.t.isf(alpha / 2, n - 1) * float(scipy_stats.tstd(diffs)) / math.sqrt(n)
        assert result.ci_high is not None and math.isfinite(result.ci_high)
        assert math.isclose(result.ci_high - (result.mean_diff or 0), margin, rel_tol=1e-6)


def test_identical_differences_have_no_spread_whatever_their_rounding() -> None:
    for d in (0.28800000000000003, 0.1, 1 / 3, 2.0012 - 1.0013):
        result = stats.paired([d] * 7, ALPHA)
        assert (result.std_diff, result.mean_diff, result.ci_low, result.ci_high) == (0.0, d, d, d)
        assert result.t_statistic is None and result.effect_size_dz is None
