"""The oracles of judge-human agreement (E2): scipy's kendalltau and Mann-Whitney U, and the E2
formulas (DeLong, the threshold rule, Cohen's kappa, Wilson) computed the long way, over every
pair of votes. `assert_matches_oracle` checks one metric's figures, in the response's shape."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from scipy import stats as scipy_stats

TOLERANCE = 1e-6
Z = 1.959964
Observation = tuple[float, int]


def close(mine: float | None, oracle: float) -> bool:
    return mine is not None and math.isclose(mine, oracle, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def score_bin(score: float) -> int:
    return min(5, max(1, math.floor(score + 0.5)))


def psi(x: float, y: float) -> float:
    return 1.0 if x > y else 0.5 if x == y else 0.0


def delong_the_long_way(
    pos: list[float], neg: list[float]
) -> tuple[float, float | None, float | None]:
    m, n = len(pos), len(neg)
    auc = sum(psi(x, y) for x in pos for y in neg) / (m * n)
    if m < 2 or n < 2:
        return auc, None, None
    v10 = [sum(psi(x, y) for y in neg) / n for x in pos]
    v01 = [sum(psi(x, y) for x in pos) / m for y in neg]

    def var(values: list[float]) -> float:
        mean = sum(values) / len(values)
        return sum((v - mean) ** 2 for v in values) / (len(values) - 1)

    se = math.sqrt(var(v10) / m + var(v01) / n)
    return auc, max(0.0, auc - Z * se), min(1.0, auc + Z * se)


def threshold_the_long_way(observations: list[Observation]) -> tuple[int, float, float, float]:
    pos = [s for s, v in observations if v == 1]
    neg = [s for s, v in observations if v == -1]
    best = max(
        (
            Fraction(sum(s >= t for s in pos), len(pos))
            + Fraction(sum(s < t for s in neg), len(neg)),
            -t,
        )
        for t in (2, 3, 4, 5)
    )
    t = -best[1]
    tp = sum(s >= t for s in pos)
    tn = sum(s < t for s in neg)
    fp, fn = len(neg) - tn, len(pos) - tp
    total = len(pos) + len(neg)
    po = (tp + tn) / total
    pe = ((tp + fp) / total) * ((tp + fn) / total) + ((fn + tn) / total) * ((fp + tn) / total)
    return t, tp / len(pos), tn / len(neg), (po - pe) / (1 - pe)


def wilson_the_long_way(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = p + Z * Z / (2 * n)
    spread = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return (centre - spread) / (1 + Z * Z / n), (centre + spread) / (1 + Z * Z / n)


def assert_matches_oracle(got: dict[str, Any], observations: list[Observation]) -> None:
    """Every figure of one metric's agreement (as the response gives it) against the oracles."""
    pos = [s for s, v in observations if v == 1]
    neg = [s for s, v in observations if v == -1]
    assert (got["votes"], got["positive"], got["negative"], got["neutral"]) == (
        len(observations),
        len(pos),
        len(neg),
        len(observations) - len(pos) - len(neg),
    )
    if pos and neg:
        auc, low, high = delong_the_long_way(pos, neg)
        assert close(got["auc"], auc)
        u = scipy_stats.mannwhitneyu(pos, neg).statistic
        assert close(got["auc"], u / (len(pos) * len(neg)))
        assert (got["auc_ci_low"] is None) == (low is None)
        assert (got["auc_ci_high"] is None) == (high is None)
        if low is not None and high is not None:
            assert close(got["auc_ci_low"], low) and close(got["auc_ci_high"], high)
        t, tpr, tnr, kappa = threshold_the_long_way(observations)
        assert got["threshold"] == t
        assert close(got["tpr"], tpr) and close(got["tnr"], tnr)
        assert close(got["balanced_accuracy"], (tpr + tnr) / 2)
        assert close(got["kappa"], kappa)  # both kinds of vote: chance agreement < 1
    else:
        for name in ("auc", "auc_ci_low", "auc_ci_high", "threshold", "tpr", "tnr", "kappa"):
            assert got[name] is None, name
    scores = [s for s, _ in observations]
    votes = [v for _, v in observations]
    if len(set(scores)) > 1 and len(set(votes)) > 1:
        oracle = scipy_stats.kendalltau(scores, votes, variant="b").statistic
        assert close(got["kendall_tau_b"], float(oracle))
    else:
        assert got["kendall_tau_b"] is None
    bins = sorted({score_bin(s) for s, v in observations if v != 0})
    assert [row["score"] for row in got["calibration"]] == bins
    for row in got["calibration"]:
        inside = [v for s, v in observations if v != 0 and score_bin(s) == row["score"]]
        low, high = wilson_the_long_way(inside.count(1), len(inside))
        assert row["votes"] == len(inside)
        assert close(row["positive_rate"], inside.count(1) / len(inside))
        assert close(row["ci_low"], low) and close(row["ci_high"], high)
    for b in range(1, 6):
        for v in (-1, 0, 1):
            expected = sum(1 for s, x in observations if score_bin(s) == b and x == v)
            assert got["confusion"][str(b)][str(v)] == expected
