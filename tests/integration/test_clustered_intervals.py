"""cluster_by on POST /evaluate (E6): the clustered standard error and interval of each
metric, inside the request and queued, against the formula computed with numpy and scipy."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import point_service_at
from tests.error_bar_oracles import cluster_keys, oracle_clustered, scores_of, topic_pairs
from tests.integration.conftest import Tenant, ok
from tests.work_queue import Work

METRICS = ["check:max_words:4", "check:contains:please"]


def body(response: Any) -> Any:
    return ok(response).json()


def pairs(count: int, labels: int) -> list[dict[str, Any]]:
    return topic_pairs(range(count), shift=0, labels=labels)


def seed(tenant: Tenant, data: list[dict[str, Any]], dataset_id: str = "ds") -> None:
    ok(tenant.post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": "Be kind."}))
    ok(tenant.post("/specify_questions", {"metrics": METRICS}))


def oracle(scores: list[float], keys: list[str]) -> tuple[int, float, float, float]:
    """G, se_clustered and the interval (tests.error_bar_oracles, numpy and scipy)."""
    figures = oracle_clustered(scores, keys)
    return (
        figures["clusters"],
        figures["se_clustered"],
        figures["ci_low_clustered"],
        figures["ci_high_clustered"],
    )


def keys_in_order(data: list[dict[str, Any]], by: str) -> list[str]:
    keys = cluster_keys(data, by)
    return [keys[p["id"]] for p in data]


@pytest.mark.parametrize("by", ["label", "input"])
def test_an_inline_evaluation_reports_the_clustered_interval(acme: Tenant, by: str) -> None:
    data = pairs(60, 9)
    seed(acme, data)

    out = body(acme.post("/evaluate", {"seed_data_id": "ds", "cluster_by": by}))

    scores = scores_of(acme, out["eval_results_id"])
    keys = keys_in_order(data, by)
    got = body(acme.get(f"/evaluation/{out['eval_results_id']}"))
    assert got["cluster_by"] == by and got["judge_samples"] == 1
    for m, metric in enumerate(out["scores"]):
        clusters, se, low, high = oracle([scores[p["id"]][m] for p in data], keys)
        assert metric["clusters"] == clusters
        assert metric["se_clustered"] == pytest.approx(se, abs=1e-9)
        assert metric["ci_low_clustered"] == pytest.approx(low, abs=1e-6)
        assert metric["ci_high_clustered"] == pytest.approx(high, abs=1e-6)
        assert metric["judge_noise_sd"] is None  # a check
        stored = got["score_clustered"][m]
        assert stored == {name: metric[name] for name in stored}
    assert got["score_judge_noise_sds"] == [None, None]


def test_without_cluster_by_the_clustered_figures_are_null(acme: Tenant) -> None:
    seed(acme, pairs(10, 3))
    out = body(acme.post("/evaluate", {"seed_data_id": "ds"}))
    assert {out["scores"][0][k] for k in ("clusters", "se_clustered", "ci_low_clustered")} == {None}
    got = body(acme.get(f"/evaluation/{out['eval_results_id']}"))
    assert got["cluster_by"] is None and got["score_clustered"] is None


def test_a_queued_evaluation_clusters_across_its_chunks_as_inline(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chunks of 30 pairs: most topics span several chunks
    point_service_at({"EVALSVC_CHUNK_CHECKS": "60"}, monkeypatch)
    data = pairs(300, 25)
    seed(acme, data)
    response = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "ds", "cluster_by": "label"},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert response.status_code == 202, response.text
    results_id = response.json()["eval_results_id"]
    assert work.drain() >= 10
    queued = body(acme.get(f"/evaluation/{results_id}"))
    assert queued["status"] == "complete"

    scores = scores_of(acme, results_id)
    keys = keys_in_order(data, "label")
    for m, figures in enumerate(queued["score_clustered"]):
        clusters, se, low, high = oracle([scores[p["id"]][m] for p in data], keys)
        assert figures["clusters"] == clusters
        assert figures["se_clustered"] == pytest.approx(se, abs=1e-9)
        assert figures["ci_low_clustered"] == pytest.approx(low, abs=1e-6)
        assert figures["ci_high_clustered"] == pytest.approx(high, abs=1e-6)


@pytest.mark.parametrize("value", ["topic", "", "LABEL", 1, True, ["label"], {"by": "label"}])
def test_a_bad_cluster_by_is_a_400_naming_it(acme: Tenant, value: Any) -> None:
    seed(acme, pairs(4, 2))
    response = acme.post("/evaluate", {"seed_data_id": "ds", "cluster_by": value})
    assert response.status_code == 400, response.text
    assert "cluster_by" in response.json()["error"]


def test_the_report_draws_both_intervals_and_names_them(acme: Tenant) -> None:
    data = pairs(40, 5)
    seed(acme, data)
    out = body(acme.post("/evaluate", {"seed_data_id": "ds", "cluster_by": "label"}))

    response = acme.get(f"/evaluation/{out['eval_results_id']}/report")

    assert response.status_code == 200, response.text
    page = response.text
    # One pale band per metric behind its line, and words that say which is which
    assert page.count('class="ci-wide ') == len(METRICS)
    assert page.count('class="ci ') == len(METRICS)
    assert "95 % clustered interval" in page and "if every pair were independent" in page
    first = out["scores"][0]
    low, high = first["ci_low_clustered"], first["ci_high_clustered"]
    assert f"clustered [{low:.2f}, {high:.2f}]" in page  # in the row's title
    assert f"{first['clusters']} clusters by label" in page


def test_a_report_without_cluster_by_draws_one_interval(acme: Tenant) -> None:
    seed(acme, pairs(10, 3))
    out = body(acme.post("/evaluate", {"seed_data_id": "ds"}))
    page = acme.get(f"/evaluation/{out['eval_results_id']}/report").text
    assert 'class="ci-wide' not in page and "Clustered interval" not in page
    assert page.count('class="ci ') == len(METRICS)
