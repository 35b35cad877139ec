"""Error bars that hold (evalsvc.statistics.error_bars, E6) against numpy and scipy, the
oracles, to 1e-6: the clustered standard error and interval (one cluster, every pair its
own cluster, clusters of one pair and of thousands, 100,000 items in 10,000 clusters), the
standard normal quantile over a wide grid including the tails, judge noise for k = 1..5, the
minimum detectable effect and the number of pairs a plan needs."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from evalsvc.statistics import error_bars
from evalsvc.statistics.error_bars import (
    ClusteredMean,
    clustered_mean,
    judge_noise_sd,
    mde,
    normal_ppf,
    pair_score,
    pairs_needed,
    plan,
    plan_sd,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

TOLERANCE = 1e-6


def close(mine: float | None, oracle: float, tolerance: float = TOLERANCE) -> bool:
    assert mine is not None
    return math.isclose(mine, float(oracle), rel_tol=tolerance, abs_tol=tolerance)


# ---- references --------------------------------------------------------------------------------


def numpy_clustered_se(keys: list[object], scores: list[float]) -> tuple[float, int]:
    """The formula of E6 in numpy: √(Σ_c (Σ_{i∈c} (s_i - s̄))²) / n, and G."""
    s = np.asarray(scores, dtype=np.float64)
    _, groups = np.unique(np.asarray([repr(k) for k in keys]), return_inverse=True)
    residual_sums = np.bincount(groups, weights=s - s.mean())
    return float(np.sqrt(np.sum(residual_sums**2)) / s.size), int(residual_sums.size)


def sandwich_clustered_se(keys: list[object], scores: list[float]) -> float:
    """The same by another road: the cluster-robust (CR0, no small-sample factor) sandwich
    variance of an intercept-only least-squares fit, (X'X)⁻¹ (Σ_c X_c'u_c u_c'X_c) (X'X)⁻¹, with
    the cluster membership as a one-hot matrix (no statsmodels)."""
    s = np.asarray(scores, dtype=np.float64)
    x = np.ones((s.size, 1))
    beta = np.linalg.lstsq(x, s, rcond=None)[0]
    u = s - x @ beta
    labels = sorted({repr(k) for k in keys})
    index = {label: j for j, label in enumerate(labels)}
    membership = np.zeros((s.size, len(labels)))
    membership[np.arange(s.size), [index[repr(k)] for k in keys]] = 1.0
    scores_by_cluster = membership.T @ (x * u[:, None])  # G x 1: X_c'u_c per cluster
    meat = scores_by_cluster.T @ scores_by_cluster
    bread = np.linalg.inv(x.T @ x)
    return float(np.sqrt((bread @ meat @ bread)[0, 0]))


def check_clustered(
    keys: list[object], scores: list[float], alpha: float = 0.05, sandwich: bool = True
) -> ClusteredMean:
    result = clustered_mean(zip(keys, scores, strict=True), alpha)
    se, groups = numpy_clustered_se(keys, scores)
    assert result.n == len(scores)
    assert result.clusters == groups
    assert result.confidence == pytest.approx(1 - alpha)
    assert close(result.mean, np.mean(scores))
    if groups < 2:
        assert (result.se_clustered, result.ci_low_clustered, result.ci_high_clustered) == (
            None,
            None,
            None,
        )
        return result
    assert close(result.se_clustered, se)
    if sandwich:
        assert close(result.se_clustered, sandwich_clustered_se(keys, scores))
    margin = scipy_stats.t.ppf(1 - alpha / 2, groups - 1) * se
    assert close(result.ci_low_clustered, np.mean(scores) - margin)
    assert close(result.ci_high_clustered, np.mean(scores) + margin)
    return result


# ---- clustered standard error ------------------------------------------------------------------


def test_one_cluster_has_no_interval() -> None:
    result = check_clustered(["topic"] * 20, [float(1 + i % 5) for i in range(20)])
    assert result.clusters == 1
    assert result.mean == 3.0


def test_one_item_has_no_interval() -> None:
    result = clustered_mean([("only", 4.0)])
    assert result == ClusteredMean(1, 1, 4.0, None, None, None, pytest.approx(0.95))


def test_no_items_is_an_error() -> None:
    with pytest.raises(ValueError, match="no scores"):
        clustered_mean([])


def test_non_finite_scores_are_an_error() -> None:
    with pytest.raises(ValueError, match="finite"):
        clustered_mean([(0, 1.0), (1, math.inf)])
    with pytest.raises(ValueError, match="finite"):
        clustered_mean([(0, 1.0), (1, math.nan)])


@pytest.mark.parametrize("alpha", [0.0, -0.1, 0.5, 1.0])
def test_alpha_outside_its_range_is_an_error(alpha: float) -> None:
    with pytest.raises(ValueError, match="alpha"):
        clustered_mean([(0, 1.0), (1, 2.0)], alpha)


@pytest.mark.parametrize("n", [2, 3, 10, 31, 1_000])
def test_every_pair_its_own_cluster_is_the_population_variance_se(n: int) -> None:
    rng = random.Random(n)
    scores = [rng.uniform(1, 5) for _ in range(n)]
    result = check_clustered(list(range(n)), scores)
    assert result.clusters == n
    assert close(result.se_clustered, np.std(scores, ddof=0) / math.sqrt(n))


def test_two_clusters_by_hand() -> None:
    # s̄ = 3; residual sums: (1-3)+(2-3) = -3 and (3-3)+(6-3) = 3 → √18 / 4.
    result = check_clustered(["a", "a", "b", "b"], [1.0, 2.0, 3.0, 6.0])
    assert result.se_clustered == pytest.approx(math.sqrt(18) / 4, rel=1e-15)
    margin = scipy_stats.t.ppf(0.975, 1) * math.sqrt(18) / 4
    assert result.ci_high_clustered == pytest.approx(3.0 + margin, rel=1e-12)


def test_clusters_of_one_pair_among_big_ones() -> None:
    rng = random.Random(7)
    keys: list[object] = []
    scores: list[float] = []
    for cluster in range(5):
        size = 1 if cluster % 2 else 400
        base = rng.uniform(1, 5)
        for _ in range(size):
            keys.append(("label", cluster))
            scores.append(min(5.0, max(1.0, base + rng.gauss(0, 0.5))))
    check_clustered(keys, scores)


def test_three_clusters_of_five_thousand() -> None:
    rng = random.Random(3)
    keys: list[object] = []
    scores: list[float] = []
    for cluster, centre in enumerate((2.0, 3.0, 4.5)):
        for _ in range(5_000):
            keys.append(f"topic-{cluster}")
            scores.append(float(min(5, max(1, round(rng.gauss(centre, 1.0))))))
    result = check_clustered(keys, scores, sandwich=False)
    assert result.clusters == 3
    # Shared topics widen the interval far beyond the independent-pairs one.
    assert result.se_clustered is not None
    assert result.se_clustered > 5 * np.std(scores, ddof=1) / math.sqrt(len(scores))


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.2])
def test_differences_at_one_minus_alpha(alpha: float) -> None:
    rng = random.Random(int(alpha * 1000))
    keys: list[object] = [rng.randint(0, 11) for _ in range(300)]
    diffs = [float(rng.randint(-4, 4)) for _ in keys]
    check_clustered(keys, diffs, alpha)


@pytest.mark.parametrize("clusters", [2, 3, 4, 7, 30, 200])
def test_t_quantile_with_g_minus_one_degrees_of_freedom(clusters: int) -> None:
    rng = random.Random(clusters)
    items = [(i % clusters, rng.uniform(1, 5)) for i in range(clusters * 5)]
    result = clustered_mean(items)
    assert result.se_clustered is not None and result.ci_high_clustered is not None
    t = (result.ci_high_clustered - result.mean) / result.se_clustered
    assert t == pytest.approx(scipy_stats.t.ppf(0.975, clusters - 1), abs=1e-9)


def test_random_designs_against_numpy() -> None:
    rng = random.Random(20261201)
    for _ in range(60):
        n = rng.randint(2, 2_000)
        g = rng.randint(1, n)
        keys: list[object] = [rng.randrange(g) for _ in range(n)]
        kind = rng.choice(["integers", "floats", "diffs"])
        if kind == "integers":
            scores = [float(rng.randint(1, 5)) for _ in range(n)]
        elif kind == "floats":
            scores = [rng.uniform(1, 5) for _ in range(n)]
        else:
            scores = [float(rng.randint(1, 5) - rng.randint(1, 5)) for _ in range(n)]
        check_clustered(keys, scores, sandwich=n <= 500)


def test_a_large_common_offset_does_not_cancel_the_residuals() -> None:
    rng = random.Random(11)
    keys: list[object] = [i % 40 for i in range(4_000)]
    noise = [rng.uniform(-1, 1) for _ in keys]
    plain = clustered_mean(zip(keys, noise, strict=True))
    shifted = clustered_mean(zip(keys, [1e8 + x for x in noise], strict=True))
    assert shifted.se_clustered == pytest.approx(plain.se_clustered, rel=1e-6)


def test_a_hundred_thousand_items_in_ten_thousand_clusters() -> None:
    rng = random.Random(100_000)
    keys: list[object] = [rng.randrange(10_000) for _ in range(100_000)]
    scores = [float(rng.randint(1, 5)) for _ in keys]
    result = check_clustered(keys, scores, sandwich=False)
    assert result.n == 100_000
    assert result.clusters == len(set(keys))


def test_items_are_read_once_from_an_iterator() -> None:
    items = iter([("a", 1.0), ("b", 2.0), ("a", 3.0), ("c", 5.0)])
    result = clustered_mean(items)
    assert (result.n, result.clusters, result.mean) == (4, 3, 2.75)


items_strategy = st.lists(
    st.tuples(st.integers(min_value=0, max_value=8), st.integers(min_value=1, max_value=5)),
    min_size=1,
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(items=items_strategy, seed=st.randoms(use_true_random=False))
def test_order_of_items_does_not_matter(items: list[tuple[int, int]], seed: random.Random) -> None:
    data = [(k, float(s)) for k, s in items]
    shuffled = list(data)
    seed.shuffle(shuffled)
    a, b = clustered_mean(data), clustered_mean(shuffled)
    assert (a.n, a.clusters) == (b.n, b.clusters)
    assert close(a.mean, b.mean, 1e-12)
    if a.se_clustered is None:
        assert b.se_clustered is None
    else:
        assert close(b.se_clustered, a.se_clustered, 1e-12)
        assert close(b.ci_low_clustered, a.ci_low_clustered or 0.0, 1e-12)


@settings(max_examples=200, deadline=None)
@given(
    items=items_strategy,
    factor=st.floats(min_value=1e-3, max_value=1e3, allow_nan=False, allow_infinity=False),
)
def test_scaling_the_scores_scales_the_se(items: list[tuple[int, int]], factor: float) -> None:
    data = [(k, float(s)) for k, s in items]
    a = clustered_mean(data)
    b = clustered_mean([(k, s * factor) for k, s in data])
    assert close(b.mean, a.mean * factor, 1e-9)
    if a.se_clustered is None:
        assert b.se_clustered is None
        return
    assert b.se_clustered is not None
    assert math.isclose(b.se_clustered, a.se_clustered * factor, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=150, deadline=None)
@given(items=items_strategy)
def test_hypothesis_designs_against_numpy(items: list[tuple[int, int]]) -> None:
    check_clustered([k for k, _ in items], [float(s) for _, s in items], sandwich=False)


# ---- the standard normal quantile --------------------------------------------------------------


NORMAL_GRID = sorted(
    {
        *[float(p) for p in np.logspace(-300, -1, 400)],
        *[float(p) for p in np.linspace(0.001, 0.999, 999)],
        *[1.0 - float(t) for t in np.logspace(-16, -1, 200)],
        1e-12,
        1.0 - 1e-12,
        0.02425,
        1 - 0.02425,
        0.5,
        0.8,
        0.975,
        0.025,
        0.995,
    }
)


def test_normal_quantile_matches_scipy_over_a_wide_grid() -> None:
    worst = max(
        abs(normal_ppf(p) - scipy_stats.norm.ppf(p)) / max(1.0, abs(scipy_stats.norm.ppf(p)))
        for p in NORMAL_GRID
    )
    assert worst < 1e-12


@pytest.mark.parametrize("p", [1e-12, 1e-6, 0.025, 0.2, 0.5, 0.8, 0.975, 1 - 1e-6, 1 - 1e-12])
def test_normal_quantile_at_named_points(p: float) -> None:
    assert normal_ppf(p) == pytest.approx(scipy_stats.norm.ppf(p), rel=1e-12, abs=1e-12)


def test_normal_quantile_is_antisymmetric_and_finite_at_the_ends() -> None:
    for p in (1e-12, 0.01, 0.3, 0.49):
        upper = 1.0 - p  # rounded; 1 - upper is then exact
        assert normal_ppf(upper) == -normal_ppf(1.0 - upper)
    assert normal_ppf(0.5) == 0.0
    assert math.isfinite(normal_ppf(5e-324))
    assert normal_ppf(5e-324) < -38


@pytest.mark.parametrize("p", [0.0, 1.0, -0.1, 1.5, math.nan])
def test_normal_quantile_outside_0_1_is_an_error(p: float) -> None:
    with pytest.raises(ValueError):
        normal_ppf(p)


# ---- judge noise -------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_judge_noise_against_numpy(k: int) -> None:
    rng = random.Random(k)
    samples = [[float(rng.randint(1, 5)) for _ in range(k)] for _ in range(500)]
    noise = judge_noise_sd(samples)
    if k == 1:
        assert noise is None
    else:
        oracle = math.sqrt(np.mean([np.var(s, ddof=1) for s in samples]))
        assert close(noise, oracle)
    for s in samples[:20]:
        assert close(pair_score(s), np.mean(s), 1e-12)


def test_judge_noise_of_steady_judges_is_zero() -> None:
    assert judge_noise_sd([[3.0, 3.0, 3.0], [5.0, 5.0, 5.0]]) == 0.0


def test_judge_noise_leaves_out_pairs_with_one_sample() -> None:
    assert judge_noise_sd([[1.0, 3.0], [4.0]]) == pytest.approx(math.sqrt(2.0))
    assert judge_noise_sd([[4.0], [2.0]]) is None
    assert judge_noise_sd([]) is None
    with pytest.raises(ValueError):
        judge_noise_sd([[]])
    with pytest.raises(ValueError):
        pair_score([])


# ---- power -------------------------------------------------------------------------------------


def z(p: float) -> float:
    return float(scipy_stats.norm.ppf(p))


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.2])
@pytest.mark.parametrize("n", [2, 3, 30, 1_000, 100_000])
@pytest.mark.parametrize("std_diff", [0.0, 0.3, 1.0, 2.7])
def test_mde_against_scipy(alpha: float, n: int, std_diff: float) -> None:
    oracle = (z(1 - alpha / 2) + z(0.8)) * std_diff / math.sqrt(n)
    assert close(mde(std_diff, n, alpha), oracle, 1e-12)


def test_mde_is_null_below_two_pairs_or_without_a_spread() -> None:
    assert mde(1.0, 1) is None
    assert mde(1.0, 0) is None
    assert mde(None, 50) is None
    with pytest.raises(ValueError):
        mde(-1.0, 10)
    with pytest.raises(ValueError):
        mde(1.0, 10, alpha=0.5)


def reference_pairs_needed(sd: float, effect: float, alpha: float, power: float) -> float:
    return ((z(1 - alpha / 2) + z(power)) * sd / effect) ** 2


def test_pairs_needed_against_scipy() -> None:
    rng = random.Random(20261202)
    checked = 0
    for _ in range(3_000):
        sd = rng.uniform(0.05, 3.0)
        effect = rng.uniform(0.01, 2.0)
        alpha = rng.choice([0.001, 0.01, 0.05, 0.1, rng.uniform(0.001, 0.49)])
        power = rng.choice([0.5, 0.8, 0.9, 0.95, 0.99, rng.uniform(0.5, 0.999)])
        x = reference_pairs_needed(sd, effect, alpha, power)
        if abs(x - round(x)) < 1e-6 * max(1.0, x):
            continue  # within rounding of an integer: the next test's business
        assert pairs_needed(sd, effect, alpha, power) == max(2, math.ceil(x))
        checked += 1
    assert checked > 2_900


@pytest.mark.parametrize("m", [2, 3, 7, 10, 16, 63, 64, 100, 385, 1_000, 12_345, 1_000_000])
@pytest.mark.parametrize("alpha,power", [(0.05, 0.8), (0.01, 0.9), (0.1, 0.5), (0.05, 0.95)])
def test_an_integer_up_to_rounding_is_not_rounded_up(m: int, alpha: float, power: float) -> None:
    # effect chosen so that x = m exactly in real arithmetic; in floats it lands a few ulps
    # either side of m, and must give m pairs, not m + 1.
    sd = 1.3
    effect = (z(1 - alpha / 2) + z(power)) * sd / math.sqrt(m)
    assert pairs_needed(sd, effect, alpha, power) == m
    # A real excess (x = m·(1 + 1e-7), a hundred times the tolerance) asks for one pair more;
    # a shortfall does not.
    assert pairs_needed(sd, effect / math.sqrt(1 + 1e-7), alpha, power) == m + 1
    assert pairs_needed(sd, effect * math.sqrt(1 + 1e-7), alpha, power) == m


def test_the_ceiling_tolerance_is_relative_and_small() -> None:
    assert error_bars.CEIL_TOLERANCE == 1e-9


def test_pairs_needed_is_at_least_two() -> None:
    assert pairs_needed(0.0, 0.5) == 2
    assert pairs_needed(0.01, 5.0) == 2


def test_the_textbook_case() -> None:
    # sd = effect, alpha 0.05, power 0.8: (1.95996 + 0.84162)² = 7.849 → 8 pairs.
    assert pairs_needed(1.0, 1.0) == 8
    # Cohen's d = 0.5 paired: 31.4 → 32 pairs.
    assert pairs_needed(1.0, 0.5) == 32


@pytest.mark.parametrize(
    "kwargs",
    [
        {"effect": 0.0},
        {"effect": -0.1},
        {"effect": math.nan},
        {"power": 0.49},
        {"power": 1.0},
        {"alpha": 0.0},
        {"alpha": 0.5},
        {"sd": -1.0},
        {"sd": math.inf},
        {"sd": 1e300, "effect": 1e-300},
        {"sd": 1.0, "effect": 1e-300},  # a finite ratio whose square overflows
    ],
)
def test_pairs_needed_rejects_what_e6_excludes(kwargs: dict[str, float]) -> None:
    arguments = {"sd": 1.0, "effect": 0.2, "alpha": 0.05, "power": 0.8} | kwargs
    with pytest.raises(ValueError):
        pairs_needed(**arguments)


def test_plan_sd_paired_with_a_candidate_unpaired_without() -> None:
    assert plan_sd(std_diff=0.7) == (0.7, True)
    sd, paired = plan_sd(std_dev=1.5)
    assert (sd, paired) == (pytest.approx(math.sqrt(2) * 1.5, rel=1e-15), False)
    assert plan_sd(std_dev=1.5, std_diff=0.7) == (0.7, True)
    with pytest.raises(ValueError):
        plan_sd()


def test_plan_bundles_the_sd_and_the_pairs() -> None:
    unpaired = plan(0.25, std_dev=1.0)
    x = reference_pairs_needed(math.sqrt(2.0), 0.25, 0.05, 0.8)
    assert (unpaired.sd, unpaired.pairs_needed, unpaired.paired) == (
        pytest.approx(math.sqrt(2.0)),
        math.ceil(x),
        False,
    )
    paired = plan(0.25, 0.01, 0.9, std_diff=0.8)
    assert paired.paired
    assert paired.pairs_needed == math.ceil(reference_pairs_needed(0.8, 0.25, 0.01, 0.9))


def test_the_service_module_imports_neither_scipy_nor_numpy() -> None:
    with open(error_bars.__file__, encoding="utf-8") as module:
        source = module.read()
    assert "scipy" not in source and "numpy" not in source
