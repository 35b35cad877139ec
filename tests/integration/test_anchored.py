"""GET /evaluation/{id}/anchored and POST /plan with half_width (E12): what people would say
about every pair, from audit votes cast through the API, field by field against an independent
numpy implementation of the formulas over every scored pair GET /evaluation returns; review
votes and 0 votes left out, several people on one pair, the nulls below two labels, the labels
plan, and the errors."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from evalsvc.statistics.error_bars import normal_ppf

from tests.anchored_oracle import ppi_oracle
from tests.integration.conftest import Tenant
from tests.integration.test_agreement import evaluated, scores_of, vote, voter

METRICS = ["check:readability", "check:max_words:6"]


def oracle(
    scores: dict[str, float], votes: list[tuple[str, int]], alpha: float = 0.05
) -> dict[str, Any]:
    """The route's answer by the numpy oracle: `scores` every scored pair's score, `votes` the
    ±1 audit votes as (pair, vote)."""
    ups: dict[str, list[int]] = {}
    for pair, value in votes:
        ups.setdefault(pair, []).append(value)
    labeled = [(float(np.mean([v > 0 for v in ups[p]])), (scores[p] - 1) / 4) for p in sorted(ups)]
    unlabeled = [(s - 1) / 4 for p, s in scores.items() if p not in ups]
    judge = float(np.mean([(s - 1) / 4 for s in scores.values()]))
    return {**ppi_oracle(labeled, unlabeled, alpha), "judge_only": {"estimate": judge}}


def assert_close(got: dict[str, Any], want: dict[str, Any]) -> None:
    for key, value in want.items():
        if key.startswith("var_"):
            continue
        if isinstance(value, dict):
            assert_close(got[key], value)
        elif value is None or isinstance(value, int):
            assert got[key] == value, key
        else:
            assert got[key] == pytest.approx(value, abs=1e-9, rel=1e-9), key


@pytest.fixture
def audited(acme: Tenant) -> tuple[str, list[dict[str, float]], list[list[tuple[str, int]]]]:
    """A 40-pair result on a graded and a pass/fail check; three people audit 14 pairs, one
    pair by all three and some by two, with 0 votes; review votes on other pairs. Returns the
    result, every pair's scores per metric, and per metric the ±1 audit votes."""
    assert acme.post("/specify_questions", {"metrics": METRICS}).status_code == 200
    results_id = evaluated(acme, count=40)
    scores = scores_of(acme, results_id)
    people = [acme, voter(acme, "bo"), voter(acme, "cy")]
    audit: list[list[tuple[str, int]]] = [[], []]
    for k, person in enumerate(people):
        for i in range(k * 4, k * 4 + 8):
            pair = f"p{i:02d}"
            for metric in (0, 1):
                judged_well = scores[metric][pair] >= 3
                value = 1 if judged_well != ((i * 7 + k + metric) % 5 == 0) else -1
                if (i + k) % 9 == 0:
                    value = 0  # unsure: not a label
                vote(person, results_id, pair, metric, value, source="audit")
                if value:
                    audit[metric].append((pair, value))
    for i in range(30, 36):  # chosen by score: never labels
        vote(acme, results_id, f"p{i:02d}", 0, -1, source="review")
        vote(people[1], results_id, f"p{i:02d}", 1, 1)
    return results_id, scores, audit


def test_the_anchored_estimate_matches_the_formulas_field_by_field(
    acme: Tenant, audited: tuple[str, list[dict[str, float]], list[list[tuple[str, int]]]]
) -> None:
    results_id, scores, audit = audited
    for metric in (0, 1):
        for alpha in (0.05, 0.2):
            response = acme.get(
                f"/evaluation/{results_id}/anchored?metric_idx={metric}&alpha={alpha}"
            )
            assert response.status_code == 200, response.text
            body = response.json()
            assert (body["eval_results_id"], body["metric_idx"]) == (results_id, metric)
            assert (body["metric"], body["alpha"]) == (METRICS[metric], alpha)
            want = oracle(scores[metric], audit[metric], alpha)
            assert want["n_labeled"] >= 10
            assert_close(body, want)


def test_review_votes_and_zero_votes_never_enter(
    acme: Tenant, audited: tuple[str, list[dict[str, float]], list[list[tuple[str, int]]]]
) -> None:
    results_id, _, _ = audited
    before = acme.get(f"/evaluation/{results_id}/anchored?metric_idx=0").json()
    for i in range(20, 30):
        vote(acme, results_id, f"p{i:02d}", 0, 1, source="review")
        vote(voter(acme, "di"), results_id, f"p{i:02d}", 0, 0, source="audit")

    after = acme.get(f"/evaluation/{results_id}/anchored?metric_idx=0").json()

    assert after == before


def test_below_two_labels_only_the_judge_is_answered(acme: Tenant) -> None:
    assert acme.post("/specify_questions", {"metrics": METRICS}).status_code == 200
    results_id = evaluated(acme, count=12)
    scores = scores_of(acme, results_id)
    vote(acme, results_id, "p03", 0, 1, source="audit")
    vote(acme, results_id, "p04", 0, 1)  # review

    for metric, labeled in ((0, 1), (1, 0)):
        body = acme.get(f"/evaluation/{results_id}/anchored?metric_idx={metric}").json()

        assert (body["n_labeled"], body["n_unlabeled"]) == (labeled, 12 - labeled)
        judge = np.mean([(s - 1) / 4 for s in scores[metric].values()])
        assert body["judge_only"]["estimate"] == pytest.approx(judge, abs=1e-12)
        nulls = ("estimate", "se", "ci_low", "ci_high", "lambda", "effective_labels")
        assert all(body[k] is None for k in nulls)
        assert set(body["classical"].values()) == {None}


def test_every_pair_labeled_leaves_no_unlabeled_pairs(acme: Tenant) -> None:
    assert acme.post("/specify_questions", {"metrics": METRICS[1:]}).status_code == 200
    results_id = evaluated(acme, count=4)
    for i in range(4):
        vote(acme, results_id, f"p{i:02d}", 0, 1 if i % 2 else -1, source="audit")

    body = acme.get(f"/evaluation/{results_id}/anchored?metric_idx=0").json()

    assert (body["n_labeled"], body["n_unlabeled"], body["estimate"]) == (4, 0, None)


def test_the_labels_plan_matches_the_formulas(
    acme: Tenant, audited: tuple[str, list[dict[str, float]], list[list[tuple[str, int]]]]
) -> None:
    results_id, scores, audit = audited
    for metric in (0, 1):
        for half_width, alpha in ((0.05, 0.05), (0.1, 0.1), (0.02, 0.05)):
            response = acme.post(
                "/plan",
                {
                    "result_id": results_id,
                    "metric_idx": metric,
                    "half_width": half_width,
                    "alpha": alpha,
                },
            )
            assert response.status_code == 200, response.text
            want = oracle(scores[metric], audit[metric], alpha)
            z2 = normal_ppf(1 - alpha / 2) ** 2
            denominator = (
                half_width**2 - z2 * want["lambda"] ** 2 * want["var_u"] / (want["n_unlabeled"])
            )
            needed = math.ceil(z2 * want["var_r"] / denominator) if denominator > 0 else None
            assert response.json() == {
                "labels_needed": needed,
                "classical_labels_needed": math.ceil(z2 * want["var_y"] / half_width**2),
                "labels_now": want["n_labeled"],
            }


def test_a_plan_needs_two_labels(acme: Tenant) -> None:
    assert acme.post("/specify_questions", {"metrics": METRICS}).status_code == 200
    results_id = evaluated(acme, count=6)
    vote(acme, results_id, "p01", 0, 1, source="audit")
    vote(acme, results_id, "p02", 0, -1)

    response = acme.post("/plan", {"result_id": results_id, "metric_idx": 0, "half_width": 0.1})

    assert response.status_code == 409
    assert "1 pair with audit votes" in response.json()["error"]
    assert "audit_sample" in response.json()["error"]


@pytest.fixture
def plain(acme: Tenant) -> str:
    """A 4-pair result nobody voted on (the checks of input come first)."""
    assert acme.post("/specify_questions", {"metrics": METRICS}).status_code == 200
    return evaluated(acme, count=4)


@pytest.mark.parametrize(
    "query",
    [
        "metric_idx=2",
        "metric_idx=-1",
        "metric_idx=x",
        "metric_idx=0&alpha=0",
        "metric_idx=0&alpha=0.5",
        "metric_idx=0&alpha=nan",
        "metric_idx=0&alpha=-0.1",
        "metric_idx=0&alpha=high",
        "",
    ],
)
def test_bad_queries_are_400s(acme: Tenant, plain: str, query: str) -> None:
    response = acme.get(f"/evaluation/{plain}/anchored?{query}")

    assert response.status_code == 400, response.text
    assert response.json()["error"]


@pytest.mark.parametrize(
    "body",
    [
        {"metric_idx": 5, "half_width": 0.05},
        {"metric_idx": 0, "half_width": 0},
        {"metric_idx": 0, "half_width": 1.5},
        {"metric_idx": 0, "half_width": "0.05"},
        {"metric_idx": False, "half_width": 0.05},
        {"metric_idx": 0},
        {"metric_idx": 0, "half_width": 0.05, "alpha": 0.7},
        {"metric_idx": 0, "half_width": 0.05, "effect": 0.5},
    ],
)
def test_bad_label_plans_are_400s(acme: Tenant, plain: str, body: dict[str, Any]) -> None:
    response = acme.post("/plan", {"result_id": plain, **body})

    assert response.status_code == 400, response.text
    assert response.json()["error"]


def test_malformed_and_unknown_ids(acme: Tenant, globex: Tenant, plain: str) -> None:
    results_id = plain

    assert acme.get("/evaluation/a%20b/anchored?metric_idx=0").status_code == 400
    assert globex.get(f"/evaluation/{results_id}/anchored?metric_idx=0").status_code == 404
    plan = {"result_id": results_id, "metric_idx": 0, "half_width": 0.1}
    assert globex.post("/plan", plan).status_code == 404
    assert acme.post("/plan", {**plan, "result_id": "a b"}).status_code == 400
