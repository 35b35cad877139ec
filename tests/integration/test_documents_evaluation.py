"""E10 end to end through the routes: pairs with a reference and contexts scored on the reference
checks, the rag: metrics and a question (the OpenAI-compatible fake judge on 127.0.0.1: a claim
is a sentence, supported when all its words are in the contexts); pairs without what a metric
needs are not applicable, everywhere the scores are read."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from evalsvc.logic import datasets as dataset_logic
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetKind, Pair, pair_bytes
from evalsvc.scoring.judges import TOOL_NAME, configured_judge
from evalsvc.scoring.verdicts import SYSTEM, VERDICT_MAX_TOKENS, VERDICT_SCHEMA, user_message
from evalsvc.spending.meter import EXPECTED_VERDICT_TOKENS, calls_bound, text_bytes
from evalsvc.storage import judge_cache

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge
from tests.integration.conftest import Tenant, ok

CONTEXTS = ["Paris is a city in France.", "The Seine runs through Paris and Rouen."]
METRICS = [
    "check:exact_match",
    "check:token_f1",
    "check:rouge_l",
    "check:chrf",
    "rag:faithfulness",
    "rag:context_recall",
    "Does the output say please?",
]
TOKEN_F1, FAITHFULNESS, RECALL, QUESTION = 1, 4, 5, 6


def fake_model(monkeypatch: pytest.MonkeyPatch, setting: str, model: str) -> Iterator[FakeJudge]:
    """The fake OpenAI-compatible server, as the model `setting` names."""
    fake = FakeJudge()
    with fake.running():
        point_service_at(
            {
                setting: model,
                "EVALSVC_OPENAI_BASE_URL": fake.base_url,
                "EVALSVC_OPENAI_API_KEY": "sk-test-not-a-real-key",
                "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
            },
            monkeypatch,
        )
        yield fake


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    yield from fake_model(monkeypatch, "EVALSVC_LLM", "openai:fake-judge")


def seed(tenant: Tenant, dataset: str = "docs") -> None:
    data = [
        {
            "id": "a",
            "input": "Tell me about Paris.",
            "output": "Paris is in France. The Seine runs through Paris.",
            "reference": "Paris is in France.",
            "contexts": CONTEXTS,
        },
        {
            "id": "b",
            "input": "Tell me about Paris.",
            "output": "Paris is in France. Paris has ten million cats.",
            "reference": "Paris is a city in France.",
            "contexts": CONTEXTS,
        },
        {"id": "c", "input": "hi", "output": "Please sit."},  # neither field
        {"id": "d", "input": "hi", "output": "Paris is in France.", "contexts": CONTEXTS},
    ]
    ok(tenant.post(f"/data/seed/{dataset}", {"data": data}))


def test_not_applicable_pairs_are_counted_apart_everywhere_the_scores_are_read(
    acme: Tenant, judge: FakeJudge
) -> None:
    seed(acme)
    metrics_id = ok(acme.post("/specify_questions", {"metrics": METRICS})).json()["metrics_id"]

    answer = ok(acme.post("/evaluate", {"seed_data_id": "docs", "metrics_id": metrics_id})).json()

    scores = answer["scores"]
    # a, b have a reference; c, d do not. a, b, d have contexts. Every pair meets a question.
    assert [s["not_applicable"] for s in scores] == [2, 2, 2, 2, 1, 2, 0]
    # Faithfulness: a's two claims are supported; b's second is not; d's one is.
    faithfulness = scores[FAITHFULNESS]
    assert faithfulness["min_score"] == 3.0 and faithfulness["max_score"] == 5.0
    assert faithfulness["mean_score"] == pytest.approx((5 + 3 + 5) / 3)
    lowest = faithfulness["lowest_scoring_pairs"]
    assert [p["pair_id"] for p in lowest] == ["b", "a", "d"]
    assert "1 of 2 claims" in lowest[0]["score_reason"]
    assert "Paris has ten million cats" in lowest[0]["score_reason"]
    # A metric's lowest pairs are only those it scored.
    assert {p["pair_id"] for p in scores[TOKEN_F1]["lowest_scoring_pairs"]} == {"a", "b"}
    # At most two judge calls a pair and rag: metric (c is asked nothing for them).
    # 4 questions; faithfulness lists and checks the claims of a, b and d (3 x 2), context
    # recall of a and b (2 x 2): exactly two calls a pair and rag: metric, none for c.
    assert len(judge.requests) == 4 + 3 * 2 + 2 * 2

    results_id = answer["eval_results_id"]
    stored = ok(acme.get(f"/evaluation/{results_id}?includeAllScores=true")).json()
    assert stored["score_not_applicable"] == [2, 2, 2, 2, 1, 2, 0]
    assert [len(metric) for metric in stored["all_scored_pairs"]] == [2, 2, 2, 2, 3, 2, 4]
    assert {p["pair_id"] for p in stored["all_scored_pairs"][RECALL]} == {"a", "b"}
    assert stored["score_means"][FAITHFULNESS] == pytest.approx((5 + 3 + 5) / 3)
    assert sum(stored["score_histograms"][FAITHFULNESS]) == 3

    # No audit draw and no vote on a pair a metric does not apply to.
    sample = ok(
        acme.get(f"/evaluation/{results_id}/audit_sample?metric_idx={TOKEN_F1}&n=10")
    ).json()
    assert {p["pair_id"] for p in sample["pairs"]} == {"a", "b"}
    refused = acme.put(
        f"/vote_eval_pair/{results_id}", {"pair_id": "c", "metric_idx": TOKEN_F1, "vote": 1}
    )
    assert refused.status_code == 400
    assert "not applicable" in refused.json()["error"]

    # The report says how many pairs each metric left out.
    report = acme.get(f"/evaluation/{results_id}/report")
    assert report.status_code == 200
    assert "Not applicable" in report.text


def test_a_metric_no_pair_applies_to_has_null_statistics(acme: Tenant, judge: FakeJudge) -> None:
    ok(acme.post("/data/seed/bare", {"data": [{"id": "x", "input": "q", "output": "a"}]}))
    metrics_id = ok(
        acme.post("/specify_questions", {"metrics": ["check:non_empty", "check:rouge_l"]})
    ).json()["metrics_id"]

    answer = ok(acme.post("/evaluate", {"seed_data_id": "bare", "metrics_id": metrics_id})).json()

    rouge = answer["scores"][1]
    assert rouge["not_applicable"] == 1
    assert rouge["mean_score"] is None and rouge["ci_low"] is None
    assert rouge["lowest_scoring_pairs"] == []
    stored = ok(acme.get(f"/evaluation/{answer['eval_results_id']}")).json()
    assert stored["score_means"] == [5.0, None]
    assert stored["score_confidence_intervals"][1] is None
    assert stored["score_not_applicable"] == [0, 1]


def test_a_comparison_counts_a_pair_only_where_both_runs_scored_it(
    acme: Tenant, judge: FakeJudge
) -> None:
    seed(acme, "before")
    metrics_id = ok(acme.post("/specify_questions", {"metrics": ["check:token_f1"]})).json()[
        "metrics_id"
    ]
    before = ok(acme.post("/evaluate", {"seed_data_id": "before", "metrics_id": metrics_id})).json()
    # The candidate gains a reference for c, and a better answer for b.
    after = [
        {
            "id": "a",
            "input": "q",
            "output": "Paris is in France.",
            "reference": "Paris is in France.",
        },
        {
            "id": "b",
            "input": "q",
            "output": "Paris is a city in France.",
            "reference": "Paris is a city in France.",
        },
        {"id": "c", "input": "q", "output": "Please sit.", "reference": "Please sit."},
        {"id": "d", "input": "q", "output": "Paris."},
    ]
    ok(acme.post("/data/seed/after", {"data": after}))
    candidate = ok(
        acme.post("/evaluate", {"seed_data_id": "after", "metrics_id": metrics_id})
    ).json()

    compared = ok(
        acme.post(
            "/compare",
            {
                "baseline_id": before["eval_results_id"],
                "candidate_id": candidate["eval_results_id"],
            },
        )
    ).json()

    metric = compared["metrics"][0]
    assert compared["pairs_matched"] == 4
    assert metric["n"] == 2  # a and b: c and d were not scored by both
    assert metric["not_applicable"] == 2


def test_metric_sets_refuse_unknown_and_unconfigured_document_metrics(acme: Tenant) -> None:
    for definition, expected in (
        ("rag:faithfullness", "unknown rag: metric"),
        ("embed:cosine", "unknown embed: metric"),
        ("embed:similarity", "EVALSVC_EMBEDDINGS"),
        ("check:token_f1:3", "takes no argument"),
    ):
        response = acme.post("/specify_questions", {"metrics": [definition]})
        assert response.status_code == 400, definition
        assert expected in response.json()["error"], response.json()


def test_questions_see_the_reference_and_contexts_as_data(acme: Tenant, judge: FakeJudge) -> None:
    seed(acme)
    metrics_id = ok(acme.post("/specify_questions", {"metrics": [METRICS[QUESTION]]})).json()[
        "metrics_id"
    ]
    ok(acme.post("/evaluate", {"seed_data_id": "docs", "metrics_id": metrics_id}))
    prompts = [r["messages"][-1]["content"] for r in judge.requests]
    with_documents = [p for p in prompts if "<contexts>" in p]
    assert len(with_documents) == 3  # a, b and d have contexts; c is asked as before
    bare = [p for p in prompts if "<contexts>" not in p and "<reference>" not in p]
    assert len(bare) == 1 and "Please sit." in bare[0]


@pytest.fixture
def embedder(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    yield from fake_model(monkeypatch, "EVALSVC_EMBEDDINGS", "openai:text-embedding-3-small")


def test_embedding_similarity_scores_pairs_with_a_reference_estimated_and_cached(
    acme: Tenant, embedder: FakeJudge
) -> None:
    seed(acme)
    metrics_id = ok(
        acme.post("/specify_questions", {"metrics": ["embed:similarity", "check:non_empty"]})
    ).json()["metrics_id"]
    body = {"seed_data_id": "docs", "metrics_id": metrics_id}

    estimate = ok(acme.post("/evaluate/estimate", body)).json()
    answer = ok(acme.post("/evaluate", body)).json()

    similarity = answer["scores"][0]
    assert similarity["not_applicable"] == 2  # c and d have no reference
    assert 1.0 <= similarity["min_score"] <= similarity["max_score"] <= 5.0
    # a and b: their outputs and references, each distinct text embedded once, in one call.
    sent = [text for request in embedder.embedding_requests for text in request["input"]]
    assert len(embedder.embedding_requests) == 1 and len(sent) == len(set(sent)) == 4
    assert answer["usage"]["llm_calls"] == 1
    assert estimate["llm_calls"] == 1 and estimate["cost_usd_max"] > 0
    reasons = ok(acme.get(f"/evaluation/{answer['eval_results_id']}?includeAllScores=true"))
    listed = reasons.json()["all_scored_pairs"][0]
    assert {p["pair_id"] for p in listed} == {"a", "b"}
    assert all("cosine similarity" in p["reason"] for p in listed)

    # The same pairs again: every vector from the cache, no call.
    ok(acme.post("/evaluate", body))
    assert len(embedder.embedding_requests) == 1


def test_an_unread_selection_bounds_questions_as_before_unless_its_pairs_have_documents(
    acme: Tenant, judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Estimates of a selection read by keys alone count the pairs with a reference or contexts
    (each head item says so): a dataset without them is bounded exactly as before E10, one with
    them by the larger prompt of those pairs alone."""
    point_service_at({"EVALSVC_INLINE_MAX_BYTES": "1"}, monkeypatch)  # read by keys alone
    plain = [{"id": f"p{k}", "input": f"q{k}", "output": f"please {k}"} for k in range(5)]
    documented = [dict(pair) for pair in plain]
    documented[1]["contexts"] = ["It is Paris.", "The Seine."]
    documented[3]["reference"] = "Paris."
    ok(acme.post("/data/seed/plain", {"data": plain}))
    ok(acme.post("/data/seed/documented", {"data": documented}))
    identity = Identity(tenant="acme", user="ann", user_email="ann@acme.test", key_id="k")
    selections = {
        name: dataset_logic.select(
            identity, DatasetKind.SEED, name, None, "evaluate", keys_only=True
        )
        for name in ("plain", "documented")
    }
    assert selections["plain"].documented == (0, 0)
    with_documents = [Pair(**p) for p in documented if "reference" in p or "contexts" in p]
    assert selections["documented"].documented == (2, sum(map(pair_bytes, with_documents)))

    cached_judge = configured_judge("acme", judge_cache)
    assert cached_judge is not None
    question = METRICS[QUESTION]
    plain_bytes = selections["plain"].bytes
    assert plain_bytes is not None
    bound = cached_judge.bound_unread(
        [question], "", 5, plain_bytes, documented=selections["plain"].documented
    )
    # As before E10: every pair's prompt without the blocks, its texts once.
    fixed = text_bytes(SYSTEM, json.dumps(VERDICT_SCHEMA), TOOL_NAME)
    before = calls_bound(
        5,
        5 * (fixed + text_bytes(user_message(question, "", "", ""))) + plain_bytes,
        VERDICT_MAX_TOKENS,
        cached_judge.llm.max_attempts,
        EXPECTED_VERDICT_TOKENS,
    )
    assert bound.input_tokens_max == before.input_tokens_max
    # Pairs with documents make it larger; not knowing which do, every pair counts so.
    docs_bytes = selections["documented"].bytes
    assert docs_bytes is not None
    docs = cached_judge.bound_unread(
        [question], "", 5, docs_bytes, documented=selections["documented"].documented
    )
    unknown = cached_judge.bound_unread([question], "", 5, docs_bytes)
    assert before.input_tokens_max < docs.input_tokens_max < unknown.input_tokens_max
