"""GET /evaluation/{id}/audit_sample: a uniform draw of the pairs the caller has not voted on,
the same until the caller votes; its contents, and every bad request."""

from __future__ import annotations

from collections import Counter

import pytest
from evalsvc.logic import audit
from evalsvc.models.api_keys import Identity
from scipy import stats as scipy_stats

from tests.integration.conftest import Tenant, ok
from tests.integration.test_agreement import evaluated, voter
from tests.lambda_support import invoke, load_event, with_body, with_path


@pytest.fixture
def result(acme: Tenant) -> str:
    assert (
        acme.post(
            "/specify_questions", {"metrics": ["check:max_words:6", "check:readability"]}
        ).status_code
        == 200
    )
    return evaluated(acme, count=40)


def sample(tenant: Tenant, results_id: str, query: str = "metric_idx=1&n=10") -> dict:  # type: ignore[type-arg]
    response = tenant.get(f"/evaluation/{results_id}/audit_sample?{query}")
    assert response.status_code == 200, response.text
    body: dict = response.json()  # type: ignore[type-arg]
    return body


def test_a_sample_holds_each_pair_with_its_texts_score_and_reason(
    acme: Tenant, result: str
) -> None:
    body = sample(acme, result)

    assert (body["eval_results_id"], body["metric_idx"], body["metric"]) == (
        result,
        1,
        "check:readability",
    )
    assert body["unvoted"] == 40 and len(body["pairs"]) == 10
    assert len({p["pair_id"] for p in body["pairs"]}) == 10
    dataset = {p["id"]: p for p in acme.get("/data/seed/ds").json()["data"]}
    scored = {
        e["pair_id"]: e
        for e in acme.get(f"/evaluation/{result}?includeAllScores=true").json()["all_scored_pairs"][
            1
        ]
    }
    for pair in body["pairs"]:
        assert pair["input"] == dataset[pair["pair_id"]]["input"]
        assert pair["output"] == dataset[pair["pair_id"]]["output"]
        assert (pair["score"], pair["reason"]) == (
            scored[pair["pair_id"]]["score"],
            scored[pair["pair_id"]]["reason"],
        )


def test_the_draw_stays_the_same_until_the_caller_votes(acme: Tenant, result: str) -> None:
    first = sample(acme, result)
    again = sample(acme, result)
    assert again == first

    # Someone else's vote changes nothing for this caller
    other = voter(acme, "bo")
    assert (
        other.put(
            f"/vote_eval_pair/{result}",
            {"pair_id": first["pairs"][0]["pair_id"], "metric_idx": 1, "vote": 1},
        ).status_code
        == 200
    )
    assert sample(acme, result) == first

    # The caller's audit vote on one of them lets the next pair in, keeping the other nine
    voted = first["pairs"][3]["pair_id"]
    body = {"pair_id": voted, "metric_idx": 1, "vote": -1, "source": "audit"}
    assert acme.put(f"/vote_eval_pair/{result}", body).status_code == 200
    after = sample(acme, result)
    kept = [p["pair_id"] for p in first["pairs"] if p["pair_id"] != voted]
    assert [p["pair_id"] for p in after["pairs"]][:9] == kept
    assert voted not in {p["pair_id"] for p in after["pairs"]}
    assert after["unvoted"] == 39

    # A vote on another metric does not count for this one
    assert acme.put(f"/vote_eval_pair/{result}", {**body, "metric_idx": 0}).status_code == 200
    assert sample(acme, result) == after


def test_people_get_different_draws_and_every_pair_is_drawn_as_often(
    acme: Tenant, result: str
) -> None:
    # Given 200 people each drawing one pair of the 40 (5 draws a pair expected)
    drawn: Counter[str] = Counter()
    for k in range(200):
        who = Identity(tenant="acme", user=f"user-{k}", user_email="", key_id="k")
        (pair,) = audit.audit_sample(who, result, 1, 1, 10**6).pairs
        drawn[pair.pair_id] += 1

    # Then the draw is uniform over the pairs (chi-square against equal counts)
    counts = [drawn.get(f"p{i:02d}", 0) for i in range(40)]
    assert sum(counts) == 200
    assert scipy_stats.chisquare(counts).pvalue > 0.001
    assert sample(acme, result) != sample(voter(acme, "cy"), result)


def test_fewer_unvoted_pairs_than_asked_gives_them_all(acme: Tenant) -> None:
    assert acme.post("/specify_questions", {"metrics": ["check:non_empty"]}).status_code == 200
    results_id = evaluated(acme, count=4)
    ok(acme.put(f"/vote_eval_pair/{results_id}", {"pair_id": "p01", "metric_idx": 0, "vote": 1}))

    body = sample(acme, results_id, "metric_idx=0&n=100")

    assert sorted(p["pair_id"] for p in body["pairs"]) == ["p00", "p02", "p03"]
    assert body["unvoted"] == 3


def test_a_pair_gone_from_the_dataset_has_null_texts(acme: Tenant, result: str) -> None:
    assert (
        acme.post(
            "/data/seed/ds", {"data": [{"id": "p00", "input": "new", "output": "new"}]}
        ).status_code
        == 200
    )

    body = sample(acme, result, "metric_idx=0&n=40")

    texts = {p["pair_id"]: (p["input"], p["output"]) for p in body["pairs"]}
    assert texts["p00"] == ("new", "new")
    assert texts["p01"] == (None, None)


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("metric_idx=2", "metric_idx 2 is out of range"),
        ("metric_idx=-1", "metric_idx"),
        ("n=5", "metric_idx"),
        ("metric_idx=x", "metric_idx"),
        ("metric_idx=0&n=0", "n"),
        ("metric_idx=0&n=101", "n"),
        ("metric_idx=0&n=ten", "n"),
    ],
)
def test_a_bad_metric_or_size_is_400_naming_it(
    acme: Tenant, result: str, query: str, named: str
) -> None:
    response = acme.get(f"/evaluation/{result}/audit_sample?{query}")

    assert response.status_code == 400, response.text
    assert named in response.json()["error"]


def test_unknown_results_are_404(acme: Tenant) -> None:
    response = acme.get("/evaluation/ev_nope/audit_sample?metric_idx=0")

    assert response.status_code == 404


def test_the_function_takes_its_event_file(event_key: str) -> None:
    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    invoke(
        "specify_questions",
        with_body(load_event("specify_questions"), {"metrics": ["check:max_words:4"]}),
    )
    results_id = invoke("evaluate", load_event("evaluate"))[1]["eval_results_id"]

    status, body = invoke(
        "get_audit_sample", with_path(load_event("get_audit_sample"), id=results_id)
    )

    assert status == 200, body
    assert sorted(p["pair_id"] for p in body["pairs"]) == ["q1", "q2"]
