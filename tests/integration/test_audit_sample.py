"""GET /evaluation/{id}/audit_sample: a uniform draw of the pairs the caller has not voted on,
the same until the caller votes; its contents, and every bad request."""

from __future__ import annotations

from collections import Counter

import pytest
from evalsvc.core.errors import InvalidInput
from evalsvc.logic import audit
from evalsvc.models.api_keys import Identity
from scipy import stats as scipy_stats

from tests import pinned_versions
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


def test_a_result_stored_before_it_pinned_its_version_shows_the_current_texts(
    acme: Tenant, result: str
) -> None:
    # Such a result has only the dataset as it is now: a pair gone from it has null texts
    pinned_versions.forget_inputs("acme", result)
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


def test_order_random_is_the_default(acme: Tenant, result: str) -> None:
    assert sample(acme, result, "metric_idx=1&n=10&order=random") == sample(acme, result)


def scores_by_pair(tenant: Tenant, results_id: str, metric_idx: int) -> dict[str, float]:
    body = ok(tenant.get(f"/evaluation/{results_id}?includeAllScores=true")).json()
    return {e["pair_id"]: e["score"] for e in body["all_scored_pairs"][metric_idx]}


@pytest.mark.parametrize("metric_idx", [0, 1])
def test_lowest_gives_the_callers_unvoted_pairs_lowest_score_first_ties_by_pair_id(
    acme: Tenant, result: str, metric_idx: int
) -> None:
    # Given the scores (metric 0, max_words: 1 or 5, many ties; metric 1, readability: spread)
    scores = scores_by_pair(acme, result, metric_idx)
    ranked = sorted(scores, key=lambda pair_id: (scores[pair_id], pair_id))
    assert len(set(scores.values())) < len(scores)  # there are ties to break

    body = sample(acme, result, f"metric_idx={metric_idx}&n=12&order=lowest")

    assert [p["pair_id"] for p in body["pairs"]] == ranked[:12]
    assert [p["score"] for p in body["pairs"]] == [scores[i] for i in ranked[:12]]
    assert body["unvoted"] == 40
    assert (body["eval_results_id"], body["metric_idx"]) == (result, metric_idx)
    dataset = {p["id"]: p for p in acme.get("/data/seed/ds").json()["data"]}
    for pair in body["pairs"]:
        assert (pair["input"], pair["output"]) == (
            dataset[pair["pair_id"]]["input"],
            dataset[pair["pair_id"]]["output"],
        )
        assert pair["reason"]


def test_lowest_leaves_out_the_pairs_the_caller_voted_on_for_the_metric(
    acme: Tenant, result: str
) -> None:
    scores = scores_by_pair(acme, result, 1)
    ranked = sorted(scores, key=lambda pair_id: (scores[pair_id], pair_id))
    # the caller votes on the two lowest from the queue, and on the fourth through an audit
    for pair_id, source in [(ranked[0], "review"), (ranked[1], "review"), (ranked[3], "audit")]:
        vote = {"pair_id": pair_id, "metric_idx": 1, "vote": -1, "source": source}
        ok(acme.put(f"/vote_eval_pair/{result}", vote))
    # votes that are not the caller's on this metric change nothing
    ok(voter(acme, "bo").put(f"/vote_eval_pair/{result}", {**vote, "pair_id": ranked[2]}))
    ok(acme.put(f"/vote_eval_pair/{result}", {**vote, "pair_id": ranked[4], "metric_idx": 0}))

    body = sample(acme, result, "metric_idx=1&n=5&order=lowest")

    assert [p["pair_id"] for p in body["pairs"]] == [ranked[2], *ranked[4:8]]
    assert body["unvoted"] == 37
    # the random draw leaves out the same pairs and counts the same
    drawn = sample(acme, result, "metric_idx=1&n=100")
    assert body["unvoted"] == drawn["unvoted"] == len(drawn["pairs"])
    assert {ranked[0], ranked[1], ranked[3]}.isdisjoint(p["pair_id"] for p in drawn["pairs"])


@pytest.mark.parametrize("order", ["highest", "", "RANDOM", "lowest,random"])
def test_a_bad_order_is_400_naming_the_orders_there_are(
    acme: Tenant, result: str, order: str
) -> None:
    response = acme.get(f"/evaluation/{result}/audit_sample?metric_idx=0&order={order}")

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error.startswith("order:") and "'random'" in error and "'lowest'" in error


def test_the_logic_refuses_an_order_it_does_not_know_too(acme: Tenant, result: str) -> None:
    who = Identity(tenant="acme", user="ann", user_email="", key_id="k")
    with pytest.raises(InvalidInput, match="order must be one of random, lowest, not 'highest'"):
        audit.audit_sample(who, result, 0, 1, 10**6, "highest")


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


def test_a_sample_shows_the_texts_that_were_scored_after_the_dataset_is_overwritten(
    acme: Tenant, result: str
) -> None:
    scored_texts = {p["id"]: p for p in acme.get("/data/seed/ds").json()["data"]}
    replacement = [
        {"id": pid, "input": "written again", "output": "other text"} for pid in scored_texts
    ]
    assert acme.post("/data/seed/ds", {"data": replacement}).status_code == 200

    body = sample(acme, result)

    for pair in body["pairs"]:
        assert pair["input"] == scored_texts[pair["pair_id"]]["input"]
        assert pair["output"] == scored_texts[pair["pair_id"]]["output"]

    # Past the replaced version's retention, the draw says when it expired
    pinned_versions.expire("acme", result, purged=True)
    gone = acme.get(f"/evaluation/{result}/audit_sample?metric_idx=1&n=10")
    assert gone.status_code == 410
    assert pinned_versions.EXPIRED_DAY in gone.json()["error"]
