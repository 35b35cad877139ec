"""Matching two results' scored pairs (logic.comparisons): the merge of two pair-id-ordered
streams, metrics matched by definition, the verdicts and the listed pairs, against a
straightforward reference that holds everything, and against scipy."""

from __future__ import annotations

import math
import random

import pytest
from evalsvc.logic import comparisons
from evalsvc.logic.comparisons import Tally, match_metrics, merge
from evalsvc.models.comparisons import CompareIn, MatchedMetric
from evalsvc.statistics import scores as stats
from evalsvc.statistics.error_bars import pairs_to_see
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

TOLERANCE = 1e-6
Scored = dict[str, list[float]]


def compare_streams(
    baseline: Scored,
    candidate: Scored,
    matched: list[MatchedMetric],
    *,
    threshold: float = 1.0,
    limit: int = 20,
    correction: str = "holm",
) -> comparisons.Comparison:
    body = CompareIn(
        baseline_id="b",
        candidate_id="c",
        regression_threshold=threshold,
        limit=limit,
        correction=correction,  # type: ignore[arg-type]
    )
    tally = Tally(matched, threshold, limit)
    merge(iter(sorted(baseline.items())), iter(sorted(candidate.items())), tally)
    return tally.comparison(body)


def reference_changes(
    baseline: Scored, candidate: Scored, matched: list[MatchedMetric], threshold: float
) -> tuple[list[tuple[str, int, float]], list[tuple[str, int, float]]]:
    """Every regression and improvement, sorted as docs/comparing-runs.md says, as (pair,
    metric, d)."""
    down, up = [], []
    for pid in sorted(baseline.keys() & candidate.keys()):
        for pos, m in enumerate(matched):
            d = candidate[pid][m.candidate_idx] - baseline[pid][m.baseline_idx]
            if d <= -threshold:
                down.append((pid, pos, d))
            elif d >= threshold:
                up.append((pid, pos, d))
    down.sort(key=lambda x: (x[2], x[1], x[0]))
    up.sort(key=lambda x: (-x[2], x[1], x[0]))
    return down, up


scores = st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0, 1.5, 4.25])
designs = st.integers(min_value=2, max_value=3).flatmap(
    lambda metrics: st.tuples(
        st.dictionaries(
            st.from_regex(r"[a-f0-9]{1,3}", fullmatch=True),
            st.lists(scores, min_size=metrics, max_size=metrics),
            max_size=40,
        ),
        st.dictionaries(
            st.from_regex(r"[a-f0-9]{1,3}", fullmatch=True),
            st.lists(scores, min_size=metrics, max_size=metrics),
            max_size=40,
        ),
        st.just(metrics),
    )
)


@settings(max_examples=150, deadline=None)
@given(designs, st.sampled_from([0.5, 1.0, 2.0]), st.integers(min_value=1, max_value=6))
def test_the_merge_matches_a_reference_that_holds_everything(
    design: tuple[Scored, Scored, int], threshold: float, limit: int
) -> None:
    baseline, candidate, count = design
    # The candidate's metrics in reverse order: matched by text, not by position.
    matched = [MatchedMetric(f"m{i}", i, count - 1 - i) for i in range(count)]

    found = compare_streams(baseline, candidate, matched, threshold=threshold, limit=limit)

    shared = baseline.keys() & candidate.keys()
    assert found.pairs_matched == len(shared)
    assert found.only_in_baseline == len(baseline.keys() - shared)
    assert found.only_in_candidate == len(candidate.keys() - shared)
    for pos, (metric, m) in enumerate(zip(found.metrics, matched, strict=True)):
        diffs = [candidate[p][m.candidate_idx] - baseline[p][m.baseline_idx] for p in shared]
        expected = stats.paired(diffs, 0.05)
        assert metric.stats == expected, pos
        if len(shared) >= 2:
            assert metric.baseline_mean == pytest.approx(
                sum(baseline[p][m.baseline_idx] for p in shared) / len(shared)
            )
            assert metric.candidate_mean == pytest.approx(
                sum(candidate[p][m.candidate_idx] for p in shared) / len(shared)
            )
        else:
            assert metric.baseline_mean is None and metric.verdict == "insufficient_data"
    down, up = reference_changes(baseline, candidate, matched, threshold)
    assert [(c.pair_id, c.metric, c.diff) for c in found.regressions] == down[:limit]
    assert [(c.pair_id, c.metric, c.diff) for c in found.improvements] == up[:limit]


def test_holm_and_verdicts_across_metrics_agree_with_scipy() -> None:
    # Given 30 shared pairs where metric 0 clearly improves, metric 1 clearly regresses and
    # metric 2 barely moves, and a few pairs on each side alone
    rng = random.Random(7)
    baseline: Scored = {}
    candidate: Scored = {}
    for i in range(30):
        b = [float(rng.randint(1, 4)), float(rng.randint(2, 5)), float(rng.randint(2, 4))]
        baseline[f"p{i:02d}"] = b
        candidate[f"p{i:02d}"] = [
            min(5.0, b[0] + rng.choice([0, 1, 1])),
            max(1.0, b[1] - rng.choice([0, 1, 2])),
            b[2] + [-1.0, 0.0, 1.0, 0.0, 1.0][i % 5],  # +6 over 30 pairs: within noise
        ]
    baseline["only-b"] = [1.0, 1.0, 1.0]
    candidate["only-c1"] = candidate["only-c2"] = [5.0, 5.0, 5.0]
    matched = [MatchedMetric(f"m{i}", i, i) for i in range(3)]

    found = compare_streams(baseline, candidate, matched)

    shared = sorted(baseline.keys() & candidate.keys())
    assert (found.pairs_matched, found.only_in_baseline, found.only_in_candidate) == (30, 1, 2)
    p_values = []
    for m, metric in enumerate(found.metrics):
        b = [baseline[p][m] for p in shared]
        c = [candidate[p][m] for p in shared]
        oracle = scipy_stats.ttest_rel(c, b)
        assert math.isclose(metric.stats.t_statistic or 0, oracle.statistic, rel_tol=TOLERANCE)
        assert math.isclose(metric.stats.p_value or 0, oracle.pvalue, rel_tol=TOLERANCE)
        p_values.append(oracle.pvalue)
    # Holm by its definition, from scipy's p-values
    order = sorted(range(3), key=lambda i: p_values[i])
    running = 0.0
    holm = [0.0] * 3
    for j, i in enumerate(order):
        running = max(running, min(1.0, (3 - j) * p_values[i]))
        holm[i] = running
    for metric, expected in zip(found.metrics, holm, strict=True):
        assert math.isclose(metric.p_adjusted or 0, expected, rel_tol=TOLERANCE)
    assert [m.verdict for m in found.metrics] == [
        "improved",
        "regressed",
        "no_significant_difference",
    ]

    raw = compare_streams(baseline, candidate, matched, correction="none")
    assert [m.p_adjusted for m in raw.metrics] == [m.stats.p_value for m in raw.metrics]


def test_a_change_below_alpha_only_before_holm_is_not_a_verdict_after_it() -> None:
    # Given two metrics: one with p between alpha/2 and alpha, one with no change
    figures = stats.paired([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0], 0.05)
    assert figures.p_value is not None and 0.025 < figures.p_value < 0.05
    adjusted = stats.holm([figures.p_value, 0.9])

    assert comparisons.verdict(figures, figures.p_value, 0.05) == "improved"
    assert comparisons.verdict(figures, adjusted[0], 0.05) == "no_significant_difference"


def test_listed_pairs_break_ties_by_metric_order_then_pair_id() -> None:
    baseline = {"b": [5.0, 5.0], "a": [5.0, 5.0], "c": [5.0, 3.0]}
    candidate = {"b": [3.0, 3.0], "a": [3.0, 3.0], "c": [1.0, 3.0]}
    matched = [MatchedMetric("x", 0, 0), MatchedMetric("y", 1, 1)]

    found = compare_streams(baseline, candidate, matched, limit=4)

    assert [(c.pair_id, c.metric, c.diff) for c in found.regressions] == [
        ("c", 0, -4.0),
        ("a", 0, -2.0),
        ("b", 0, -2.0),
        ("a", 1, -2.0),
    ]
    assert found.improvements == []


def test_metrics_match_by_exact_text_in_the_baselines_order() -> None:
    baseline = ["Is it polite?", "check:non_empty", "Is it short?", "Is it polite?"]
    candidate = ["Is it short?", "is it polite?", "Is it polite?", "Is it polite?", "new"]

    assert match_metrics(baseline, candidate) == [
        MatchedMetric("Is it polite?", 0, 2),
        MatchedMetric("Is it short?", 2, 0),
        MatchedMetric("Is it polite?", 3, 3),
    ]
    assert match_metrics(["a"], ["A", "a "]) == []


def test_paired_counts_is_paired_of_the_counted_differences() -> None:
    rng = random.Random(3)
    diffs = [float(rng.randint(-4, 4)) for _ in range(500)]
    counts: dict[float, int] = {}
    for d in diffs:
        counts[d] = counts.get(d, 0) + 1
    assert stats.paired_counts(counts, 0.1) == stats.paired(diffs, 0.1)


def test_a_move_of_exactly_the_threshold_in_decimal_counts() -> None:
    # 2.0012 - 1.0012 is 0.9999999999999998 in floats
    found = compare_streams({"a": [2.0012]}, {"a": [1.0012]}, [MatchedMetric("x", 0, 0)])
    up = compare_streams({"a": [1.0012]}, {"a": [2.0012]}, [MatchedMetric("x", 0, 0)])

    assert [c.pair_id for c in found.regressions] == ["a"]
    assert [c.pair_id for c in up.improvements] == ["a"]


def _paired(diffs: list[float]) -> stats.Paired:
    return stats.paired_counts({d: diffs.count(d) for d in set(diffs)}, 0.05)


def test_pairs_to_see_the_observed_difference_against_scipy() -> None:
    diffs = [1.0, -1.0, 2.0, 0.0, 1.0, 3.0, -2.0, 1.0]
    figures = _paired(diffs)
    assert figures.mean_diff is not None and figures.std_diff is not None
    z = scipy_stats.norm.ppf(0.975) + scipy_stats.norm.ppf(0.8)
    expected = math.ceil((z * figures.std_diff / figures.mean_diff) ** 2)
    assert pairs_to_see(figures, 0.05) == expected
    # a regression is as easy to see as an improvement of the same size
    assert pairs_to_see(_paired([-d for d in diffs]), 0.05) == expected


@pytest.mark.parametrize(
    "diffs",
    [
        [0.0, 0.0, 0.0],  # no difference to see
        [1.0, -1.0, 2.0, -2.0],  # mean 0 with spread
        [3.0],  # one pair: no spread
        [1e-300, 0.0, 5.0, -5.0],  # a difference too small for any count of pairs
    ],
)
def test_no_pairs_to_see_without_a_difference_or_a_spread(diffs: list[float]) -> None:
    assert pairs_to_see(_paired(diffs), 0.05) is None


def test_a_tally_without_a_threshold_keeps_no_moved_pairs() -> None:
    tally = Tally([MatchedMetric("x", 0, 0)], None, 5)
    merge(iter([("a", [1.0]), ("b", [5.0])]), iter([("a", [5.0]), ("b", [1.0])]), tally)
    assert tally.pairs_matched == 2
    assert tally.regressions == tally.improvements == []
