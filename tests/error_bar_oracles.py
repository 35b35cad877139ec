"""What the E6 tests share: pairs in topics, the scores a result holds, and the clustered
figures computed from the formula of docs/error-bars.md with numpy and scipy (the oracles)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats as scipy_stats

from tests.integration.conftest import Tenant, ok

WORDS = ["please", "thanks", "the", "answer", "is", "a", "long", "reply", "here", "now"]
CLUSTERED = ("clusters", "se_clustered", "ci_low_clustered", "ci_high_clustered")


def topic_pairs(ids: range, shift: int, labels: int) -> list[dict[str, Any]]:
    """Pairs p<i> in `labels` topics (every seventh unlabelled, every fifth sharing its input
    with the pair before it), whose outputs vary within and between topics; `shift` changes
    the outputs and the topics."""
    data = []
    for i in ids:
        topic = (i * 7919 + shift) % labels
        data.append(
            {
                "id": f"p{i:03d}",
                "input": f"question {i - 1 if i % 5 == 4 else i}",
                "output": " ".join(
                    WORDS[(i * shift + topic + k) % len(WORDS)] for k in range(1 + (i + topic) % 7)
                ),
                "labels": [] if (i + shift) % 7 == 6 else [f"topic {topic}", "other"],
            }
        )
    return data


def cluster_keys(data: list[dict[str, Any]], by: str) -> dict[str, str]:
    """Each pair's cluster as docs/error-bars.md defines it: its first label (an unlabelled pair its
    own) or its input."""
    if by == "input":
        return {p["id"]: "input " + p["input"] for p in data}
    return {p["id"]: p["labels"][0] if p["labels"] else "own " + p["id"] for p in data}


def scores_of(tenant: Tenant, results_id: str) -> dict[str, list[float]]:
    """Every scored pair's scores, by pair id."""
    read = ok(tenant.get(f"/evaluation/{results_id}?includeAllScores=true")).json()
    by_metric = [{p["pair_id"]: p["score"] for p in metric} for metric in read["all_scored_pairs"]]
    return {pid: [m[pid] for m in by_metric] for pid in by_metric[0]}


def oracle_clustered(values: list[float], keys: list[str], alpha: float = 0.05) -> dict[str, Any]:
    """G, se_clustered and the interval at 1 - alpha of the mean of `values`, in numpy and
    scipy; the figures null below 2 clusters."""
    s = np.asarray(values, dtype=float)
    mean = s.mean()
    names = sorted(set(keys))
    sums = np.array(
        [s[[k == name for k in keys]].sum() - mean * keys.count(name) for name in names]
    )
    if len(names) < 2:
        return dict.fromkeys(CLUSTERED, None) | {"clusters": len(names)}
    se = float(np.sqrt(np.sum(sums**2)) / len(s))
    t = float(scipy_stats.t.ppf(1 - alpha / 2, len(names) - 1))
    return {
        "clusters": len(names),
        "se_clustered": se,
        "ci_low_clustered": float(mean - t * se),
        "ci_high_clustered": float(mean + t * se),
    }
