"""The E12 formulas written again in numpy, independently of statistics/anchored.py: the test
oracle of the anchored estimate, its classical twin and the labels plan."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from evalsvc.statistics.error_bars import normal_ppf


def ppi_oracle(
    labeled: list[tuple[float, float]], unlabeled: list[float], alpha: float
) -> dict[str, Any]:
    """From the labeled pairs' (Y, f) and the unlabeled pairs' f: every figure of the route (its
    names) and the variances the labels plan uses (var_u, var_r, var_y)."""
    y = np.array([v for v, _ in labeled], dtype=float)
    f = np.array([p for _, p in labeled], dtype=float)
    u = np.array(unlabeled, dtype=float)
    n, big_n = len(y), len(u)
    z = normal_ppf(1 - alpha / 2)
    var_u = float(np.var(u, ddof=1))
    cov = float(np.cov(y, f, ddof=1)[0, 1])
    lam = 0.0 if var_u == 0 else float(np.clip(cov / ((1 + n / big_n) * var_u), 0, 1))
    r = y - lam * f
    estimate = lam * float(u.mean()) + float(r.mean())
    se = math.sqrt(lam**2 * var_u / big_n + float(np.var(r, ddof=1)) / n)
    se_c = float(np.std(y, ddof=1)) / math.sqrt(n)
    classical = float(y.mean())
    return {
        "n_labeled": n,
        "n_unlabeled": big_n,
        "estimate": estimate,
        "se": se,
        "ci_low": max(0.0, estimate - z * se),
        "ci_high": min(1.0, estimate + z * se),
        "lambda": lam,
        "effective_labels": n * (se_c / se) ** 2 if se > 0 else None,
        "classical": {
            "estimate": classical,
            "se": se_c,
            "ci_low": max(0.0, classical - z * se_c),
            "ci_high": min(1.0, classical + z * se_c),
        },
        "var_u": var_u,
        "var_r": float(np.var(r, ddof=1)),
        "var_y": float(np.var(y, ddof=1)),
    }
