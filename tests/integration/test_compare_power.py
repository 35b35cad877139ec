"""POST /compare's power and clustered figures (E6): `mde` on every metric, and with
`cluster_by` the clustered standard error and interval of mean_diff, clustered by the baseline's
pairs, against the formulas computed with numpy and scipy (t.ppf, norm.ppf) to 1e-6."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from evalsvc.models.evaluations import ScoredPair
from scipy import stats as scipy_stats

from tests.error_bar_oracles import (
    CLUSTERED,
    cluster_keys,
    oracle_clustered,
    scores_of,
    topic_pairs,
)
from tests.integration.conftest import Tenant, ok
from tests.stored_results import store_result

METRICS = ["check:max_words:4", "check:contains:please", "check:readability"]
TOLERANCE = 1e-6


def evaluate(tenant: Tenant, dataset_id: str, data: list[dict[str, Any]]) -> str:
    ok(tenant.post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": "Be kind."}))
    metrics_id = ok(tenant.post("/specify_questions", {"metrics": METRICS})).json()["metrics_id"]
    answer = ok(tenant.post("/evaluate", {"seed_data_id": dataset_id, "metrics_id": metrics_id}))
    return str(answer.json()["eval_results_id"])


def oracle_mde(d: list[float], alpha: float) -> float | None:
    if len(d) < 2:
        return None
    z = scipy_stats.norm.ppf(1 - alpha / 2) + scipy_stats.norm.ppf(0.8)
    return float(z * np.std(d, ddof=1) / math.sqrt(len(d)))


def close(mine: float | None, oracle: float | None) -> bool:
    if oracle is None:
        return mine is None
    return mine is not None and math.isclose(mine, oracle, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def assert_power_and_clusters_agree(
    tenant: Tenant,
    answer: dict[str, Any],
    baseline_keys: dict[str, str] | None,
    alpha: float,
) -> None:
    """mde and the clustered figures of every metric of `answer`, from both results' scores."""
    baseline = scores_of(tenant, answer["baseline_id"])
    candidate = scores_of(tenant, answer["candidate_id"])
    shared = sorted(baseline.keys() & candidate.keys())
    assert answer["pairs_matched"] == len(shared)
    for m, got in enumerate(answer["metrics"]):
        d = [candidate[p][m] - baseline[p][m] for p in shared]
        assert close(got["mde"], oracle_mde(d, alpha)), (got["mde"], oracle_mde(d, alpha))
        if baseline_keys is None:
            assert {got[name] for name in CLUSTERED} == {None}
            continue
        expected = oracle_clustered(d, [baseline_keys[p] for p in shared], alpha)
        assert got["clusters"] == expected["clusters"]
        for name in CLUSTERED[1:]:
            assert close(got[name], expected[name]), (name, got[name], expected[name])


@pytest.fixture
def labelled(acme: Tenant) -> tuple[str, str, list[dict[str, Any]]]:
    """A baseline of 70 labelled pairs in 9 topics and a candidate of 66 of them (and 4
    more) whose own labels differ: the baseline's clusters are the ones that count."""
    base = topic_pairs(range(0, 70), shift=1, labels=9)
    cand = topic_pairs(range(4, 74), shift=3, labels=5)
    return evaluate(acme, "v1", base), evaluate(acme, "v2", cand), base


@pytest.mark.parametrize("by", ["label", "input"])
@pytest.mark.parametrize("alpha", [0.05, 0.2, 0.001])
def test_cluster_by_adds_the_clustered_interval_of_the_differences_by_the_baselines_pairs(
    acme: Tenant, labelled: tuple[str, str, list[dict[str, Any]]], by: str, alpha: float
) -> None:
    baseline, candidate, data = labelled

    answer = ok(
        acme.post(
            "/compare",
            {"baseline_id": baseline, "candidate_id": candidate, "cluster_by": by, "alpha": alpha},
        )
    ).json()

    assert answer["cluster_by"] == by and answer["pairs_matched"] == 66
    assert_power_and_clusters_agree(acme, answer, cluster_keys(data, by), alpha)
    # the clustered interval is about the same mean difference as the paired t interval
    for metric in answer["metrics"]:
        if metric["se_clustered"] is not None:
            middle = (metric["ci_low_clustered"] + metric["ci_high_clustered"]) / 2
            assert close(middle, metric["mean_diff"])


def test_without_cluster_by_every_metric_has_mde_and_null_clustered_figures(
    acme: Tenant, labelled: tuple[str, str, list[dict[str, Any]]]
) -> None:
    baseline, candidate, _ = labelled

    answer = ok(acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})).json()

    assert answer["cluster_by"] is None
    assert all(m["mde"] is not None and m["mde"] > 0 for m in answer["metrics"])
    assert_power_and_clusters_agree(acme, answer, None, 0.05)


def test_clustering_leaves_every_other_figure_as_it_was(
    acme: Tenant, labelled: tuple[str, str, list[dict[str, Any]]]
) -> None:
    baseline, candidate, _ = labelled
    ids = {"baseline_id": baseline, "candidate_id": candidate}

    plain = ok(acme.post("/compare", ids)).json()
    clustered = ok(acme.post("/compare", {**ids, "cluster_by": "label"})).json()

    for before, after in zip(plain["metrics"], clustered["metrics"], strict=True):
        assert {k: v for k, v in after.items() if k not in CLUSTERED} == {
            k: v for k, v in before.items() if k not in CLUSTERED
        }
    assert {k: v for k, v in clustered.items() if k not in ("metrics", "cluster_by")} == {
        k: v for k, v in plain.items() if k not in ("metrics", "cluster_by")
    }


def stored(results_id: str, scores: dict[str, float], clusters: dict[str, str | None]) -> str:
    """A stored result of one metric: per pair id its score and label cluster (None:
    unlabelled), every pair with an input cluster of its own."""
    scored = [
        ScoredPair(pid, i, [score], ["r"], label_cluster=clusters[pid], input_cluster=f"in{pid}")
        for i, (pid, score) in enumerate(sorted(scores.items()))
    ]
    store_result("acme", results_id, ["check:non_empty"], scored, metrics_id="m")
    return results_id


def test_thousands_of_pairs_in_hundreds_of_clusters_and_unlabelled_ones_agree_with_numpy(
    acme: Tenant,
) -> None:
    # Given 3,000 matched pairs in clusters of uneven size (1 to 60), every ninth unlabelled
    ids = [f"p{i:05d}" for i in range(3000)]
    labels: dict[str, str | None] = {
        pid: None if i % 9 == 0 else f"c{(i * i) % 997:03d}" for i, pid in enumerate(ids)
    }
    base = {pid: 1.0 + (i * 7) % 5 for i, pid in enumerate(ids)}
    cand = {pid: 1.0 + (i * 11 + (i * i) % 250 // 50) % 5 for i, pid in enumerate(ids)}
    baseline = stored("ev_big_base", base, labels)
    candidate = stored("ev_big_cand", cand, {pid: "other" for pid in ids})

    answer = ok(
        acme.post(
            "/compare",
            {"baseline_id": baseline, "candidate_id": candidate, "cluster_by": "label"},
        )
    ).json()

    d = [cand[p] - base[p] for p in ids]
    keys = [labels[p] or "own " + p for p in ids]
    (got,) = answer["metrics"]
    expected = oracle_clustered(d, keys, 0.05)
    assert got["clusters"] == expected["clusters"]
    assert got["clusters"] > 334 + 300  # 334 unlabelled pairs, each its own cluster
    for name in CLUSTERED[1:]:
        assert close(got[name], expected[name]), name
    assert close(got["mde"], oracle_mde(d, 0.05))


def test_one_cluster_has_no_clustered_interval_and_one_pair_no_mde(acme: Tenant) -> None:
    one = {"a": "same", "b": "same", "c": "same"}
    baseline = stored("ev_one_base", {"a": 1.0, "b": 2.0, "c": 5.0}, one)
    candidate = stored("ev_one_cand", {"a": 2.0, "b": 4.0, "c": 5.0}, one)
    ids = {"baseline_id": baseline, "candidate_id": candidate, "cluster_by": "label"}

    (metric,) = ok(acme.post("/compare", ids)).json()["metrics"]

    assert metric["clusters"] == 1
    assert metric["se_clustered"] is None and metric["ci_low_clustered"] is None
    assert close(metric["mde"], oracle_mde([1.0, 2.0, 0.0], 0.05))

    # one matched pair: n < 2, no mde; one cluster, no interval
    lone = stored("ev_lone_cand", {"a": 3.0, "z": 1.0}, {"a": None, "z": None})
    (metric,) = ok(acme.post("/compare", {**ids, "candidate_id": lone})).json()["metrics"]
    assert metric["n"] == 1 and metric["mde"] is None
    assert metric["clusters"] == 1 and metric["se_clustered"] is None


def test_every_difference_equal_has_mde_zero(acme: Tenant) -> None:
    labels: dict[str, str | None] = {"a": "x", "b": "y", "c": None}
    baseline = stored("ev_eq_base", {"a": 1.0, "b": 2.0, "c": 3.0}, labels)
    candidate = stored("ev_eq_cand", {"a": 2.0, "b": 3.0, "c": 4.0}, labels)

    (metric,) = ok(
        acme.post(
            "/compare", {"baseline_id": baseline, "candidate_id": candidate, "cluster_by": "label"}
        )
    ).json()["metrics"]

    assert metric["std_diff"] == 0.0 and metric["mde"] == 0.0
    assert metric["clusters"] == 3 and metric["se_clustered"] == 0.0
    assert metric["ci_low_clustered"] == metric["ci_high_clustered"] == 1.0


def predating(results_id: str, pair_ids: list[str], without: set[str]) -> str:
    """A stored result whose pairs in `without` were stored before clusters were kept."""
    scored = [
        ScoredPair(
            pid,
            i,
            [float(1 + i % 5)],
            ["r"],
            label_cluster=None if pid in without else "lab",
            input_cluster=None if pid in without else f"in{pid}",
        )
        for i, pid in enumerate(pair_ids)
    ]
    store_result("acme", results_id, ["check:non_empty"], scored, metrics_id="m")
    return results_id


@pytest.mark.parametrize("by", ["label", "input"])
def test_a_baseline_stored_before_clusters_were_kept_is_409_saying_to_evaluate_again(
    acme: Tenant, by: str
) -> None:
    ids = [f"p{i}" for i in range(6)]
    baseline = predating("ev_old_base", ids, set(ids))
    candidate = predating("ev_new_cand", ids, set())

    response = acme.post(
        "/compare", {"baseline_id": baseline, "candidate_id": candidate, "cluster_by": by}
    )

    assert response.status_code == 409, response.text
    said = response.json()["error"]
    assert said.startswith(f"baseline_id: evaluation result {baseline!r} cannot be clustered")
    assert "Evaluate the baseline's dataset again" in said and "cluster_by" in said
    # without cluster_by the same results compare
    assert ok(acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate}))


def test_a_baseline_with_some_pairs_stored_before_clusters_is_409_only_if_they_are_matched(
    acme: Tenant,
) -> None:
    # Given a baseline whose p0 was stored before clusters were kept (a run that spanned the
    # change), compared with candidates that have p0 and that do not
    ids = [f"p{i}" for i in range(6)]
    baseline = predating("ev_mixed_base", ids, {"p0"})
    with_p0 = predating("ev_with_p0", ids, set())
    without_p0 = predating("ev_without_p0", ids[1:], set())

    response = acme.post(
        "/compare", {"baseline_id": baseline, "candidate_id": with_p0, "cluster_by": "input"}
    )
    assert response.status_code == 409, response.text
    assert "'p0'" in response.json()["error"]
    # a pair only in the baseline counts in no figure: its cluster is not needed
    answer = ok(
        acme.post(
            "/compare",
            {"baseline_id": baseline, "candidate_id": without_p0, "cluster_by": "input"},
        )
    ).json()
    assert answer["pairs_matched"] == 5 and answer["metrics"][0]["clusters"] == 5
    # clusters come from the baseline: a candidate stored before them is no obstacle
    answer = ok(
        acme.post(
            "/compare", {"baseline_id": with_p0, "candidate_id": baseline, "cluster_by": "label"}
        )
    ).json()
    assert answer["metrics"][0]["clusters"] == 1


@pytest.mark.parametrize("value", ["topic", "", "LABEL", 1, True, ["label"], {"by": "label"}])
def test_a_bad_cluster_by_is_a_400_naming_it(
    acme: Tenant, labelled: tuple[str, str, list[dict[str, Any]]], value: Any
) -> None:
    baseline, candidate, _ = labelled
    response = acme.post(
        "/compare", {"baseline_id": baseline, "candidate_id": candidate, "cluster_by": value}
    )
    assert response.status_code == 400, response.text
    assert "cluster_by" in response.json()["error"]


def test_cluster_by_null_is_the_default(
    acme: Tenant, labelled: tuple[str, str, list[dict[str, Any]]]
) -> None:
    baseline, candidate, _ = labelled
    ids = {"baseline_id": baseline, "candidate_id": candidate}
    assert ok(acme.post("/compare", {**ids, "cluster_by": None})).json() == (
        ok(acme.post("/compare", ids)).json()
    )
