"""Statistics against scipy.stats (test-only) and their properties."""

from __future__ import annotations

import math
import random

import pytest
from evalsvc.statistics.scores import student_t_cdf, student_t_ppf, summarize
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

scores_on_scale = st.lists(
    st.integers(min_value=1, max_value=5).map(float), min_size=1, max_size=300
)


def scipy_summary(sample: list[float]) -> tuple[float, float, float, float]:
    n = len(sample)
    mean = sum(sample) / n
    sd = scipy_stats.tstd(sample)
    low, high = scipy_stats.t.interval(0.95, n - 1, loc=mean, scale=sd / math.sqrt(n))
    return mean, sd, max(1.0, low), min(5.0, high)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 7, 10, 29, 30, 100, 999, 9_999])
@pytest.mark.parametrize("p", [0.6, 0.9, 0.95, 0.975, 0.995])
def test_t_quantile_matches_scipy(df: int, p: float) -> None:
    assert student_t_ppf(p, df) == pytest.approx(scipy_stats.t.ppf(p, df), abs=1e-9)


@pytest.mark.parametrize("df", [1, 5, 50, 5_000])
@pytest.mark.parametrize("t", [-8.0, -1.5, 0.0, 0.3, 2.0, 40.0])
def test_t_cdf_matches_scipy(df: int, t: float) -> None:
    assert student_t_cdf(t, df) == pytest.approx(scipy_stats.t.cdf(t, df), abs=1e-12)


def test_summaries_match_scipy_over_many_random_samples() -> None:
    rng = random.Random(20261126)
    sizes = [2, 3, 4, 5, 10, 31, 100, 1000, 10_000] + [rng.randint(2, 10_000) for _ in range(40)]
    for n in sizes:
        kind = rng.choice(["integers", "floats", "skewed"])
        if kind == "integers":
            sample = [float(rng.randint(1, 5)) for _ in range(n)]
        elif kind == "floats":
            sample = [rng.uniform(1, 5) for _ in range(n)]
        else:
            sample = [5.0 if rng.random() < 0.9 else 1.0 for _ in range(n)]
        if len(set(sample)) == 1:
            continue
        summary = summarize(sample)
        mean, sd, low, high = scipy_summary(sample)
        assert summary.mean == pytest.approx(mean, abs=1e-6)
        assert summary.median == pytest.approx(
            float(scipy_stats.scoreatpercentile(sample, 50)), abs=1e-6
        )
        assert summary.std_dev == pytest.approx(sd, abs=1e-6)
        assert summary.ci_low == pytest.approx(low, abs=1e-6)
        assert summary.ci_high == pytest.approx(high, abs=1e-6)
        assert (summary.min, summary.max) == (min(sample), max(sample))
        assert summary.ci_confidence == 0.95


def test_one_score_says_nothing_about_spread() -> None:
    summary = summarize([4.0])
    assert (summary.mean, summary.median, summary.std_dev) == (4.0, 4.0, 0.0)
    assert (summary.ci_low, summary.ci_high) == (1.0, 5.0)


def test_all_equal_scores_have_a_point_interval() -> None:
    summary = summarize([3.0] * 50)
    assert (summary.std_dev, summary.ci_low, summary.ci_high) == (0.0, 3.0, 3.0)


def test_interval_is_clipped_to_the_scale() -> None:
    summary = summarize([1.0, 5.0])
    assert (summary.ci_low, summary.ci_high) == (1.0, 5.0)
    assert summary.std_dev == pytest.approx(math.sqrt(8))


def test_empty_input_is_refused() -> None:
    with pytest.raises(ValueError):
        summarize([])


@settings(max_examples=200, deadline=None)
@given(scores_on_scale)
def test_summary_properties(sample: list[float]) -> None:
    summary = summarize(sample)
    assert summary.min <= summary.median <= summary.max
    assert summary.min - 1e-12 <= summary.mean <= summary.max + 1e-12
    assert 1.0 <= summary.ci_low <= summary.mean + 1e-12
    assert summary.mean - 1e-12 <= summary.ci_high <= 5.0
    assert summary.std_dev >= 0.0
    assert summarize(list(reversed(sample))) == summary


@given(
    st.lists(
        st.one_of(
            st.integers(1, 5).map(float),
            st.floats(1.0, 5.0, allow_nan=False),
        ),
        min_size=1,
        max_size=200,
    ),
    st.lists(st.integers(1, 50), max_size=10),
)
@settings(deadline=None)  # the first example imports the scoring modules
def test_statistics_from_chunk_totals_equal_the_whole_bit_for_bit(
    scores: list[float], cuts: list[int]
) -> None:
    from evalsvc.logic.scored_pairs import summarize_result, summarize_totals, totals
    from evalsvc.models.datasets import DatasetKind
    from evalsvc.models.evaluations import EvaluationResult, ScoredPair

    pairs = [
        ScoredPair(f"p{k}", k, [value, 6.0 - value], ["r", "r"]) for k, value in enumerate(scores)
    ]
    chunks, start = [], 0
    for size in cuts:
        chunks.append(pairs[start : start + size])
        start += size
    chunks.append(pairs[start:])

    def result() -> EvaluationResult:
        return EvaluationResult("t", "ev", 0, "ds", DatasetKind.SEED, "m", ["a", "b"], "", 0, [])

    whole, parts = result(), result()
    summarize_result(whole, pairs)
    summarize_totals(parts, [totals(chunk, 2) for chunk in chunks if chunk])
    assert parts.summaries == whole.summaries
    # The histograms too: every score in its bin, floor(score + 0.5), whatever the chunks.
    assert parts.histograms == whole.histograms
    assert whole.histograms == [
        [sum(1 for p in pairs if math.floor(p.scores[m] + 0.5) == b) for b in range(1, 6)]
        for m in range(2)
    ]
    assert [[(low.pair_id, low.score) for low in m] for m in parts.lowest] == [
        [(low.pair_id, low.score) for low in m] for m in whole.lowest
    ]
