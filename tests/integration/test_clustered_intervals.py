"""cluster_by on POST /evaluate (E6): the clustered standard error and interval of each
metric, inside the request and queued, against the formula computed with numpy and scipy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from scipy import stats as scipy_stats

from tests.conftest import point_service_at
from tests.integration.conftest import Tenant, ok
from tests.work_queue import Work

METRICS = ["check:max_words:4", "check:contains:please"]


def body(response: Any) -> Any:
    return ok(response).json()


def pairs(count: int, labels: int) -> list[dict[str, Any]]:
    """`count` pairs whose outputs vary within and between `labels` topics; every seventh
    unlabelled, every fifth sharing its input with the pair before it."""
    words = ["please", "thanks", "the", "answer", "is", "a", "long", "reply"]
    data = []
    for i in range(count):
        topic = (i * 7919) % labels
        length = 1 + (topic % 4) + (i % 3)
        data.append(
            {
                "id": f"p{i:05d}",
                "input": f"question {i - 1 if i % 5 == 4 else i}",
                "output": " ".join(words[(topic + k) % len(words)] for k in range(length)),
                "labels": [] if i % 7 == 6 else [f"topic {topic}", "extra"],
            }
        )
    return data


def seed(tenant: Tenant, data: list[dict[str, Any]], dataset_id: str = "ds") -> None:
    ok(tenant.post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": "Be kind."}))
    ok(tenant.post("/specify_questions", {"metrics": METRICS}))


def oracle(scores: list[float], keys: list[str]) -> tuple[int, float, float, float]:
    """G, se_clustered and the interval, from the formula in numpy, t from scipy."""
    s = np.asarray(scores, dtype=float)
    mean = s.mean()
    names = sorted(set(keys))
    sums = np.array([sum(s[i] - mean for i, k in enumerate(keys) if k == name) for name in names])
    se = float(np.sqrt(np.sum(sums**2)) / len(s))
    t = float(scipy_stats.t.ppf(0.975, len(names) - 1))
    return len(names), se, float(mean - t * se), float(mean + t * se)


def cluster_keys(data: list[dict[str, Any]], by: str) -> list[str]:
    if by == "input":
        return [p["input"] for p in data]
    return [p["labels"][0] if p["labels"] else "own " + p["id"] for p in data]


def scores_of(tenant: Tenant, results_id: str) -> dict[str, list[float]]:
    read = body(tenant.get(f"/evaluation/{results_id}?includeAllScores=true"))
    by_metric: list[dict[str, float]] = [
        {p["pair_id"]: p["score"] for p in metric} for metric in read["all_scored_pairs"]
    ]
    return {pid: [m[pid] for m in by_metric] for pid in by_metric[0]}


@pytest.mark.parametrize("by", ["label", "input"])
def test_an_inline_evaluation_reports_the_clustered_interval(acme: Tenant, by: str) -> None:
    data = pairs(60, 9)
    seed(acme, data)

    out = body(acme.post("/evaluate", {"seed_data_id": "ds", "cluster_by": by}))

    scores = scores_of(acme, out["eval_results_id"])
    keys = cluster_keys(data, by)
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
    keys = cluster_keys(data, "label")
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
