"""Judge-human agreement statistics (evalsvc.statistics.agreement) against their oracles, to
1e-6: scipy's kendalltau and Mann-Whitney U for the AUC, and the E2 formulas (DeLong, Wilson,
Cohen's kappa, the threshold rule) computed the long way, over every pair of votes."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from evalsvc.models.agreement import MetricAgreement, metric_agreement_out
from evalsvc.statistics import agreement
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.agreement_oracle import Observation, assert_matches_oracle, close


def counted(observations: list[Observation]) -> dict[tuple[float, int], int]:
    return dict(Counter(observations))


def check(observations: list[Observation]) -> agreement.Agreement:
    found = agreement.agreement(counted(observations))
    assert_matches_oracle(metric_agreement_out(MetricAgreement(0, "m", found)), observations)
    return found


def test_a_single_vote_of_each_kind_has_an_auc_but_no_interval() -> None:
    found = check([(4.0, 1), (2.0, -1), (3.0, 0)])

    assert found.auc.auc == 1.0 and found.auc.ci_low is None
    assert found.threshold.threshold == 3 and found.threshold.kappa == 1.0


def test_ties_between_the_sides_count_a_half() -> None:
    found = check([(3.0, 1), (3.0, 1), (5.0, 1), (3.0, -1), (1.0, -1), (3.0, -1)])

    # each 3 beats the 1 and ties both 3s (2 each); the 5 beats all three
    assert found.auc.auc == pytest.approx((2 + 2 + 3) / 9)


def test_only_positive_votes_leave_the_auc_and_threshold_null() -> None:
    found = check([(5.0, 1), (4.0, 1), (2.0, 0)])

    assert found.kendall_tau_b is not None  # scores and votes both vary
    assert [row.positive_rate for row in found.calibration] == [1.0, 1.0]


def test_no_votes_is_all_null_and_an_empty_calibration() -> None:
    found = agreement.agreement({})

    assert found.votes == 0 and found.kendall_tau_b is None and found.calibration == []
    assert found.auc.auc is None and found.threshold.threshold is None


def test_a_constant_judge_has_no_tau_and_auc_one_half() -> None:
    found = check([(3.0, 1), (3.0, -1), (3.0, 1), (3.0, -1)])

    assert found.kendall_tau_b is None
    assert found.auc.auc == 0.5


def test_fractional_scores_bin_to_the_nearest_whole_score() -> None:
    assert [agreement.score_bin(s) for s in (1.0, 1.49, 1.5, 2.5, 4.99, 5.0, 0.2)] == [
        1,
        1,
        2,
        3,
        5,
        5,
        1,
    ]
    check([(1.5, 1), (2.49, -1), (4.75, 1), (3.2, -1), (3.2, 0), (4.5, 1)])


@pytest.mark.parametrize("n", [10, 200, 3000])
def test_random_designs_agree_with_the_oracles(n: int) -> None:
    rng = random.Random(n)
    observations = []
    for _ in range(n):
        score = float(rng.randint(1, 5))
        vote = rng.choices([1, 0, -1], weights=[score, 1, 6 - score])[0]
        observations.append((score, vote))
    check(observations)


observation_lists = st.lists(
    st.tuples(
        st.one_of(st.sampled_from([1.0, 2.0, 3.0, 4.0, 5.0]), st.floats(1.0, 5.0)),
        st.sampled_from([-1, 0, 1]),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(observation_lists)
def test_any_votes_agree_with_the_oracles(observations: list[Observation]) -> None:
    check(observations)


@settings(max_examples=200, deadline=None)
@given(observation_lists)
def test_flipping_every_vote_turns_auc_into_one_minus_auc(observations: list[Observation]) -> None:
    found = agreement.agreement(counted(observations))
    flipped = agreement.agreement(counted([(s, -v) for s, v in observations]))

    if found.auc.auc is None:
        assert flipped.auc.auc is None
    else:
        assert close(flipped.auc.auc, 1 - found.auc.auc)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=2, max_value=5),
    st.lists(st.integers(1, 5), min_size=1, max_size=30),
    st.lists(st.integers(1, 5), min_size=1, max_size=30),
)
def test_a_perfectly_separating_judge_has_auc_one_and_kappa_one(
    cut: int, above: list[int], below: list[int]
) -> None:
    # Given +1 votes on pairs scored at least `cut` and -1 votes on pairs scored below it
    observations = [(float(max(cut, s)), 1) for s in above]
    observations += [(float(min(cut - 1, s)), -1) for s in below]

    found = agreement.agreement(counted(observations))

    assert found.auc.auc == 1.0
    assert found.threshold.tpr == found.threshold.tnr == 1.0
    assert found.threshold.kappa == 1.0


@settings(max_examples=200, deadline=None)
@given(observation_lists)
def test_calibration_rows_sum_to_the_plus_and_minus_one_votes(
    observations: list[Observation],
) -> None:
    found = agreement.agreement(counted(observations))

    assert sum(row.votes for row in found.calibration) == found.positive + found.negative
    assert sum(round(row.positive_rate * row.votes) for row in found.calibration) == (
        found.positive
    )


def test_thresholds_that_tie_exactly_choose_the_smallest_despite_float_rounding() -> None:
    # Every threshold scores 9/10; in floats t=2 comes to 0.7 + 0.2 = 0.8999999999999999
    observations = [(1.0, 1)] * 3 + [(2.0, 1)] * 2 + [(5.0, 1)] * 5
    observations += [(1.0, -1)] * 1 + [(2.0, -1)] * 1 + [(5.0, -1)] * 3

    found = check(observations)

    assert found.threshold.threshold == 2
