"""POST /evaluate, GET /evaluation/{id} and PUT /vote_eval_pair/{id} with check metrics."""

from __future__ import annotations

import math
from typing import Any

import boto3
import pytest
from scipy import stats as scipy_stats

from tests.integration.conftest import Tenant, ok
from tests.lambda_support import invoke, load_event, with_body, with_path
from tests.work_queue import Work

CHECKS = ["check:max_words:4", "check:contains:please", "check:input_overlap"]


def seed(tenant: Tenant, dataset_id: str = "ds") -> None:
    data = [
        {
            "id": "a",
            "input": "reset password",
            "output": "please reset it",
            "labels": ["account", "en"],
        },
        {
            "id": "b",
            "input": "export data",
            "output": "Open settings and export the data now",
            "labels": ["data"],
        },
        {
            "id": "c",
            "input": "delete account",
            "output": "please contact support",
            "labels": ["account"],
        },
        {"id": "d", "input": "dark mode", "output": "yes", "labels": ["ui", "en"]},
        {
            "id": "e",
            "input": "billing",
            "output": "see billing page please",
            "labels": ["account", "en"],
        },
        {"id": "f", "input": "language", "output": "Settings, then Language", "labels": []},
    ]
    assert (
        tenant.post(
            f"/data/seed/{dataset_id}", {"data": data, "system_prompt": "Be brief."}
        ).status_code
        == 200
    )


def metrics(tenant: Tenant, definitions: list[str] = CHECKS) -> str:
    response = tenant.post("/specify_questions", {"metrics": definitions})
    assert response.status_code == 200, response.text
    return str(response.json()["metrics_id"])


def test_evaluate_answers_the_v1_shape_and_matches_scipy(acme: Tenant) -> None:
    seed(acme)
    metrics_id = metrics(acme)

    response = acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id})

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["dataset_id"] == "ds"
    assert body["pair_count"] == 6
    assert [s["metric"] for s in body["scores"]] == CHECKS
    result = acme.get(
        f"/evaluation/{body['eval_results_id']}", params={"includeAllScores": "true"}
    ).json()
    for m, score in enumerate(body["scores"]):
        values = [p["score"] for p in result["all_scored_pairs"][m]]
        n = len(values)
        mean = sum(values) / n
        sd = scipy_stats.tstd(values) if len(set(values)) > 1 else 0.0
        assert score["mean_score"] == pytest.approx(mean, abs=1e-6)
        assert score["median_score"] == pytest.approx(
            float(scipy_stats.scoreatpercentile(values, 50)), abs=1e-6
        )
        assert score["std_dev"] == pytest.approx(sd, abs=1e-6)
        assert (score["min_score"], score["max_score"]) == (min(values), max(values))
        if sd:
            low, high = scipy_stats.t.interval(0.95, n - 1, loc=mean, scale=sd / math.sqrt(n))
            assert score["ci_low"] == pytest.approx(max(1.0, low), abs=1e-6)
            assert score["ci_high"] == pytest.approx(min(5.0, high), abs=1e-6)
        assert score["ci_confidence"] == 0.95
        assert result["score_means"][m] == score["mean_score"]
        assert result["score_confidence_intervals"][m]["ci_low"] == score["ci_low"]


def test_lowest_scoring_pairs_are_five_lowest_first_ties_in_dataset_order(acme: Tenant) -> None:
    seed(acme)
    metrics(acme)

    body = acme.post("/evaluate", {"seed_data_id": "ds"}).json()

    contains_please = body["scores"][1]["lowest_scoring_pairs"]
    assert [p["pair_id"] for p in contains_please] == ["b", "d", "f", "a", "c"]
    assert contains_please[0]["score_reason"] == "output does not contain 'please'"
    result = acme.get(f"/evaluation/{body['eval_results_id']}").json()
    assert [p["pair_id"] for p in result["min_scoring_pairs"][1]] == ["b", "d", "f", "a", "c"]
    assert result["min_scoring_pairs"][1][0] == {
        "reason": "output does not contain 'please'",
        "pair_id": "b",
        "score": 1.0,
    }
    assert "all_scored_pairs" not in result


@pytest.mark.parametrize(
    ("pair_query", "expected"),
    [
        ({"pair_labels": ["account"]}, ["a", "c", "e"]),
        ({"pair_labels": ["account", "en"]}, ["a", "e"]),
        ({"latest_n_pairs": 2}, ["e", "f"]),
        ({"pair_labels": ["en"], "latest_n_pairs": 2}, ["d", "e"]),
        ({"pair_labels": ["nope"], "latest_n_pairs": 2}, None),
        ({}, ["a", "b", "c", "d", "e", "f"]),
    ],
)
def test_pair_query_filters(
    acme: Tenant, pair_query: dict[str, object], expected: list[str] | None
) -> None:
    seed(acme)
    metrics(acme, ["check:non_empty"])

    response = acme.post("/evaluate", {"seed_data_id": "ds", "pair_query": pair_query})

    if expected is None:
        assert response.status_code == 400
        assert (
            response.json()["error"]
            == "nothing to evaluate in seed dataset 'ds': no pair matches pair_query"
        )
        return
    assert response.status_code == 200, response.text
    result = acme.get(
        f"/evaluation/{response.json()['eval_results_id']}", params={"includeAllScores": "1"}
    ).json()
    assert [p["pair_id"] for p in result["all_scored_pairs"][0]] == expected


def test_last_n_seconds_keeps_recent_pairs(acme: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    import evalsvc.storage.datasets.versions as store

    real_now = store.now_ms
    monkeypatch.setattr(store, "now_ms", lambda: real_now() - 3_600_000)  # an hour ago
    seed(acme)
    monkeypatch.setattr(store, "now_ms", real_now)
    ok(
        acme.post(
            "/data/seed/ds/pair", {"id": "new1", "input": "i", "output": "o", "labels": ["en"]}
        )
    )
    ok(acme.post("/data/seed/ds/pair", {"id": "new2", "input": "i", "output": "o"}))
    metrics(acme, ["check:non_empty"])

    recent = acme.post(
        "/evaluate", {"seed_data_id": "ds", "pair_query": {"last_n_seconds": 600}}
    ).json()
    combined = acme.post(
        "/evaluate",
        {"seed_data_id": "ds", "pair_query": {"last_n_seconds": 600, "pair_labels": ["en"]}},
    ).json()
    everything = acme.post(
        "/evaluate", {"seed_data_id": "ds", "pair_query": {"last_n_seconds": 7200}}
    ).json()

    assert recent["pair_count"] == 2
    assert combined["pair_count"] == 1
    assert everything["pair_count"] == 8


def test_synthetic_and_latest_datasets_can_be_evaluated(acme: Tenant) -> None:
    from evalsvc.logic.datasets import import_synthetic_dataset

    import_synthetic_dataset("acme", [("q", "please do"), ("q", "no")], system_prompt="S")
    seed(acme)
    metrics(acme, ["check:contains:please"])

    synthetic = acme.post("/evaluate", {"synthetic_data_id": "latest"})
    latest_seed = acme.post("/evaluate", {"seed_data_id": "latest"})

    assert synthetic.status_code == 200 and synthetic.json()["pair_count"] == 2
    assert synthetic.json()["scores"][0]["mean_score"] == 3.0
    assert latest_seed.json()["dataset_id"] == "ds"
    result = acme.get(f"/evaluation/{synthetic.json()['eval_results_id']}").json()
    assert result["system_prompt"] == "S"


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({}, 400, "give exactly one of seed_data_id or synthetic_data_id"),
        ({"seed_data_id": "ds", "synthetic_data_id": "x"}, 400, "give exactly one"),
        ({"seed_data_id": 5}, 400, "seed_data_id: Input should be a valid string"),
        (
            {"seed_data_id": "ds", "pair_query": {"latest_n_pairs": 0}},
            400,
            "pair_query.latest_n_pairs",
        ),
        (
            {"seed_data_id": "ds", "pair_query": {"latest_n_pairs": "5"}},
            400,
            "pair_query.latest_n_pairs",
        ),
        (
            {"seed_data_id": "ds", "pair_query": {"latest_n_pairs": True}},
            400,
            "pair_query.latest_n_pairs",
        ),
        (
            {"seed_data_id": "ds", "pair_query": {"last_n_seconds": -1}},
            400,
            "pair_query.last_n_seconds",
        ),
        ({"seed_data_id": "ds", "pair_query": {"pair_labels": "x"}}, 400, "pair_query.pair_labels"),
        ({"seed_data_id": "ds", "pair_query": []}, 400, "pair_query"),
        ({"seed_data_id": "bad id"}, 400, "dataset id 'bad id' is not valid"),
        ({"seed_data_id": "missing"}, 404, "no seed dataset with id 'missing'"),
        (
            {"seed_data_id": "ds", "metrics_id": "m_missing"},
            404,
            "no metrics set with id 'm_missing'",
        ),
    ],
)
def test_bad_evaluate_requests(
    acme: Tenant, body: dict[str, object], status: int, message: str
) -> None:
    seed(acme)
    metrics(acme)

    response = acme.post("/evaluate", body)

    assert response.status_code == status, response.text
    assert response.json()["error"].startswith(message) or message in response.json()["error"]


def test_evaluate_without_any_metrics_set_says_how_to_make_one(acme: Tenant) -> None:
    seed(acme)
    response = acme.post("/evaluate", {"seed_data_id": "ds"})
    assert response.status_code == 404
    assert "POST /specify_questions" in response.json()["error"]


def test_question_metric_without_a_judge_is_400_naming_it_and_the_setting(acme: Tenant) -> None:
    seed(acme)
    metrics(acme, ["check:non_empty", "Is the answer polite?"])

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 400
    error = response.json()["error"]
    assert "metric 1 ('Is the answer polite?')" in error and "EVALSVC_LLM" in error


def test_empty_dataset_is_400(acme: Tenant) -> None:
    ok(acme.post("/data/seed/empty", {"data": []}))
    metrics(acme, ["check:non_empty"])
    response = acme.post("/evaluate", {"seed_data_id": "empty"})
    assert response.status_code == 400
    assert response.json()["error"].endswith("the dataset is empty")


def test_a_failure_while_storing_leaves_no_result(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch, tables
) -> None:  # type: ignore[no-untyped-def]
    import boto3
    from evalsvc.core.errors import StorageUnavailable
    from evalsvc.storage import dynamo

    seed(acme)
    metrics(acme, ["check:non_empty"])
    real_call = dynamo.call

    def failing(operation: str, **kwargs: object) -> object:
        if operation == "transact_write_items":
            raise StorageUnavailable(
                "storage is busy or unavailable; nothing was changed, retry shortly"
            )
        return real_call(operation, **kwargs)

    monkeypatch.setattr(dynamo, "call", failing)
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 503
    assert boto3.client("dynamodb").scan(TableName=tables["EVALSVC_RESULTS_TABLE"])["Items"] == []


@pytest.mark.parametrize(
    ("flag", "included"),
    [("true", True), ("TRUE", True), ("1", True), ("false", False), ("False", False), ("0", False)],
)
def test_include_all_scores_values(acme: Tenant, flag: str, included: bool) -> None:
    seed(acme)
    metrics(acme, ["check:non_empty"])
    results_id = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["eval_results_id"]

    result = acme.get(f"/evaluation/{results_id}", params={"includeAllScores": flag}).json()

    assert ("all_scored_pairs" in result) is included


@pytest.mark.parametrize("flag", ["yes", "2", "", "tru"])
def test_bad_include_all_scores_is_400(acme: Tenant, flag: str) -> None:
    seed(acme)
    metrics(acme, ["check:non_empty"])
    results_id = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["eval_results_id"]

    response = acme.get(f"/evaluation/{results_id}", params={"includeAllScores": flag})

    assert response.status_code == 400
    assert response.json()["error"].startswith("includeAllScores must be true or false")


def expected_histograms(result: dict[str, Any]) -> list[list[int]]:
    """Per metric, the scored pairs in each 1-5 bin (a score rounds half up, within 1..5)."""
    bins = [[0] * 5 for _ in result["all_scored_pairs"]]
    for m, metric in enumerate(result["all_scored_pairs"]):
        for pair in metric:
            bins[m][min(5, max(1, math.floor(pair["score"] + 0.5))) - 1] += 1
    return bins


def test_a_complete_result_has_per_metric_score_histograms(acme: Tenant) -> None:
    seed(acme)
    metrics(acme)
    results_id = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["eval_results_id"]

    result = ok(acme.get(f"/evaluation/{results_id}?includeAllScores=true")).json()

    assert result["score_histograms"] == expected_histograms(result)
    assert [sum(bins) for bins in result["score_histograms"]] == [6] * len(CHECKS)
    assert result["score_histograms"][1] == [3, 0, 0, 0, 3]  # contains:please: 1 or 5
    plain = ok(acme.get(f"/evaluation/{results_id}")).json()
    assert plain["score_histograms"] == result["score_histograms"]


def queue(tenant: Tenant) -> Any:
    return tenant.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "ds"},
        headers={**tenant.headers, "Prefer": "respond-async"},
    )


def test_score_histograms_are_null_while_running_and_counted_once_complete(
    acme: Tenant, work: Work
) -> None:
    seed(acme)
    metrics(acme)
    queued = queue(acme)
    assert queued.status_code == 202, queued.text
    results_id = queued.json()["eval_results_id"]

    running = ok(acme.get(f"/evaluation/{results_id}")).json()
    assert (running["status"], running["score_histograms"]) == ("running", None)

    assert work.drain()
    done = ok(acme.get(f"/evaluation/{results_id}?includeAllScores=true")).json()
    assert done["status"] == "complete"
    assert done["score_histograms"] == expected_histograms(done)


def test_a_failed_result_has_no_score_histograms(acme: Tenant, work: Work) -> None:
    seed(acme)
    metrics(acme)
    queued = queue(acme)
    results_id = ok(queued, 202).json()["eval_results_id"]
    assert work.dead_letter_all()
    work.deliver_dead_letters()

    failed = ok(acme.get(f"/evaluation/{results_id}")).json()

    assert (failed["status"], failed["score_histograms"]) == ("failed", None)


def test_a_result_stored_before_histograms_were_kept_has_null_histograms(
    acme: Tenant, tables: dict[str, str]
) -> None:
    seed(acme)
    metrics(acme)
    results_id = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["eval_results_id"]
    boto3.client("dynamodb").update_item(
        TableName=tables["EVALSVC_RESULTS_TABLE"],
        Key={"pk": {"S": f"T#acme#R#{results_id}"}, "sk": {"S": "result"}},
        UpdateExpression="REMOVE histograms",
    )

    result = ok(acme.get(f"/evaluation/{results_id}")).json()

    assert (result["status"], result["score_histograms"]) == ("complete", None)


def test_unknown_result_is_404(acme: Tenant) -> None:
    assert acme.get("/evaluation/ev_nope").status_code == 404
    assert (
        acme.put(
            "/vote_eval_pair/ev_nope", {"pair_id": "a", "metric_idx": 0, "vote": 1}
        ).status_code
        == 404
    )


# ---- votes -------------------------------------------------------------------------------------


@pytest.fixture
def results_id(acme: Tenant) -> str:
    seed(acme)
    metrics(acme)
    return str(acme.post("/evaluate", {"seed_data_id": "ds"}).json()["eval_results_id"])


def test_vote_is_recorded_with_the_keys_identity(acme: Tenant, results_id: str) -> None:
    response = acme.put(
        f"/vote_eval_pair/{results_id}",
        {"pair_id": "b", "metric_idx": 1, "vote": -1, "comment": "Rude."},
    )

    assert response.json() == {"success": True, "results_id": results_id, "pair_id": "b"}
    critique = acme.get(f"/evaluation/{results_id}").json()["human_critique"]
    assert len(critique) == 1
    entry = critique[0]
    assert (entry["pair_id"], entry["metric_idx"], entry["vote"], entry["comment"]) == (
        "b",
        1,
        -1,
        "Rude.",
    )
    assert (entry["user"], entry["user_email"]) == ("ann", "ann@acme.test")
    assert entry["id"].startswith("cr_") and entry["time"].endswith("Z")


def test_voting_again_replaces_the_vote_keeping_its_id(acme: Tenant, results_id: str) -> None:
    ok(
        acme.put(
            f"/vote_eval_pair/{results_id}",
            {"pair_id": "b", "metric_idx": 1, "vote": -1, "comment": "Rude."},
        )
    )
    first = acme.get(f"/evaluation/{results_id}").json()["human_critique"][0]

    ok(acme.put(f"/vote_eval_pair/{results_id}", {"pair_id": "b", "metric_idx": 1, "vote": 1}))

    critiques = acme.get(f"/evaluation/{results_id}").json()["human_critique"]
    assert len(critiques) == 1
    assert critiques[0]["id"] == first["id"]
    assert (critiques[0]["vote"], critiques[0]["comment"]) == (1, "")
    assert critiques[0]["time"] >= first["time"]


def test_several_users_votes_are_all_kept_oldest_first(acme: Tenant, results_id: str) -> None:
    from evalsvc.logic import api_keys

    bob_key, _ = api_keys.create_key("acme", "bob", "bob@acme.test")
    ok(acme.put(f"/vote_eval_pair/{results_id}", {"pair_id": "a", "metric_idx": 0, "vote": 1}))
    ok(
        acme.http.put(
            f"/v1/vote_eval_pair/{results_id}",
            headers={"Authorization": bob_key},
            json={"pair_id": "a", "metric_idx": 0, "vote": 0, "comment": "meh"},
        )
    )
    ok(acme.put(f"/vote_eval_pair/{results_id}", {"pair_id": "c", "metric_idx": 2, "vote": -1}))

    critiques = acme.get(f"/evaluation/{results_id}").json()["human_critique"]

    assert [(c["user"], c["pair_id"], c["vote"]) for c in critiques] == [
        ("ann", "a", 1),
        ("bob", "a", 0),
        ("ann", "c", -1),
    ]


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        (
            {"pair_id": "a", "metric_idx": 3, "vote": 1},
            400,
            "metric_idx 3 is out of range: this result has 3 metrics (0-2)",
        ),
        ({"pair_id": "a", "metric_idx": -1, "vote": 1}, 400, "metric_idx"),
        ({"pair_id": "a", "metric_idx": "0", "vote": 1}, 400, "metric_idx"),
        ({"pair_id": "a", "metric_idx": False, "vote": 1}, 400, "metric_idx"),
        ({"pair_id": "a", "metric_idx": 0, "vote": 2}, 400, "vote"),
        ({"pair_id": "a", "metric_idx": 0, "vote": "1"}, 400, "vote"),
        ({"pair_id": "a", "metric_idx": 0, "vote": True}, 400, "vote"),
        ({"pair_id": "a", "metric_idx": 0}, 400, "vote: Field required"),
        ({"metric_idx": 0, "vote": 1}, 400, "pair_id: Field required"),
        ({"pair_id": "a", "metric_idx": 0, "vote": 1, "comment": "x" * 4001}, 413, "comment"),
        ({"pair_id": "zzz", "metric_idx": 0, "vote": 1}, 404, "pair 'zzz' was not scored"),
    ],
)
def test_bad_votes(
    acme: Tenant, results_id: str, body: dict[str, object], status: int, message: str
) -> None:
    response = acme.put(f"/vote_eval_pair/{results_id}", body)

    assert response.status_code == status, response.text
    assert message in response.json()["error"]
    assert acme.get(f"/evaluation/{results_id}").json()["human_critique"] == []


def test_another_tenant_can_neither_read_nor_vote(
    acme: Tenant, globex: Tenant, results_id: str
) -> None:
    assert globex.get(f"/evaluation/{results_id}").status_code == 404
    vote = globex.put(f"/vote_eval_pair/{results_id}", {"pair_id": "a", "metric_idx": 0, "vote": 1})
    assert vote.status_code == 404
    assert acme.get(f"/evaluation/{results_id}").json()["human_critique"] == []
    seed(globex)
    metrics(globex)
    assert (
        globex.post(
            "/evaluate",
            {"seed_data_id": "ds", "metrics_id": acme.get("/question/latest").json()["metrics_id"]},
        ).status_code
        == 404
    )


def test_evaluation_handlers_with_their_events(event_key: str) -> None:
    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    invoke(
        "specify_questions",
        with_body(load_event("specify_questions"), {"metrics": ["check:non_empty"]}),
    )

    status, evaluated = invoke("evaluate", load_event("evaluate"))
    assert status == 200, evaluated
    results_id = evaluated["eval_results_id"]

    status, voted = invoke("vote_eval_pair", with_path(load_event("vote_eval_pair"), id=results_id))
    assert (status, voted) == (200, {"success": True, "results_id": results_id, "pair_id": "q1"})

    status, result = invoke(
        "get_evaluation", with_path(load_event("get_evaluation"), id=results_id)
    )
    assert status == 200
    assert result["pair_count"] == 2
    assert len(result["all_scored_pairs"][0]) == 2
    assert result["human_critique"][0]["comment"] == "Too terse for a first-time user."
