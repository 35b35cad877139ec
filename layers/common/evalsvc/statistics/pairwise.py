"""Pairwise judging statistics (E5), standard library only: the outcome of a comparison judged in
both orders, position bias, one matchup per two runs (exact sign test, Wilson interval, Holm),
the Bradley-Terry leaderboard with its intervals, and how often people's pairwise votes agree
with the judge.

A comparison sets the outputs of two runs `a` and `b` for one pair id side by side. Order 1 shows
(a, b), order 2 shows (b, a); each judgement names the output shown "first" or "second", or
"tie". Comparisons are passed counted, {key: how many}, so 100,000 of them cost what their few
distinct keys cost (a queued pairwise job adds up the counts of its chunks).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from evalsvc.statistics.agreement import Z_95, wilson
from evalsvc.statistics.scores import holm, sign_test_p

Judgement = Literal["first", "second", "tie"]
Outcome = Literal["a", "b", "tie"]
Verdict = Literal["a_better", "b_better", "no_significant_difference"]

JUDGEMENTS: tuple[Judgement, ...] = get_args(Judgement)
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)

# One pseudo-comparison between every two runs, split evenly: w_ij gets 1/2 of it.
PSEUDO_COMPARISON = 1.0
# Newton-Raphson stops when every gradient component is at most this, or (when rounding allows
# no better) at most this times the largest number of comparisons one run takes part in.
GRADIENT_TOLERANCE = 1e-12
MAX_ITERATIONS = 200
# Strengths closer than this (natural log scale) are equal up to the fit's precision: they rank
# in the given run order.
RANK_TOLERANCE = 1e-9


# ---- one comparison ----------------------------------------------------------------------------


def _check_judgement(judgement: str) -> None:
    if judgement not in JUDGEMENTS:
        raise ValueError(f'a judgement is "first", "second" or "tie", not {judgement!r}')


def chosen(order: int, judgement: Judgement) -> Outcome:
    """The run a judgement chose: order 1 shows (a, b), order 2 shows (b, a)."""
    _check_judgement(judgement)
    if judgement == "tie":
        return "tie"
    if order == 1:
        return "a" if judgement == "first" else "b"
    return "b" if judgement == "first" else "a"


def outcome(first_order: Judgement, second_order: Judgement | None = None) -> Outcome:
    """The outcome of one comparison. With both orders judged (second_order not None): the run
    both orders chose, and "tie" when they disagree or either said "tie". With one order
    (both_orders false, second_order None): the run that order chose. Order 1 shows (a, b), so
    "first" there is `a`; order 2 shows (b, a), so "first" there is `b`."""
    picked = chosen(1, first_order)
    if second_order is None:
        return picked
    return picked if picked == chosen(2, second_order) else "tie"


# ---- position bias -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Position:
    """Over every judgement (each order of a comparison is one): how many there were and how
    many chose the output shown first, the one shown second, or a tie. consistency = share of
    the comparisons judged in both orders whose two orders chose the same run (a tie in both
    counts as the same); None without both_orders or without such a comparison."""

    judgements: int
    first_chosen: int
    second_chosen: int
    ties: int
    consistency: float | None


def position(
    comparisons: Mapping[tuple[Judgement, Judgement | None], int], both_orders: bool
) -> Position:
    """Position statistics of comparisons counted as {(first_order, second_order): how many},
    second_order None where only order 1 was judged (always, without both_orders)."""
    picks = dict.fromkeys(JUDGEMENTS, 0)
    both = consistent = 0
    for (first_order, second_order), count in comparisons.items():
        if count <= 0:
            continue
        _check_judgement(first_order)
        picks[first_order] += count
        if second_order is None:
            continue
        if not both_orders:
            raise ValueError("a second order was judged without both_orders")
        _check_judgement(second_order)
        picks[second_order] += count
        both += count
        if chosen(1, first_order) == chosen(2, second_order):
            consistent += count
    return Position(
        judgements=sum(picks.values()),
        first_chosen=picks["first"],
        second_chosen=picks["second"],
        ties=picks["tie"],
        consistency=consistent / both if both_orders and both else None,
    )


# ---- counts per two runs -----------------------------------------------------------------------


Comparisons = Mapping[tuple[str, str, Outcome], int]
"""Comparison outcomes counted as {(a, b, outcome): how many}; outcome is relative to that a and
b, and (b, a, "b") counts the same as (a, b, "a")."""


def _tally(
    result_ids: Sequence[str], comparisons: Comparisons
) -> tuple[list[list[int]], list[list[int]]]:
    """wins[i][j] = comparisons run i won over run j; ties[i][j] = ties[j][i] = ties between
    them (indices in result_ids order)."""
    index = {result_id: i for i, result_id in enumerate(result_ids)}
    if len(index) != len(result_ids) or len(index) < 2:
        raise ValueError("need at least 2 distinct result ids")
    k = len(result_ids)
    wins = [[0] * k for _ in range(k)]
    ties = [[0] * k for _ in range(k)]
    for (a, b, result), count in comparisons.items():
        if count <= 0:
            continue
        if a not in index or b not in index or a == b:
            raise ValueError(f"a comparison of {a!r} with {b!r} is not between two of the runs")
        i, j = index[a], index[b]
        if result == "a":
            wins[i][j] += count
        elif result == "b":
            wins[j][i] += count
        elif result == "tie":
            ties[i][j] += count
            ties[j][i] += count
        else:
            raise ValueError(f'an outcome is "a", "b" or "tie", not {result!r}')
    return wins, ties


# ---- matchups ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Matchup:
    """Two runs, `a` before `b` in the given run order. win_rate = a_wins / (a_wins + b_wins),
    with its Wilson 95 % interval; p_value = the exact two-sided binomial test of a_wins out of
    a_wins + b_wins at 1/2; p_adjusted = Holm's adjustment over every matchup. Rate, interval
    and p are None when a_wins + b_wins = 0. verdict: the side that won more is better when
    p_adjusted < alpha."""

    a: str
    b: str
    a_wins: int
    b_wins: int
    ties: int
    win_rate: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_adjusted: float | None
    verdict: Verdict


def matchups(result_ids: Sequence[str], comparisons: Comparisons, alpha: float) -> list[Matchup]:
    """One matchup per unordered pair of runs, (result_ids[i], result_ids[j]) for i < j in that
    order, with Holm's adjustment over all of them."""
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must be in (0, 1)")
    wins, ties = _tally(result_ids, comparisons)
    k = len(result_ids)
    pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
    p_values = [sign_test_p(wins[i][j], wins[j][i]) for i, j in pairs]
    adjusted = holm(p_values)
    found = []
    for (i, j), p, q in zip(pairs, p_values, adjusted, strict=True):
        a_wins, b_wins = wins[i][j], wins[j][i]
        decided = a_wins + b_wins
        rate = low = high = None
        if decided:
            rate = a_wins / decided
            low, high = wilson(a_wins, decided)
        verdict: Verdict = "no_significant_difference"
        if q is not None and q < alpha and a_wins != b_wins:
            verdict = "a_better" if a_wins > b_wins else "b_better"
        found.append(
            Matchup(
                a=result_ids[i],
                b=result_ids[j],
                a_wins=a_wins,
                b_wins=b_wins,
                ties=ties[i][j],
                win_rate=rate,
                ci_low=low,
                ci_high=high,
                p_value=p,
                p_adjusted=q,
                verdict=verdict,
            )
        )
    return found


# ---- Bradley-Terry -----------------------------------------------------------------------------


def _sigmoid(x: float) -> float:
    """The logistic sigma(x) = 1 / (1 + e^-x), without overflow for any finite x."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _log_sigmoid(x: float) -> float:
    """log sigma(x) = -log(1 + e^-x), without overflow or cancellation."""
    if x >= 0.0:
        return -math.log1p(math.exp(-x))
    return x - math.log1p(math.exp(x))


def _solve(
    matrix: Sequence[Sequence[float]], columns: Sequence[Sequence[float]]
) -> list[list[float]]:
    """X with matrix · X = B, B given (and X returned) as a list of columns, by Gaussian
    elimination with partial pivoting. Raises ValueError when the matrix is singular."""
    k = len(matrix)
    m = len(columns)
    # The augmented rows [matrix | B].
    rows = [[*matrix[r], *(column[r] for column in columns)] for r in range(k)]
    for c in range(k):
        pivot = max(range(c, k), key=lambda r: abs(rows[r][c]))
        if rows[pivot][c] == 0.0:
            raise ValueError("singular matrix")
        rows[c], rows[pivot] = rows[pivot], rows[c]
        head = rows[c]
        for r in range(c + 1, k):
            factor = rows[r][c] / head[c]
            if factor != 0.0:
                row = rows[r]
                for t in range(c, k + m):
                    row[t] -= factor * head[t]
    solution = [[0.0] * k for _ in range(m)]
    for s in range(m):
        for r in range(k - 1, -1, -1):
            row = rows[r]
            total = row[k + s] - math.fsum(row[t] * solution[s][t] for t in range(r + 1, k))
            solution[s][r] = total / row[r]
    return solution


def information_pinv(information: Sequence[Sequence[float]]) -> list[list[float]]:
    """The Moore-Penrose pseudo-inverse of a k x k information matrix I of Bradley-Terry: I is
    symmetric positive semi-definite with I·1 = 0 and rank k - 1 (every two runs are connected,
    here by the pseudo-comparison), so its null space is spanned by 1 and

        pinv(I) = inv(I + J/k) - J/k,        J the all-ones k x k matrix

    (I + J/k has I's eigenvalues on the complement of 1 and eigenvalue 1 on 1/sqrt(k), so it is
    invertible; subtracting J/k removes that eigenvalue again). The inverse is found by Gaussian
    elimination with partial pivoting (k <= 8 in the service)."""
    k = len(information)
    shift = 1.0 / k
    shifted = [[information[r][c] + shift for c in range(k)] for r in range(k)]
    identity = [[1.0 if r == c else 0.0 for r in range(k)] for c in range(k)]
    columns = _solve(shifted, identity)
    # inv of a symmetric matrix is symmetric: average away the rounding asymmetry.
    return [[(columns[c][r] + columns[r][c]) / 2.0 - shift for c in range(k)] for r in range(k)]


@dataclass(frozen=True, slots=True)
class BradleyTerry:
    """A Bradley-Terry fit: strengths theta (natural log scale, mean 0), the covariance
    C = pinv(information) at theta, and how many Newton-Raphson iterations it took."""

    strengths: tuple[float, ...]
    covariance: tuple[tuple[float, ...], ...]
    iterations: int


def _weights(wins: Sequence[Sequence[float]], ties: Sequence[Sequence[float]]) -> list[list[float]]:
    """w_ij = wins of i over j + 1/2 ties between them + 1/2 (i != j); w_ii = 0."""
    k = len(wins)
    half = PSEUDO_COMPARISON / 2.0
    return [
        [0.0 if i == j else wins[i][j] + ties[i][j] / 2.0 + half for j in range(k)]
        for i in range(k)
    ]


def _log_likelihood(theta: Sequence[float], w: Sequence[Sequence[float]]) -> float:
    k = len(theta)
    return math.fsum(
        w[i][j] * _log_sigmoid(theta[i] - theta[j]) for i in range(k) for j in range(k) if i != j
    )


def _gradient_information(
    theta: Sequence[float], w: Sequence[Sequence[float]]
) -> tuple[list[float], list[list[float]]]:
    """The log-likelihood's gradient g_i = sum_j (w_ij - n_ij p_ij) and the information matrix
    (minus its Hessian) at theta."""
    k = len(theta)
    gradient = []
    information = [[0.0] * k for _ in range(k)]
    for i in range(k):
        terms = []
        for j in range(k):
            if i == j:
                continue
            d = theta[i] - theta[j]
            n = w[i][j] + w[j][i]
            terms.append(w[i][j] - n * _sigmoid(d))
            information[i][j] = -n * _sigmoid(d) * _sigmoid(-d)
        gradient.append(math.fsum(terms))
        information[i][i] = -math.fsum(information[i][j] for j in range(k) if j != i)
    return gradient, information


def _centred(theta: Sequence[float]) -> list[float]:
    mean = math.fsum(theta) / len(theta)
    return [t - mean for t in theta]


def bradley_terry(wins: Sequence[Sequence[float]], ties: Sequence[Sequence[float]]) -> BradleyTerry:
    """The Bradley-Terry strengths of k >= 2 runs from wins[i][j] (comparisons i won over j) and
    ties[i][j] = ties[j][i] (ties between them): theta with mean 0 maximising

        L(theta) = sum_{i != j} w_ij log sigma(theta_i - theta_j),
        w_ij = wins_ij + ties_ij / 2 + 1/2

    (one pseudo-comparison split evenly between every two runs, so the maximum exists and is
    finite even for a run that wins everything). Its gradient is g_i = sum_j (w_ij - n_ij p_ij),
    its Hessian minus the information matrix

        I_ii = sum_j n_ij p_ij (1 - p_ij),   I_ij = -n_ij p_ij (1 - p_ij),
        n_ij = w_ij + w_ji,                  p_ij = sigma(theta_i - theta_j).

    L is concave and constant along 1, so Newton-Raphson from theta = 0 takes the step
    delta = pinv(I) g = inv(I + J/k) g (g sums to 0, so delta does too and the mean stays 0),
    halved while it would lower L (beyond rounding). It stops when every |g_i| <= 1e-12, or
    once every |g_i| <= 1e-12 times the largest sum_j n_ij and a step no longer shrinks the
    gradient: an absolute 1e-12 can be below the rounding of a gradient that sums 100,000
    comparisons. Newton converges quadratically here: 3-5 steps for typical counts, 15-25 when
    runs win 100,000 or more comparisons outright (theta far from 0). Covariance C = pinv(I) at
    the maximum (information_pinv)."""
    k = len(wins)
    if k < 2 or any(len(row) != k for row in (*wins, *ties)) or len(ties) != k:
        raise ValueError("wins and ties must be k x k matrices, k >= 2")
    w = _weights(wins, ties)
    scale = max(1.0, max(math.fsum(w[i][j] + w[j][i] for j in range(k)) for i in range(k)))
    tolerance = GRADIENT_TOLERANCE * scale
    theta = [0.0] * k
    shift = 1.0 / k
    likelihood = _log_likelihood(theta, w)
    gradient, information = _gradient_information(theta, w)
    iterations = 0
    previous = math.inf  # the largest |g_i| before the last step
    while iterations < MAX_ITERATIONS:
        largest = max(abs(g) for g in gradient)
        if largest <= GRADIENT_TOLERANCE or (largest <= tolerance and largest >= previous):
            break
        previous = largest
        iterations += 1
        shifted = [[information[r][c] + shift for c in range(k)] for r in range(k)]
        (step,) = _solve(shifted, [gradient])
        size, trial, trial_likelihood = 1.0, theta, likelihood
        while size >= 1e-12:
            trial = _centred([t + size * s for t, s in zip(theta, step, strict=True)])
            trial_likelihood = _log_likelihood(trial, w)
            if trial_likelihood >= likelihood - 1e-13 * (1.0 + abs(likelihood)):
                break
            size /= 2.0
        else:
            break  # no step raises L: as close as floating point gets
        if trial == theta:
            break  # the step is below the resolution of theta: as close as floating point gets
        theta, likelihood = trial, trial_likelihood
        gradient, information = _gradient_information(theta, w)
    covariance = information_pinv(information)
    return BradleyTerry(
        strengths=tuple(theta),
        covariance=tuple(tuple(row) for row in covariance),
        iterations=iterations,
    )


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """One run's Bradley-Terry strength (natural log scale, mean 0 over the runs) with its 95 %
    interval strength -/+ 1.959964 sqrt(C_ii), its rank (1 is best), and its wins, losses and
    ties over all its comparisons (without the pseudo-comparisons)."""

    result_id: str
    rank: int
    strength: float
    ci_low: float
    ci_high: float
    wins: int
    losses: int
    ties: int


def leaderboard(result_ids: Sequence[str], comparisons: Comparisons) -> list[LeaderboardRow]:
    """The runs ranked by Bradley-Terry strength (bradley_terry), strongest first; strengths
    equal up to the fit's precision (within 1e-9) rank in result_ids order."""
    wins, ties = _tally(result_ids, comparisons)
    fit = bradley_terry(wins, ties)
    k = len(result_ids)
    by_strength = sorted(range(k), key=lambda i: (-fit.strengths[i], i))
    # Runs whose strengths are within RANK_TOLERANCE of the first of their group form a group,
    # ordered by result_ids order.
    order: list[int] = []
    group: list[int] = []
    for i in by_strength:
        if group and fit.strengths[group[0]] - fit.strengths[i] > RANK_TOLERANCE:
            order.extend(sorted(group))
            group = []
        group.append(i)
    order.extend(sorted(group))
    rows = []
    for rank, i in enumerate(order, start=1):
        strength = fit.strengths[i]
        half = Z_95 * math.sqrt(max(0.0, fit.covariance[i][i]))
        rows.append(
            LeaderboardRow(
                result_id=result_ids[i],
                rank=rank,
                strength=strength,
                ci_low=strength - half,
                ci_high=strength + half,
                wins=sum(wins[i]),
                losses=sum(wins[j][i] for j in range(k)),
                ties=sum(ties[i]),
            )
        )
    return rows


# ---- people's pairwise votes against the judge -------------------------------------------------


@dataclass(frozen=True, slots=True)
class JudgeHuman:
    """How people's pairwise votes agree with the judge's outcomes of the same comparisons:
    agreement = share of votes equal to the judge's outcome, with its Wilson 95 % interval, and
    Cohen's kappa over the three classes a, b, tie,

        kappa = (p_o - p_e) / (1 - p_e),   p_e = sum_c (judge_c / n)(person_c / n),

    None when chance agreement p_e is 1 (or without votes)."""

    votes: int
    agreement: float | None
    ci_low: float | None
    ci_high: float | None
    kappa: float | None


def judge_human(votes: Mapping[tuple[Outcome, Outcome], int]) -> JudgeHuman:
    """Agreement of votes counted as {(judge_outcome, person_outcome): how many}."""
    n = agree = 0
    judge = dict.fromkeys(OUTCOMES, 0)
    person = dict.fromkeys(OUTCOMES, 0)
    for (judged, voted), count in votes.items():
        if count <= 0:
            continue
        if judged not in OUTCOMES or voted not in OUTCOMES:
            raise ValueError(f'an outcome is "a", "b" or "tie", not {judged!r} / {voted!r}')
        n += count
        judge[judged] += count
        person[voted] += count
        if judged == voted:
            agree += count
    if n == 0:
        return JudgeHuman(0, None, None, None, None)
    low, high = wilson(agree, n)
    # In whole numbers: kappa = (n·agree - sum_c judge_c·person_c) / (n² - sum_c ...), exact
    # up to the one division, and p_e = 1 is decided exactly.
    chance = sum(judge[c] * person[c] for c in OUTCOMES)
    kappa = None if chance == n * n else (n * agree - chance) / (n * n - chance)
    return JudgeHuman(n, agree / n, low, high, kappa)
