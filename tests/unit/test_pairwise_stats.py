"""Pairwise judging statistics (evalsvc.statistics.pairwise, E5) against their oracles,
to 1e-6: the Bradley-Terry fit against scipy.optimize.minimize of the same objective and
its intervals against numpy.linalg.pinv of the information matrix built with numpy; matchups
against scipy's binomtest (p and Wilson interval) and Holm by definition; Cohen's kappa by the
textbook formula from a numpy confusion matrix; the outcome rules as a table."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pytest
from evalsvc.statistics import pairwise as ps
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special
from scipy import stats as scipy_stats

TOLERANCE = 1e-6
Z = 1.959964
ALPHA = 0.05
Matrix = list[list[int]]


def close(mine: float | None, oracle: float) -> bool:
    return mine is not None and math.isclose(
        mine, float(oracle), rel_tol=TOLERANCE, abs_tol=TOLERANCE
    )


# ---- outcome -----------------------------------------------------------------------------------

# (order 1 shows (a, b), order 2 shows (b, a)) -> outcome
BOTH_ORDERS = [
    ("first", "second", "a"),  # a both times
    ("second", "first", "b"),  # b both times
    ("first", "first", "tie"),  # whichever was shown first: they disagree
    ("second", "second", "tie"),  # whichever was shown second
    ("tie", "tie", "tie"),
    ("first", "tie", "tie"),
    ("tie", "second", "tie"),
    ("second", "tie", "tie"),
    ("tie", "first", "tie"),
]


@pytest.mark.parametrize(("first_order", "second_order", "expected"), BOTH_ORDERS)
def test_both_orders_give_the_run_both_chose_else_a_tie(
    first_order: ps.Judgement, second_order: ps.Judgement, expected: ps.Outcome
) -> None:
    assert ps.outcome(first_order, second_order) == expected


@pytest.mark.parametrize(
    ("judgement", "expected"), [("first", "a"), ("second", "b"), ("tie", "tie")]
)
def test_one_order_gives_its_choice(judgement: ps.Judgement, expected: ps.Outcome) -> None:
    assert ps.outcome(judgement) == expected
    assert ps.outcome(judgement, None) == expected


def test_an_unknown_judgement_is_refused() -> None:
    with pytest.raises(ValueError, match="judgement"):
        ps.outcome("left")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="judgement"):
        ps.outcome("first", "A")  # type: ignore[arg-type]


# ---- position ----------------------------------------------------------------------------------


def test_position_counts_each_order_as_a_judgement() -> None:
    found = ps.position(
        {
            ("first", "second"): 5,  # consistent (a, a)
            ("second", "first"): 2,  # consistent (b, b)
            ("tie", "tie"): 1,  # consistent (tie, tie)
            ("first", "first"): 3,  # position bias: inconsistent
            ("tie", "second"): 1,  # inconsistent
            ("second", "second"): 0,  # a zero count is nothing
        },
        both_orders=True,
    )

    assert found == ps.Position(
        judgements=24, first_chosen=5 + 2 + 6, second_chosen=5 + 2 + 1, ties=3, consistency=8 / 12
    )


def test_consistency_is_null_with_one_order_or_no_comparison() -> None:
    one = ps.position({("first", None): 4, ("tie", None): 1, ("second", None): 2}, False)
    assert one == ps.Position(7, 4, 2, 1, None)
    assert ps.position({}, True) == ps.Position(0, 0, 0, 0, None)
    # byte-equal outputs are not judged; a comparison judged in one order only is not counted
    assert ps.position({("first", None): 3}, True).consistency is None


def test_a_second_order_without_both_orders_is_refused() -> None:
    with pytest.raises(ValueError, match="both_orders"):
        ps.position({("first", "second"): 1}, both_orders=False)


judgements = st.sampled_from(ps.JUDGEMENTS)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(judgements, judgements), max_size=40))
def test_position_follows_its_definition(pairs: list[tuple[ps.Judgement, ps.Judgement]]) -> None:
    found = ps.position(dict(Counter(pairs)), both_orders=True)
    flat = [j for pair in pairs for j in pair]
    run = {1: {"first": "a", "second": "b"}, 2: {"first": "b", "second": "a"}}
    same = sum(run[1].get(o1, "tie") == run[2].get(o2, "tie") for o1, o2 in pairs)

    assert found.judgements == 2 * len(pairs)
    assert (found.first_chosen, found.second_chosen, found.ties) == (
        flat.count("first"),
        flat.count("second"),
        flat.count("tie"),
    )
    assert found.consistency == (same / len(pairs) if pairs else None)
    # consistent exactly when the outcome is not a tie forced by disagreement
    for o1, o2 in pairs:
        consistent = run[1].get(o1, "tie") == run[2].get(o2, "tie")
        assert consistent == (ps.outcome(o1, o2) != "tie" or o1 == o2 == "tie")


# ---- matchups ----------------------------------------------------------------------------------


def holm_by_definition(p_values: list[float | None]) -> list[float | None]:
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    m = len(present)
    out: list[float | None] = [None] * len(p_values)
    for rank, (_, i) in enumerate(present, start=1):
        out[i] = max(min(1.0, (m - j + 1) * present[j - 1][0]) for j in range(1, rank + 1))
    return out


def check_matchups(
    ids: list[str], comparisons: dict[tuple[str, str, ps.Outcome], int], alpha: float = ALPHA
) -> list[ps.Matchup]:
    found = ps.matchups(ids, comparisons, alpha)
    pairs = list(itertools.combinations(ids, 2))
    assert [(m.a, m.b) for m in found] == pairs

    def count(a: str, b: str, result: ps.Outcome) -> int:
        flipped: ps.Outcome = "b" if result == "a" else "a" if result == "b" else "tie"
        return comparisons.get((a, b, result), 0) + comparisons.get((b, a, flipped), 0)

    p_values: list[float | None] = []
    for m in found:
        assert (m.a_wins, m.b_wins, m.ties) == (
            count(m.a, m.b, "a"),
            count(m.a, m.b, "b"),
            count(m.a, m.b, "tie"),
        )
        decided = m.a_wins + m.b_wins
        if decided == 0:
            assert m.win_rate is m.ci_low is m.ci_high is m.p_value is m.p_adjusted is None
            p_values.append(None)
            continue
        test = scipy_stats.binomtest(m.a_wins, decided, 0.5)
        wilson = test.proportion_ci(confidence_level=0.95, method="wilson")
        assert close(m.win_rate, m.a_wins / decided)
        assert close(m.p_value, test.pvalue)
        assert close(m.ci_low, wilson.low) and close(m.ci_high, wilson.high)
        p_values.append(float(test.pvalue))
    for m, oracle in zip(found, holm_by_definition(p_values), strict=True):
        if oracle is None:
            assert m.p_adjusted is None
        else:
            assert close(m.p_adjusted, oracle)
        if m.p_adjusted is not None and m.p_adjusted < alpha:
            assert m.verdict == ("a_better" if m.a_wins > m.b_wins else "b_better")
        else:
            assert m.verdict == "no_significant_difference"
    return found


def test_matchups_of_three_runs_agree_with_scipy_and_holm() -> None:
    ids = ["r1", "r2", "r3"]
    found = check_matchups(
        ids,
        {
            ("r1", "r2", "a"): 30,
            ("r1", "r2", "b"): 8,
            ("r1", "r2", "tie"): 5,
            ("r3", "r1", "a"): 12,  # the caller's a may be the later run: r3 beat r1
            ("r1", "r3", "a"): 10,
            ("r2", "r3", "tie"): 9,
        },
    )

    assert [m.verdict for m in found] == [
        "a_better",
        "no_significant_difference",
        "no_significant_difference",
    ]
    assert (found[1].a_wins, found[1].b_wins) == (10, 12)
    assert found[2].win_rate is None and found[2].ties == 9


def test_a_later_run_that_wins_clearly_is_b_better() -> None:
    found = check_matchups(["x", "y"], {("x", "y", "b"): 40, ("y", "x", "b"): 3})

    assert found[0].verdict == "b_better" and found[0].b_wins == 40 and found[0].a_wins == 3


@pytest.mark.parametrize("k", [2, 5, 8])
def test_random_matchups_agree_with_scipy(k: int) -> None:
    rng = random.Random(k)
    ids = [f"run-{i}" for i in range(k)]
    comparisons: dict[tuple[str, str, ps.Outcome], int] = {}
    for a, b in itertools.permutations(ids, 2):
        for result in ps.OUTCOMES:
            comparisons[(a, b, result)] = rng.choice([0, 0, 1, 3, 20, 200])
    check_matchups(ids, comparisons)


def test_matchups_refuse_unknown_runs_and_outcomes() -> None:
    with pytest.raises(ValueError, match="not between two of the runs"):
        ps.matchups(["a", "b"], {("a", "c", "a"): 1}, ALPHA)
    with pytest.raises(ValueError, match="not between two of the runs"):
        ps.matchups(["a", "b"], {("a", "a", "a"): 1}, ALPHA)
    with pytest.raises(ValueError, match="outcome"):
        ps.matchups(["a", "b"], {("a", "b", "win"): 1}, ALPHA)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="distinct"):
        ps.matchups(["a", "a"], {}, ALPHA)


# ---- Bradley-Terry -----------------------------------------------------------------------------


def weights_numpy(wins: Matrix, ties: Matrix) -> np.ndarray:
    w = np.asarray(wins, dtype=float) + np.asarray(ties, dtype=float) / 2 + 0.5
    np.fill_diagonal(w, 0.0)
    return w


def scipy_fit(wins: Matrix, ties: Matrix) -> np.ndarray:
    """theta (mean 0) maximising sum_{i != j} w_ij log sigma(theta_i - theta_j), by
    scipy.optimize.minimize over theta_1..theta_{k-1} with theta_0 = 0, then centred."""
    w = weights_numpy(wins, ties)
    k = len(w)

    def full(free: np.ndarray) -> np.ndarray:
        return np.concatenate([[0.0], free])

    def objective(free: np.ndarray) -> float:
        theta = full(free)
        return -float(np.sum(w * special.log_expit(theta[:, None] - theta[None, :])))

    def gradient(free: np.ndarray) -> np.ndarray:
        theta = full(free)
        n = w + w.T
        p = special.expit(theta[:, None] - theta[None, :])
        g = np.sum(w - n * p, axis=1)
        return np.asarray(-g[1:], dtype=float)

    def hessian(free: np.ndarray) -> np.ndarray:
        return np.asarray(information_numpy(full(free), w)[1:, 1:], dtype=float)

    result = optimize.minimize(
        objective,
        np.zeros(k - 1),
        jac=gradient,
        hess=hessian,
        method="trust-exact",
        options={"gtol": 1e-9},
    )
    theta = full(result.x)
    return np.asarray(theta - theta.mean(), dtype=float)


def information_numpy(theta: np.ndarray, w: np.ndarray) -> np.ndarray:
    n = w + w.T
    p = special.expit(theta[:, None] - theta[None, :])
    off = n * p * (1 - p)
    np.fill_diagonal(off, 0.0)
    return np.asarray(np.diag(off.sum(axis=1)) - off, dtype=float)


def check_fit(wins: Matrix, ties: Matrix) -> ps.BradleyTerry:
    fit = ps.bradley_terry(wins, ties)
    theta = np.asarray(fit.strengths)
    w = weights_numpy(wins, ties)
    assert all(math.isfinite(t) for t in fit.strengths)
    assert abs(theta.mean()) < 1e-12
    oracle = scipy_fit(wins, ties)
    for mine, theirs in zip(fit.strengths, oracle, strict=True):
        assert close(mine, theirs), (fit.strengths, oracle)
    # the fit is the maximum: its gradient, computed with numpy, is zero relative to the counts
    p = special.expit(theta[:, None] - theta[None, :])
    gradient = np.sum(w - (w + w.T) * p, axis=1)
    assert np.max(np.abs(gradient)) <= 1e-9 * max(1.0, float(np.max((w + w.T).sum(axis=1))))
    covariance = np.linalg.pinv(information_numpy(theta, w))
    assert np.allclose(np.asarray(fit.covariance), covariance, rtol=TOLERANCE, atol=TOLERANCE)
    return fit


def random_counts(rng: random.Random, k: int, high: int) -> tuple[Matrix, Matrix]:
    wins = [[0 if i == j else rng.randint(0, high) for j in range(k)] for i in range(k)]
    ties = [[0] * k for _ in range(k)]
    for i, j in itertools.combinations(range(k), 2):
        ties[i][j] = ties[j][i] = rng.randint(0, high)
    return wins, ties


@pytest.mark.parametrize(("k", "high", "seed"), [(8, 30, 1), (8, 3, 2), (5, 400, 3), (3, 10, 4)])
def test_random_counts_agree_with_scipy_and_numpy(k: int, high: int, seed: int) -> None:
    check_fit(*random_counts(random.Random(seed), k, high))


def test_two_runs_have_the_closed_form() -> None:
    # w_01 = 7 + 2/2 + 1/2, w_10 = 3 + 2/2 + 1/2: theta_0 - theta_1 = log(w_01 / w_10)
    fit = check_fit([[0, 7], [3, 0]], [[0, 2], [2, 0]])
    assert close(fit.strengths[0] - fit.strengths[1], math.log(8.5 / 4.5))
    assert close(fit.strengths[0], -fit.strengths[1])


@pytest.mark.parametrize("count", [1, 50, 100_000])
def test_a_run_that_wins_every_comparison_stays_finite(count: int) -> None:
    k = 6
    wins = [[count if i == 0 and j != 0 else 0 for j in range(k)] for i in range(k)]
    fit = check_fit(wins, [[0] * k for _ in range(k)])

    assert fit.strengths[0] == max(fit.strengths)
    assert all(close(t, fit.strengths[1]) for t in fit.strengths[1:])


def test_all_ties_give_strength_zero_and_equal_intervals() -> None:
    k = 5
    ties = [[0 if i == j else 40 for j in range(k)] for i in range(k)]
    fit = check_fit([[0] * k for _ in range(k)], ties)

    assert fit.strengths == (0.0,) * k
    assert all(close(fit.covariance[i][i], fit.covariance[0][0]) for i in range(k))
    rows = ps.leaderboard(
        ["e", "d", "c", "b", "a"],
        {(a, b, "tie"): 20 for a, b in itertools.permutations("abcde", 2)},
    )
    assert [row.result_id for row in rows] == ["e", "d", "c", "b", "a"]  # the given order
    assert len({round(row.ci_high - row.ci_low, 12) for row in rows}) == 1


def test_one_shared_pair_is_one_comparison_between_every_two_runs() -> None:
    k = 5
    # one pair id: each two runs compared once, run i beating every later run
    wins = [[1 if i < j else 0 for j in range(k)] for i in range(k)]
    fit = check_fit(wins, [[0] * k for _ in range(k)])
    assert list(fit.strengths) == sorted(fit.strengths, reverse=True)


def test_runs_compared_only_through_the_pseudo_count_stay_connected() -> None:
    k = 4
    wins = [[0] * k for _ in range(k)]
    wins[0][1] = 9
    fit = check_fit(wins, [[0] * k for _ in range(k)])
    first, second, third, fourth = fit.strengths
    assert first > third > second and close(third, fourth)


def test_a_hundred_thousand_comparisons_agree_with_scipy() -> None:
    rng = random.Random(100_000)
    k = 8
    true = [rng.gauss(0, 1.5) for _ in range(k)]
    wins = [[0] * k for _ in range(k)]
    ties = [[0] * k for _ in range(k)]
    pairs = list(itertools.combinations(range(k), 2))
    for _ in range(100_000):
        i, j = rng.choice(pairs)
        p = 1 / (1 + math.exp(true[j] - true[i]))
        u = rng.random()
        if u < 0.1:
            ties[i][j] += 1
            ties[j][i] += 1
        elif u < 0.1 + 0.9 * p:
            wins[i][j] += 1
        else:
            wins[j][i] += 1
    fit = check_fit(wins, ties)
    assert fit.iterations <= 10


def test_a_total_order_with_huge_counts_stays_finite() -> None:
    # each run beats every later one 10^6 times: gaps of ~ log(2·10^6) between neighbours and
    # sigma of differences near 100 in the likelihood
    k = 8
    wins = [[10**6 if i < j else 0 for j in range(k)] for i in range(k)]
    fit = check_fit(wins, [[0] * k for _ in range(k)])
    assert list(fit.strengths) == sorted(fit.strengths, reverse=True)
    assert fit.strengths[0] - fit.strengths[-1] > 50


def laplacian(rng: random.Random, k: int) -> list[list[float]]:
    weights = [[0.0] * k for _ in range(k)]
    for i, j in itertools.combinations(range(k), 2):
        weights[i][j] = weights[j][i] = rng.choice([1e-3, 0.25, 1.0, 7.5, 2e3]) * rng.random()
    return [[sum(weights[i]) if i == j else -weights[i][j] for j in range(k)] for i in range(k)]


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_the_pseudo_inverse_agrees_with_numpy(k: int) -> None:
    rng = random.Random(k)
    for _ in range(20):
        matrix = laplacian(rng, k)
        mine = np.asarray(ps.information_pinv(matrix))
        theirs = np.linalg.pinv(np.asarray(matrix), hermitian=True)
        assert np.allclose(mine, theirs, rtol=TOLERANCE, atol=TOLERANCE * np.abs(theirs).max())
        assert np.allclose(mine, mine.T, rtol=0, atol=1e-15 * np.abs(mine).max())


def test_bradley_terry_refuses_a_ragged_matrix() -> None:
    with pytest.raises(ValueError, match="k x k"):
        ps.bradley_terry([[0, 1], [1]], [[0, 0], [0, 0]])
    with pytest.raises(ValueError, match="k x k"):
        ps.bradley_terry([[0]], [[0]])


# ---- leaderboard -------------------------------------------------------------------------------


def test_the_leaderboard_ranks_by_strength_with_counts_and_intervals() -> None:
    ids = ["base", "tuned", "big"]
    comparisons: dict[tuple[str, str, ps.Outcome], int] = {
        ("base", "tuned", "b"): 30,
        ("base", "tuned", "a"): 10,
        ("base", "tuned", "tie"): 4,
        ("big", "base", "a"): 25,
        ("big", "base", "b"): 5,
        ("tuned", "big", "tie"): 6,
        ("tuned", "big", "a"): 11,
        ("tuned", "big", "b"): 12,
    }
    rows = ps.leaderboard(ids, comparisons)
    wins, ties = [[0, 10, 5], [30, 0, 11], [25, 12, 0]], [[0, 4, 0], [4, 0, 6], [0, 6, 0]]
    fit = check_fit(wins, ties)

    assert [row.rank for row in rows] == [1, 2, 3]
    assert [row.result_id for row in rows] == [
        ids[i] for i in sorted(range(3), key=lambda i: -fit.strengths[i])
    ]
    by_id = {row.result_id: row for row in rows}
    assert (by_id["base"].wins, by_id["base"].losses, by_id["base"].ties) == (15, 55, 4)
    assert (by_id["tuned"].wins, by_id["tuned"].losses, by_id["tuned"].ties) == (41, 22, 10)
    assert (by_id["big"].wins, by_id["big"].losses, by_id["big"].ties) == (37, 16, 6)
    for i, result_id in enumerate(ids):
        row = by_id[result_id]
        half = Z * math.sqrt(fit.covariance[i][i])
        assert row.strength == fit.strengths[i]
        assert close(row.ci_low, fit.strengths[i] - half)
        assert close(row.ci_high, fit.strengths[i] + half)


def test_two_runs_with_the_same_record_rank_in_the_given_order() -> None:
    # c beats both a and b 5 times; a and b split evenly: a and b are exchangeable
    comparisons: dict[tuple[str, str, ps.Outcome], int] = {
        ("c", "a", "a"): 5,
        ("c", "b", "a"): 5,
        ("a", "b", "a"): 3,
        ("a", "b", "b"): 3,
    }
    for ids in (["a", "b", "c"], ["b", "a", "c"], ["c", "b", "a"]):
        rows = ps.leaderboard(ids, comparisons)
        weaker = [row.result_id for row in rows[1:]]
        assert rows[0].result_id == "c"
        assert weaker == [i for i in ids if i != "c"]


counts = st.integers(min_value=0, max_value=60) | st.sampled_from([0, 0, 1, 500, 20_000])


@st.composite
def designs(draw: st.DrawFn) -> tuple[list[str], dict[tuple[str, str, ps.Outcome], int]]:
    k = draw(st.integers(min_value=2, max_value=8))
    ids = [f"r{i}" for i in range(k)]
    comparisons: dict[tuple[str, str, ps.Outcome], int] = {}
    for a, b in itertools.combinations(ids, 2):
        for result in ps.OUTCOMES:
            comparisons[(a, b, result)] = draw(counts)
    return ids, comparisons


@settings(max_examples=150, deadline=None)
@given(designs(), st.randoms(use_true_random=False))
def test_any_design_gives_a_finite_centred_ranking_whatever_the_labels(
    design: tuple[list[str], dict[tuple[str, str, ps.Outcome], int]], rng: random.Random
) -> None:
    ids, comparisons = design
    rows = ps.leaderboard(ids, comparisons)

    assert sorted(row.rank for row in rows) == list(range(1, len(ids) + 1))
    assert [row.rank for row in rows] == list(range(1, len(ids) + 1))
    assert sorted(row.result_id for row in rows) == sorted(ids)
    assert abs(math.fsum(row.strength for row in rows)) < 1e-9
    for row, below in itertools.pairwise(rows):
        assert row.strength >= below.strength - 1e-9
    for row in rows:
        assert all(math.isfinite(x) for x in (row.strength, row.ci_low, row.ci_high))
        assert row.ci_low <= row.strength <= row.ci_high
    assert sum(row.wins for row in rows) == sum(row.losses for row in rows)

    # relabel the runs (new names, new order) and swap the sides of some comparisons
    names = {old: f"s{rng.randrange(10**9)}-{old}" for old in ids}
    relabelled_ids = [names[i] for i in rng.sample(ids, len(ids))]
    flip = {"a": "b", "b": "a", "tie": "tie"}
    relabelled: dict[tuple[str, str, ps.Outcome], int] = Counter()
    for (a, b, result), count in comparisons.items():
        if rng.random() < 0.5:
            relabelled[(names[b], names[a], flip[result])] += count  # type: ignore[index]
        else:
            relabelled[(names[a], names[b], result)] += count
    again = {row.result_id: row for row in ps.leaderboard(relabelled_ids, relabelled)}
    for row in rows:
        other = again[names[row.result_id]]
        assert math.isclose(row.strength, other.strength, rel_tol=1e-9, abs_tol=1e-9)
        assert math.isclose(row.ci_low, other.ci_low, rel_tol=1e-9, abs_tol=1e-9)
        assert (row.wins, row.losses, row.ties) == (other.wins, other.losses, other.ties)


@settings(max_examples=40, deadline=None)
@given(designs())
def test_any_design_agrees_with_scipy(
    design: tuple[list[str], dict[tuple[str, str, ps.Outcome], int]],
) -> None:
    ids, comparisons = design
    k = len(ids)
    wins = [[0] * k for _ in range(k)]
    ties = [[0] * k for _ in range(k)]
    for (a, b, result), count in comparisons.items():
        i, j = ids.index(a), ids.index(b)
        if result == "a":
            wins[i][j] += count
        elif result == "b":
            wins[j][i] += count
        else:
            ties[i][j] += count
            ties[j][i] += count
    check_fit(wins, ties)


# ---- people's votes against the judge ----------------------------------------------------------


def kappa_textbook(pairs: Sequence[tuple[str, str]]) -> float | None:
    classes = ["a", "b", "tie"]
    confusion = np.zeros((3, 3))
    for judged, voted in pairs:
        confusion[classes.index(judged), classes.index(voted)] += 1
    n = confusion.sum()
    observed = np.trace(confusion) / n
    chance = float(np.sum(confusion.sum(axis=1) * confusion.sum(axis=0))) / n**2
    return None if chance == 1 else (observed - chance) / (1 - chance)


def check_judge_human(pairs: list[tuple[ps.Outcome, ps.Outcome]]) -> ps.JudgeHuman:
    found = ps.judge_human(dict(Counter(pairs)))
    n = len(pairs)
    assert found.votes == n
    if n == 0:
        assert found == ps.JudgeHuman(0, None, None, None, None)
        return found
    agree = sum(j == p for j, p in pairs)
    wilson = scipy_stats.binomtest(agree, n).proportion_ci(method="wilson")
    assert close(found.agreement, agree / n)
    assert close(found.ci_low, wilson.low) and close(found.ci_high, wilson.high)
    oracle = kappa_textbook(pairs)
    if oracle is None:
        assert found.kappa is None
    else:
        assert close(found.kappa, oracle)
    return found


def test_judge_human_agreement_and_kappa() -> None:
    tally: dict[tuple[ps.Outcome, ps.Outcome], int] = {
        ("a", "a"): 20,
        ("b", "b"): 15,
        ("tie", "tie"): 4,
        ("a", "b"): 3,
        ("tie", "a"): 6,
        ("b", "tie"): 2,
    }
    found = check_judge_human([pair for pair, n in tally.items() for _ in range(n)])
    assert found.agreement == 39 / 50


def test_kappa_is_null_when_chance_agreement_is_one() -> None:
    found = check_judge_human([("tie", "tie")] * 7)
    assert found.agreement == 1.0 and found.kappa is None
    assert check_judge_human([]).agreement is None


def test_an_unknown_vote_is_refused() -> None:
    with pytest.raises(ValueError, match="outcome"):
        ps.judge_human({("a", "left"): 1})  # type: ignore[dict-item]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ps.OUTCOMES), st.sampled_from(ps.OUTCOMES)), max_size=60))
def test_any_votes_agree_with_the_textbook(pairs: list[tuple[ps.Outcome, ps.Outcome]]) -> None:
    check_judge_human(pairs)
