"""`cluster_by: "conversation"` through the service (E6, E11): POST /evaluate inside the request
and queued in chunks, and POST /compare by the baseline pair's conversation, against the formula
computed with numpy and scipy; the queued figures are those of the same evaluation inline.

The pairs are written with their conversation ids (conversation_of) through the dataset
routes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import point_service_at
from tests.error_bar_oracles import CLUSTERED, oracle_clustered, scores_of, topic_pairs
from tests.integration.conftest import Tenant, ok
from tests.work_queue import Work

METRICS = ["check:max_words:4", "check:contains:please"]


def conversation_of(pair_id: str) -> str | None:
    """Pair p<i>'s conversation: 17 of them, each spread through the dataset (so across
    chunks); every sixth pair in none."""
    i = int(pair_id[1:])
    return None if i % 6 == 5 else f"conversation {(i * 7) % 17}"


def with_conversations(data: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pairs, each with its conversation_id (conversation_of) when it has one."""
    out = []
    for pair in data:
        conversation = conversation_of(pair["id"])
        out.append(pair if conversation is None else {**pair, "conversation_id": conversation})
    return out


def body(response: Any) -> Any:
    return ok(response).json()


def seed(
    tenant: Tenant, data: list[dict[str, Any]], dataset_id: str = "ds", conversations: bool = True
) -> str:
    """The dataset written (its pairs with their conversation ids, unless not `conversations`),
    and the metrics set's id."""
    pairs = with_conversations(data) if conversations else data
    written = {"data": pairs, "system_prompt": "Be kind."}
    ok(tenant.post(f"/data/seed/{dataset_id}", written))
    return str(body(tenant.post("/specify_questions", {"metrics": METRICS}))["metrics_id"])


def keys_in_order(data: list[dict[str, Any]]) -> list[str]:
    """Each pair's cluster as the contract says: its conversation, or its own."""
    return [conversation_of(p["id"]) or f"own {p['id']}" for p in data]


def assert_oracle(
    figures: list[dict[str, Any]], scores: list[list[float]], keys: list[str]
) -> None:
    for m, got in enumerate(figures):
        expected = oracle_clustered([s[m] for s in scores], keys)
        assert got["clusters"] == expected["clusters"]
        for name in CLUSTERED[1:]:
            assert got[name] == pytest.approx(expected[name], abs=1e-9 if name[0] == "s" else 1e-6)


def test_an_inline_evaluation_clusters_by_conversation(acme: Tenant) -> None:
    data = topic_pairs(range(80), shift=0, labels=9)
    seed(acme, data)

    out = body(acme.post("/evaluate", {"seed_data_id": "ds", "cluster_by": "conversation"}))

    scores = scores_of(acme, out["eval_results_id"])
    keys = keys_in_order(data)
    assert len(set(keys)) == 17 + 13  # 13 pairs in no conversation, each its own cluster
    assert_oracle(out["scores"], [scores[p["id"]] for p in data], keys)
    got = body(acme.get(f"/evaluation/{out['eval_results_id']}"))
    assert got["cluster_by"] == "conversation"
    for m, metric in enumerate(out["scores"]):
        assert got["score_clustered"][m] == {name: metric[name] for name in CLUSTERED}


def test_a_queued_evaluation_clusters_by_conversation_across_its_chunks_as_inline(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chunks of 30 pairs: every conversation spans several chunks
    point_service_at({"EVALSVC_CHUNK_CHECKS": "60"}, monkeypatch)
    data = topic_pairs(range(300), shift=0, labels=25)
    seed(acme, data)
    request = {"seed_data_id": "ds", "cluster_by": "conversation"}
    response = acme.http.post(
        "/v1/evaluate", json=request, headers={**acme.headers, "Prefer": "respond-async"}
    )
    assert response.status_code == 202, response.text
    results_id = response.json()["eval_results_id"]
    assert work.drain() >= 10
    queued = body(acme.get(f"/evaluation/{results_id}"))
    assert queued["status"] == "complete"

    scores = scores_of(acme, results_id)
    assert_oracle(queued["score_clustered"], [scores[p["id"]] for p in data], keys_in_order(data))
    # …the figures of the same evaluation inside one request
    monkeypatch.delenv("EVALSVC_WORK_QUEUE_URL")
    point_service_at({}, monkeypatch)
    inline = body(acme.post("/evaluate", request))
    again = body(acme.get(f"/evaluation/{inline['eval_results_id']}"))
    assert [c["clusters"] for c in again["score_clustered"]] == [
        c["clusters"] for c in queued["score_clustered"]
    ]
    for mine, theirs in zip(queued["score_clustered"], again["score_clustered"], strict=True):
        for name in CLUSTERED[1:]:
            assert mine[name] == pytest.approx(theirs[name], rel=1e-12, abs=1e-15)


def test_a_comparison_clusters_by_the_baseline_pairs_conversation(acme: Tenant) -> None:
    base = topic_pairs(range(0, 70), shift=1, labels=9)
    cand = topic_pairs(range(4, 74), shift=3, labels=5)
    metrics_id = seed(acme, base, "v1")
    seed(acme, cand, "v2")
    ids = [
        body(acme.post("/evaluate", {"seed_data_id": name, "metrics_id": metrics_id}))[
            "eval_results_id"
        ]
        for name in ("v1", "v2")
    ]

    answer = body(
        acme.post(
            "/compare",
            {"baseline_id": ids[0], "candidate_id": ids[1], "cluster_by": "conversation"},
        )
    )

    assert answer["cluster_by"] == "conversation" and answer["pairs_matched"] == 66
    baseline, candidate = scores_of(acme, ids[0]), scores_of(acme, ids[1])
    shared = sorted(baseline.keys() & candidate.keys())
    keys = [conversation_of(p) or f"own {p}" for p in shared]
    diffs = [[c - b for b, c in zip(baseline[p], candidate[p], strict=True)] for p in shared]
    assert_oracle(answer["metrics"], diffs, keys)
    # The report names how the pairs were clustered.
    page = acme.get(
        f"/compare/report?baseline_id={ids[0]}&candidate_id={ids[1]}&cluster_by=conversation"
    )
    assert page.status_code == 200, page.text
    assert "the conversation of the baseline&#39;s pair" in page.text


def test_pairs_without_a_conversation_id_are_each_their_own_cluster(acme: Tenant) -> None:
    data = topic_pairs(range(40), shift=0, labels=9)
    seed(acme, data, conversations=False)

    out = body(acme.post("/evaluate", {"seed_data_id": "ds", "cluster_by": "conversation"}))

    scores = scores_of(acme, out["eval_results_id"])
    assert [m["clusters"] for m in out["scores"]] == [40, 40]
    assert_oracle(out["scores"], [scores[p["id"]] for p in data], [p["id"] for p in data])
    page = acme.get(f"/evaluation/{out['eval_results_id']}/report")
    assert page.status_code == 200, page.text
    assert "pairs sharing their conversation_id move together" in page.text
