"""People's agreement with each other (evalsvc.statistics.people): Krippendorff's alpha
(nominal) against the `krippendorff` package to 1e-9, on hand-computed cases and on generated
votes; percent agreement counted the long way, over every ordered pair of votes."""

from __future__ import annotations

import itertools
import math

import krippendorff
import numpy as np
import pytest
from evalsvc.statistics.people import krippendorff_nominal, people_agreement
from hypothesis import given, settings
from hypothesis import strategies as st

TOLERANCE = 1e-9


def oracle_alpha(units: list[list[int]]) -> float:
    """The package's alpha: one row per voter, one column per unit, NaN where a voter did not
    vote (each unit's k-th value is voter k's)."""
    voters = max(len(u) for u in units)
    data = np.full((voters, len(units)), np.nan)
    for column, values in enumerate(units):
        for row, value in enumerate(values):
            data[row, column] = value
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def percent_the_long_way(units: list[list[int]]) -> float | None:
    agreeing = total = 0
    for values in units:
        if len(values) < 2:
            continue
        for a, b in itertools.permutations(range(len(values)), 2):
            total += 1
            agreeing += values[a] == values[b]
    return agreeing / total if total else None


def test_a_hand_computed_case() -> None:
    # Coincidences: [1,1,-1] gives (1,1) 2/2, (1,-1) 2/2, (-1,1) 2/2; [0,0] (0,0) 2/1;
    # [1,-1] (1,-1) 1, (-1,1) 1; [1] nothing. n_1 = 3, n_-1 = 2, n_0 = 2, n = 7.
    # D_o = 4/7; D_e = 2 (3*2 + 3*2 + 2*2) / (7*6) = 32/42.
    # alpha = 1 - (4/7) / (32/42) = 1 - 168/224 = 0.25
    units = [[1, 1, -1], [0, 0], [1, -1], [1]]

    pairs_multi, alpha, percent = krippendorff_nominal(units)

    assert pairs_multi == 3
    assert alpha == pytest.approx(0.25, abs=TOLERANCE)
    assert math.isclose(oracle_alpha(units), 0.25, abs_tol=TOLERANCE)
    assert percent == pytest.approx(4 / 10)  # 2 of 6 in the first, 2 of 2, 0 of 2


def test_perfect_agreement_is_one() -> None:
    units = [[1, 1], [-1, -1, -1], [0, 0], [1, 1, 1]]

    assert krippendorff_nominal(units) == (4, 1.0, 1.0)


def test_every_vote_alike_has_no_expected_disagreement_so_no_alpha() -> None:
    assert krippendorff_nominal([[1, 1], [1, 1, 1]]) == (2, None, 1.0)


def test_one_shared_pair_has_a_percent_but_no_alpha() -> None:
    assert krippendorff_nominal([[1, -1, -1], [1], [0]]) == (1, None, pytest.approx(2 / 6))


def test_no_shared_pair_has_neither() -> None:
    assert krippendorff_nominal([[1], [-1], []]) == (0, None, None)
    assert krippendorff_nominal([]) == (0, None, None)


def test_systematic_disagreement_is_below_zero() -> None:
    units = [[1, -1], [-1, 1], [1, -1], [-1, 1]]

    _, alpha, percent = krippendorff_nominal(units)

    assert alpha is not None and alpha < 0 and percent == 0.0
    assert math.isclose(alpha, oracle_alpha(units), abs_tol=TOLERANCE)


def test_the_figures_carry_the_reviewers() -> None:
    found = people_agreement([[1, 1], [0, 1]], reviewers=3)

    assert (found.reviewers, found.pairs_multi, found.percent_agreement) == (3, 2, 0.5)
    assert found.alpha is not None
    assert math.isclose(found.alpha, oracle_alpha([[1, 1], [0, 1]]), abs_tol=TOLERANCE)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from([-1, 0, 1]), min_size=0, max_size=6), min_size=1, max_size=30)
)
def test_generated_votes_match_the_package(units: list[list[int]]) -> None:
    pairs_multi, alpha, percent = krippendorff_nominal(units)

    shared = [u for u in units if len(u) >= 2]
    assert pairs_multi == len(shared)
    assert percent == pytest.approx(percent_the_long_way(units), abs=TOLERANCE)
    values = {v for u in shared for v in u}
    if len(shared) < 2 or len(values) < 2:
        assert alpha is None
    else:
        assert alpha is not None
        assert math.isclose(alpha, oracle_alpha(shared), abs_tol=TOLERANCE)
        # units of a single vote change nothing (the package ignores them too)
        if any(len(u) == 1 for u in units):
            assert math.isclose(alpha, oracle_alpha([u for u in units if u]), abs_tol=TOLERANCE)
