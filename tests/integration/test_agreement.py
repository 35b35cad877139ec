"""GET /evaluation/{id}/agreement and GET /question/{id}/agreement: the judge's scores against
people's votes, field by field against the oracles (scipy's kendalltau and Mann-Whitney U, the
E2 formulas over every pair of votes), from the scores GET /evaluation returns and the votes
cast; votes replaced, audit votes, pooling over a metrics set's results, and the errors."""

from __future__ import annotations

from typing import Any

import pytest
from evalsvc.logic import api_keys

from tests.agreement_oracle import assert_matches_oracle
from tests.integration.conftest import Tenant
from tests.lambda_support import invoke, load_event, with_path

METRICS = ["check:readability", "check:max_words:6", "check:contains:please"]
WORDS = ["please", "thanks", "the", "answer", "is", "a", "long", "reply", "here", "now"]


def evaluated(tenant: Tenant, dataset_id: str = "ds", count: int = 24) -> str:
    data = [
        {
            "id": f"p{i:02d}",
            "input": f"question {i}",
            "output": " ".join(WORDS[(i * 3 + k) % len(WORDS)] for k in range(2 + i % 8)),
        }
        for i in range(count)
    ]
    assert tenant.post(f"/data/seed/{dataset_id}", {"data": data}).status_code == 200
    response = tenant.post("/evaluate", {"seed_data_id": dataset_id})
    assert response.status_code == 200, response.text
    return str(response.json()["eval_results_id"])


def scores_of(tenant: Tenant, results_id: str) -> list[dict[str, float]]:
    body = tenant.get(f"/evaluation/{results_id}?includeAllScores=true").json()
    return [{e["pair_id"]: e["score"] for e in metric} for metric in body["all_scored_pairs"]]


def voter(tenant: Tenant, user: str) -> Tenant:
    key, _ = api_keys.create_key(tenant.name, user, f"{user}@{tenant.name}.test")
    return Tenant(tenant.http, tenant.name, key)


def vote(tenant: Tenant, results_id: str, pair_id: str, metric: int, value: int, **extra: Any):  # type: ignore[no-untyped-def]
    body = {"pair_id": pair_id, "metric_idx": metric, "vote": value, **extra}
    response = tenant.put(f"/vote_eval_pair/{results_id}", body)
    assert response.status_code == 200, response.text
    return response


@pytest.fixture
def voted(acme: Tenant) -> tuple[str, dict[int, list[tuple[float, int]]]]:
    """A 24-pair result; three people vote on metrics 0 and 2 (one replaces a vote), nobody on
    metric 1. Returns the result and, per metric, the (score, vote) observations."""
    assert acme.post("/specify_questions", {"metrics": METRICS}).status_code == 200
    results_id = evaluated(acme)
    scores = scores_of(acme, results_id)
    people = [acme, voter(acme, "bo"), voter(acme, "cy")]
    cast: dict[tuple[int, str, int], int] = {}
    for k, person in enumerate(people):
        for i in range(0, 24, 1 + k):
            pair = f"p{i:02d}"
            for metric in (0, 2):
                value = 1 if scores[metric][pair] >= 3 + (i + k) % 3 - 1 else -1
                if (i + k) % 7 == 0:
                    value = 0
                vote(acme if k == 0 else person, results_id, pair, metric, value)
                cast[(metric, pair, k)] = value
    # The first person changes their mind on one vote: only the new one counts.
    vote(acme, results_id, "p03", 0, -cast[(0, "p03", 0)] or 1)
    cast[(0, "p03", 0)] = -cast[(0, "p03", 0)] or 1
    observations: dict[int, list[tuple[float, int]]] = {0: [], 1: [], 2: []}
    for (metric, pair, _), value in cast.items():
        observations[metric].append((scores[metric][pair], value))
    return results_id, observations


def test_agreement_of_a_result_matches_the_oracles_field_by_field(
    acme: Tenant, voted: tuple[str, dict[int, list[tuple[float, int]]]]
) -> None:
    results_id, observations = voted

    response = acme.get(f"/evaluation/{results_id}/agreement")

    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["eval_results_id"], body["source"]) == (results_id, "all")
    assert "metrics_id" not in body
    assert [m["metric"] for m in body["metrics"]] == METRICS
    assert [m["metric_idx"] for m in body["metrics"]] == [0, 1, 2]
    for got in body["metrics"]:
        assert_matches_oracle(got, observations[got["metric_idx"]])
    assert body["metrics"][0]["auc"] is not None


def test_a_metric_nobody_voted_on_is_listed_with_nulls(
    acme: Tenant, voted: tuple[str, dict[int, list[tuple[float, int]]]]
) -> None:
    results_id, _ = voted

    metric = acme.get(f"/evaluation/{results_id}/agreement").json()["metrics"][1]

    assert (metric["votes"], metric["auc"], metric["kendall_tau_b"]) == (0, None, None)
    assert metric["threshold"] is None and metric["kappa"] is None
    assert metric["calibration"] == []
    assert metric["confusion"] == {str(s): {"-1": 0, "0": 0, "1": 0} for s in range(1, 6)}


def test_only_audit_votes_count_with_source_audit(acme: Tenant) -> None:
    assert acme.post("/specify_questions", {"metrics": ["check:max_words:6"]}).status_code == 200
    results_id = evaluated(acme, count=10)
    scores = scores_of(acme, results_id)[0]
    vote(acme, results_id, "p00", 0, 1)  # review, the default
    vote(acme, results_id, "p01", 0, -1, source="review")
    audited = [("p02", 1), ("p07", -1), ("p08", -1), ("p03", 1)]
    for pair, value in audited:
        vote(acme, results_id, pair, 0, value, source="audit")

    everything = acme.get(f"/evaluation/{results_id}/agreement").json()
    audit = acme.get(f"/evaluation/{results_id}/agreement?source=audit").json()

    assert everything["metrics"][0]["votes"] == 6 and audit["source"] == "audit"
    assert_matches_oracle(audit["metrics"][0], [(scores[p], v) for p, v in audited])


def test_pooled_over_a_metrics_set_counts_every_result_of_it(acme: Tenant) -> None:
    metrics_id = acme.post("/specify_questions", {"metrics": METRICS}).json()["metrics_id"]
    first = evaluated(acme, "one", count=12)
    second = evaluated(acme, "two", count=16)
    other_set = acme.post("/specify_questions", {"metrics": ["check:non_empty"]}).json()
    elsewhere = evaluated(acme, "three", count=4)  # scored on the other set: not pooled
    observations: list[tuple[float, int]] = []
    for results_id, count in ((first, 12), (second, 16)):
        scores = scores_of(acme, results_id)[2]
        for i in range(count):
            value = [1, -1, 0, 1][i % 4]
            vote(acme, results_id, f"p{i:02d}", 2, value)
            observations.append((scores[f"p{i:02d}"], value))
    vote(acme, elsewhere, "p00", 0, -1)

    body = acme.get(f"/question/{metrics_id}/agreement").json()
    latest = acme.get("/question/latest/agreement").json()

    assert (body["metrics_id"], body["source"]) == (metrics_id, "all")
    assert "eval_results_id" not in body
    assert [m["votes"] for m in body["metrics"]] == [0, 0, 28]
    assert_matches_oracle(body["metrics"][2], observations)
    assert latest["metrics_id"] == other_set["metrics_id"]
    assert latest["metrics"][0]["votes"] == 1


@pytest.fixture
def a_result(acme: Tenant) -> str:
    """A 2-pair result of the latest metrics set, nobody having voted."""
    assert acme.post("/specify_questions", {"metrics": METRICS}).status_code == 200
    return evaluated(acme, count=2)


@pytest.mark.parametrize("source", ["AUDIT", "review", "", "x" * 500])
def test_an_unknown_source_is_400(acme: Tenant, a_result: str, source: str) -> None:
    results_id = a_result

    for path in (f"/evaluation/{results_id}/agreement", "/question/latest/agreement"):
        response = acme.get(f"{path}?source={source}")
        assert response.status_code == 400, response.text
        assert response.json()["error"].startswith("source must be all or audit")


def test_a_vote_with_an_unknown_source_is_400_and_not_stored(acme: Tenant) -> None:
    assert acme.post("/specify_questions", {"metrics": ["check:non_empty"]}).status_code == 200
    results_id = evaluated(acme, count=2)

    response = acme.put(
        f"/vote_eval_pair/{results_id}",
        {"pair_id": "p00", "metric_idx": 0, "vote": 1, "source": "sampled"},
    )

    assert response.status_code == 400
    assert "source" in response.json()["error"]
    assert acme.get(f"/evaluation/{results_id}/agreement").json()["metrics"][0]["votes"] == 0


def test_unknown_results_and_metrics_sets_are_404(acme: Tenant) -> None:
    assert acme.get("/evaluation/ev_nope/agreement").status_code == 404
    assert acme.get("/question/m_nope/agreement").status_code == 404
    assert acme.get("/question/latest/agreement").status_code == 404  # no metrics set yet
    assert acme.get("/evaluation/..%2F/agreement").status_code in (400, 404)


def test_the_functions_take_their_event_files(event_key: str) -> None:
    from tests.lambda_support import with_body

    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    invoke(
        "specify_questions",
        with_body(load_event("specify_questions"), {"metrics": ["check:max_words:4"]}),
    )
    results_id = invoke("evaluate", load_event("evaluate"))[1]["eval_results_id"]
    invoke("vote_eval_pair", with_path(load_event("vote_eval_pair"), id=results_id))

    status, body = invoke(
        "get_evaluation_agreement", with_path(load_event("get_evaluation_agreement"), id=results_id)
    )
    assert status == 200, body
    assert body["metrics"][0]["votes"] == 1 and body["metrics"][0]["negative"] == 1

    status, body = invoke("get_question_agreement", load_event("get_question_agreement"))
    assert status == 200, body
    assert body["source"] == "audit" and body["metrics"][0]["votes"] == 0


def test_a_running_result_is_409_for_agreement_and_audit_samples(
    acme: Tenant, work: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import point_service_at

    point_service_at({"EVALSVC_CHUNK_CHECKS": "20", "EVALSVC_INLINE_MAX_CHECKS": "10"}, monkeypatch)
    assert acme.post("/specify_questions", {"metrics": ["check:non_empty"]}).status_code == 200
    data = [{"id": f"p{i:02d}", "input": "q", "output": "a"} for i in range(30)]
    assert acme.post("/data/seed/big", {"data": data}).status_code == 200
    queued = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "big"},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert queued.status_code == 202, queued.text
    results_id = queued.json()["eval_results_id"]

    for path in (
        f"/evaluation/{results_id}/agreement",
        f"/evaluation/{results_id}/audit_sample?metric_idx=0",
    ):
        response = acme.get(path)
        assert response.status_code == 409, response.text
        assert "still running" in response.json()["error"]

    work.drain()
    assert acme.get(f"/evaluation/{results_id}/agreement").status_code == 200
