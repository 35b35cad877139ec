"""E13: a jury's aggregates and its judges' alpha against independent oracles: numpy's mean and
median, the krippendorff package's interval alpha, and the sums of chunks giving the whole's
figures."""

from __future__ import annotations

import json
import math

import krippendorff
import numpy as np
import pytest
from evalsvc.scoring.checks import Score
from evalsvc.scoring.jury import aggregate, nearest, verdict_of
from evalsvc.statistics.jury import JurySums
from hypothesis import given, settings
from hypothesis import strategies as st

# A judge's score: an integer 1-5, or (judge_samples k) the mean of k of them.
scores = st.one_of(
    st.integers(1, 5).map(float),
    st.lists(st.integers(1, 5), min_size=2, max_size=5).map(lambda xs: sum(xs) / len(xs)),
)


@st.composite
def juries(draw: st.DrawFn) -> list[list[float]]:
    judges = draw(st.integers(2, 5))
    return draw(
        st.lists(st.lists(scores, min_size=judges, max_size=judges), min_size=2, max_size=40)
    )


def oracle_alpha(rows: list[list[float]]) -> float | None:
    values = np.array(rows, dtype=float)
    if np.all(values == values.flat[0]):
        return None
    return float(krippendorff.alpha(reliability_data=values.T, level_of_measurement="interval"))


@settings(max_examples=300, deadline=None)
@given(juries())
def test_alpha_is_krippendorffs_interval_alpha(rows: list[list[float]]) -> None:
    sums = JurySums(len(rows[0]))
    for row in rows:
        sums.add(row)
    expected = oracle_alpha(rows)
    if expected is None:
        assert sums.alpha() is None
    else:
        assert sums.alpha() == pytest.approx(expected, abs=1e-9)
    means = np.array(rows).mean(axis=0)
    assert sums.means() == pytest.approx(list(means), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(juries(), st.data())
def test_chunks_add_up_to_the_whole(rows: list[list[float]], data: st.DataObject) -> None:
    judges = len(rows[0])
    cut = data.draw(st.integers(0, len(rows)))
    whole, first, second = JurySums(judges), JurySums(judges), JurySums(judges)
    for k, row in enumerate(rows):
        whole.add(row)
        (first if k < cut else second).add(row)
    # As a queued evaluation's chunks keep them: JSON, read back.
    merged = JurySums.from_json(judges, json.loads(json.dumps(first.as_json())))
    merged.merge(JurySums.from_json(judges, json.loads(json.dumps(second.as_json()))))
    assert merged.units == whole.units
    if whole.alpha() is None:
        assert merged.alpha() is None
    else:
        assert merged.alpha() == pytest.approx(whole.alpha(), abs=1e-12)
    assert merged.means() == pytest.approx(whole.means(), abs=1e-12)


def test_alpha_on_a_textbook_case() -> None:
    # Three judges who agree but on one pair: the formula written out by hand, and the package.
    rows = [[1.0, 1.0, 1.0], [3.0, 3.0, 3.0], [5.0, 5.0, 4.0]]
    sums = JurySums(3)
    for row in rows:
        sums.add(row)
    n = 9
    within = sum(2 * (3 * sum(x * x for x in r) - sum(r) ** 2) / 2 for r in rows)
    flat = [x for r in rows for x in r]
    expected_disagreement = 2 * (n * sum(x * x for x in flat) - sum(flat) ** 2) / (n * (n - 1))
    by_hand = 1 - (within / n) / expected_disagreement
    assert sums.alpha() == pytest.approx(by_hand, abs=1e-12)
    assert sums.alpha() == pytest.approx(oracle_alpha(rows), abs=1e-12)


def test_alpha_is_null_with_one_pair_or_one_value() -> None:
    one = JurySums(3)
    one.add([1.0, 3.0, 5.0])
    assert one.alpha() is None
    same = JurySums(2)
    for _ in range(10):
        same.add([4.0, 4.0])
    assert same.alpha() is None
    assert same.means() == [4.0, 4.0]
    assert JurySums(2).means() == [None, None]


@settings(max_examples=300, deadline=None)
@given(st.lists(scores, min_size=2, max_size=5))
def test_the_aggregates_are_numpys_mean_and_median(values: list[float]) -> None:
    assert aggregate(values, "mean") == pytest.approx(float(np.mean(values)), abs=1e-12)
    assert aggregate(values, "median") == pytest.approx(float(np.median(values)), abs=1e-12)
    for how in ("mean", "median"):
        value = aggregate(values, how)  # type: ignore[arg-type]
        index = nearest(values, value)
        distances = [abs(v - value) for v in values]
        assert distances[index] == min(distances)
        assert index == distances.index(min(distances))  # the first among equals


def test_the_reason_is_the_nearest_judges() -> None:
    verdicts = [Score(5.0, "a: five"), Score(2.0, "b: two"), Score(3.0, "c: three")]
    assert verdict_of(verdicts, "mean") == Score(pytest.approx(10 / 3), "c: three")
    assert verdict_of(verdicts, "median") == Score(3.0, "c: three")
    # Equally near: the first in the jury's order.
    tied = [Score(2.0, "a"), Score(4.0, "b")]
    assert verdict_of(tied, "mean") == Score(3.0, "a")
    assert verdict_of(tied, "median") == Score(3.0, "a")
    assert math.isclose(aggregate([1.0, 5.0, 5.0, 2.0], "median"), 3.5)
