"""The "How sure is this number?" example of docs/error-bars.md, run as written
(docs/examples/helpdesk*.jsonl, check:max_words:12), so that every figure it quotes is what the
service answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.integration.conftest import Tenant, ok

EXAMPLES = ROOT / "docs" / "examples"


def body(response: Any) -> Any:
    return ok(response).json()


def push(tenant: Tenant, name: str, dataset_id: str, system_prompt: str) -> None:
    lines = (EXAMPLES / name).read_text(encoding="utf-8").splitlines()
    data = [json.loads(line) for line in lines if line.strip()]
    ok(tenant.post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": system_prompt}))


def quoted(value: float, digits: int = 3) -> float:
    return round(value, digits)


@pytest.fixture
def readme(acme: Tenant) -> dict[str, Any]:
    push(acme, "helpdesk.jsonl", "helpdesk", "Answer in one short sentence.")
    push(
        acme,
        "helpdesk-v2.jsonl",
        "helpdesk-v2",
        "Answer in one short sentence. Keep it under twelve words.",
    )
    ok(acme.post("/specify_questions", {"metrics": ["check:max_words:12"]}))
    v1 = body(acme.post("/evaluate", {"seed_data_id": "helpdesk", "cluster_by": "label"}))
    v2 = body(acme.post("/evaluate", {"seed_data_id": "helpdesk-v2", "cluster_by": "label"}))
    ids = {"baseline_id": v1["eval_results_id"], "candidate_id": v2["eval_results_id"]}
    return {
        "evaluate": v1["scores"][0],
        "compare": body(acme.post("/compare", {**ids, "cluster_by": "label"}))["metrics"][0],
        "paired": body(acme.post("/plan", {**ids, "effect": 0.5}))["metrics"][0],
        "unpaired": body(acme.post("/plan", {"baseline_id": ids["baseline_id"], "effect": 0.5}))[
            "metrics"
        ][0],
    }


def test_the_clustered_interval_widens_as_the_readme_says(readme: dict[str, Any]) -> None:
    got = readme["evaluate"]
    assert (got["mean_score"], quoted(got["std_dev"])) == (4.0, 1.769)
    assert (quoted(got["ci_low"]), quoted(got["ci_high"])) == (3.253, 4.747)
    assert (got["clusters"], quoted(got["se_clustered"])) == (4, 0.687)
    assert (quoted(got["ci_low_clustered"]), quoted(got["ci_high_clustered"])) == (1.813, 6.187)
    assert got["judge_noise_sd"] is None
    # "5 of its 6 billing answers are over twelve words, one answer of the other eighteen is"
    assert sorted(p["pair_id"] for p in got["lowest_scoring_pairs"]) == [
        "q01",
        "q02",
        "q03",
        "q04",
        "q06",
    ]


def test_the_comparison_and_its_power_are_the_readmes(readme: dict[str, Any]) -> None:
    got = readme["compare"]
    assert (got["n"], got["mean_diff"], quoted(got["std_diff"])) == (24, 0.5, 1.794)
    assert (quoted(got["ci_low"]), quoted(got["ci_high"]), quoted(got["p_value"])) == (
        -0.257,
        1.257,
        0.185,
    )
    assert (got["wins"], got["ties"], got["losses"]) == (4, 19, 1)
    assert got["verdict"] == "no_significant_difference"
    assert quoted(got["mde"]) == 1.026
    assert (got["clusters"], quoted(got["se_clustered"])) == (4, 0.640)
    assert (quoted(got["ci_low_clustered"]), quoted(got["ci_high_clustered"])) == (-1.537, 2.537)


def test_the_plans_are_the_readmes(readme: dict[str, Any]) -> None:
    paired, unpaired = readme["paired"], readme["unpaired"]
    assert (paired["n"], quoted(paired["sd"]), paired["pairs_needed"], paired["paired"]) == (
        24,
        1.794,
        102,
        True,
    )
    assert (
        unpaired["n"],
        quoted(unpaired["sd"]),
        unpaired["pairs_needed"],
        unpaired["paired"],
    ) == (24, 2.502, 197, False)
