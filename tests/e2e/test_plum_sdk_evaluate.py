"""plum-sdk's evaluate, unmodified, against the local server: check metrics and a fake judge,
seed and synthetic datasets, every pair_query filter."""

from __future__ import annotations

import uuid

import pytest
import requests
from plum_sdk import PlumClient

from tests.e2e.conftest import DEV_KEY, LocalServer

QUESTION = "Does the output say please?"


@pytest.fixture
def plum(server: LocalServer) -> PlumClient:
    return PlumClient(api_key=DEV_KEY, base_url=server.base_url)


@pytest.fixture
def dataset_id(plum: PlumClient) -> str:
    dataset = f"eval-{uuid.uuid4().hex[:8]}"
    plum.upload_data([], system_prompt="Be polite.", dataset_id=dataset)
    plum.upload_pair(dataset, "sit?", "please sit", pair_id="a", labels=["chair", "en"])
    plum.upload_pair(dataset, "stand?", "stand", pair_id="b", labels=["en"])
    plum.upload_pair(dataset, "go?", "Please go now", pair_id="c", labels=["chair"])
    return dataset


def test_evaluate_with_checks_and_the_judge(plum: PlumClient, dataset_id: str) -> None:
    metrics = plum.define_metric_questions([QUESTION, "check:max_words:2"])

    result = plum.evaluate(dataset_id, metrics.metrics_id)

    assert result.pair_count == 3
    assert result.dataset_id == dataset_id
    judge, words = result.scores
    assert judge.metric == QUESTION
    assert judge.mean_score == 4.0
    assert judge.lowest_scoring_pairs[0].pair_id == "b"
    assert judge.lowest_scoring_pairs[0].score_reason == "The output never says please."
    assert words.lowest_scoring_pairs[0].pair_id == "c"
    assert words.lowest_scoring_pairs[0].score_reason == "output has 3 words, over the maximum 2"
    assert 1.0 <= judge.ci_low <= judge.mean_score <= judge.ci_high <= 5.0
    assert judge.ci_confidence == 0.95


@pytest.mark.parametrize(
    ("filters", "expected_count"),
    [
        ({"latest_n_pairs": 2}, 2),
        ({"pair_labels": ["chair"]}, 2),
        ({"pair_labels": ["chair", "en"]}, 1),
        ({"last_n_seconds": 3600}, 3),
        ({"latest_n_pairs": 1, "pair_labels": ["en"], "last_n_seconds": 3600}, 1),
    ],
)
def test_evaluate_with_each_pair_query_filter(
    plum: PlumClient, dataset_id: str, filters: dict[str, object], expected_count: int
) -> None:
    metrics = plum.define_metric_questions(["check:non_empty"])

    result = plum.evaluate(dataset_id, metrics.metrics_id, **filters)  # type: ignore[arg-type]

    assert result.pair_count == expected_count


def test_evaluate_synthetic_data(plum: PlumClient, server: LocalServer, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rows = tmp_path / "variants.jsonl"
    rows.write_text('{"input": "q1", "output": "please wait"}\n{"input": "q2", "output": "wait"}\n')
    imported = server.cli("synthetic", "import", str(rows), "--tenant", "local")
    assert imported.returncode == 0, imported.stderr
    synthetic_id = imported.stdout.strip().splitlines()[-1]
    metrics = plum.define_metric_questions([QUESTION])

    result = plum.evaluate(synthetic_id, metrics.metrics_id, is_synthetic=True)

    assert result.pair_count == 2
    assert result.scores[0].mean_score == 3.5


def test_result_read_and_vote_over_http(
    plum: PlumClient, server: LocalServer, dataset_id: str
) -> None:
    metrics = plum.define_metric_questions(["check:non_empty"])
    result = plum.evaluate(dataset_id, metrics.metrics_id)
    headers = {"Authorization": DEV_KEY}

    vote = requests.put(
        f"{server.base_url}/vote_eval_pair/{result.eval_results_id}",
        json={"pair_id": "a", "metric_idx": 0, "vote": 1, "comment": "Good."},
        headers=headers,
        timeout=10,
    )
    stored = requests.get(
        f"{server.base_url}/evaluation/{result.eval_results_id}",
        params={"includeAllScores": "true"},
        headers=headers,
        timeout=10,
    ).json()

    assert vote.json() == {"success": True, "results_id": result.eval_results_id, "pair_id": "a"}
    assert stored["human_critique"][0]["user"] == "dev"
    assert [p["pair_id"] for p in stored["all_scored_pairs"][0]] == ["a", "b", "c"]
    assert stored["pair_count"] == 3
