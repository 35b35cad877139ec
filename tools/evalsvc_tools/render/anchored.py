"""What people would say about every pair of a metric (E12, GET /evaluation/{id}/anchored), as
one line per metric with audit labels: `evalsvc evaluate` and `evalsvc report` print it."""

from __future__ import annotations

from typing import Any

from evalsvc_tools.render.figures import field


def _percent(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return f"{100 * value:.1f}"


def _count(value: Any, one: str, many: str) -> str:
    shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else field(value)
    return f"{shown} {one if value == 1 else many}"


def anchored_line(body: Any) -> str | None:
    """The line of one metric's anchored estimate (None when it has no audit label, or the
    answer is not one): what people would say with its interval, from how many audited pairs
    and judge scores, and what the judge alone says; below 2 labels, how many there are."""
    if not isinstance(body, dict):
        return None
    labeled = body.get("n_labeled")
    if not isinstance(labeled, int) or isinstance(labeled, bool) or labeled <= 0:
        return None
    judge = body.get("judge_only")
    alone = _percent(judge.get("estimate") if isinstance(judge, dict) else None)
    judge_says = f"the judge alone says {alone} %" if alone is not None else ""
    metric = f"metric {field(body.get('metric_idx'))}: "
    audited = _count(labeled, "audited pair", "audited pairs")
    estimate, low, high = (_percent(body.get(k)) for k in ("estimate", "ci_low", "ci_high"))
    if estimate is None or low is None or high is None:
        unlabeled = body.get("n_unlabeled")
        why = (
            ": at least 2 are needed"
            if labeled < 2
            else f" and {_count(unlabeled, 'other scored pair', 'other scored pairs')}: at "
            "least 2 of each are needed"
        )
        said = f"{metric}{audited}{why} for what people would say"
        return f"{said}; {judge_says}" if judge_says else said
    scores = _count(body.get("n_unlabeled"), "judge score", "judge scores")
    line = (
        f"{metric}people would say {estimate} % ({low}\u2013{high} %), from {audited} and {scores}"
    )
    return f"{line}; {judge_says}" if judge_says else line
