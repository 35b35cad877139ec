"""The embeddings of embed:similarity against the fake OpenAI-compatible server on 127.0.0.1
(`/v1/embeddings`) and Titan v2 through botocore's Stubber, their vectors kept in the judge
cache's table; their usage kept in the month beside the judge's, each model at its own price,
and max_cost_usd holding the sum of a request's batches."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber
from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import InvalidInput, JudgeFailed
from evalsvc.logic import spending
from evalsvc.models.jobs import Chunk
from evalsvc.scoring.checks import Score
from evalsvc.scoring.embeddings import (
    CachedEmbeddings,
    Similarities,
    cache_key,
    configured_embeddings,
)
from evalsvc.spending.meter import Usage, calls_bound
from evalsvc.storage import dynamo, judge_cache
from evalsvc.storage import jobs as jobs_store

from tests.conftest import point_service_at
from tests.fake_judge import (
    EMBEDDING_DIMENSIONS,
    FakeJudge,
    embedding_tokens,
    embeddings_reply,
    failing_first,
    hashed_embeddings,
    refusing_long_texts,
)

MODEL = "openai:text-embedding-3-small"
KEY = "sk-test-not-a-real-key"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    fake = FakeJudge()
    with fake.running():
        point_service_at(
            {
                "EVALSVC_EMBEDDINGS": MODEL,
                "EVALSVC_OPENAI_BASE_URL": fake.base_url,
                "EVALSVC_OPENAI_API_KEY": KEY,
                "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
            },
            monkeypatch,
        )
        yield fake


def embeddings(tenant: str = "acme", deadline: Deadline | None = None) -> CachedEmbeddings:
    found = configured_embeddings(tenant, judge_cache, deadline)
    assert found is not None
    return found


def run(items: list[tuple[str, str]], tenant: str = "acme") -> dict[int, Score]:
    similarities: Similarities = embeddings(tenant).begin(items)
    try:
        return similarities.result()
    finally:
        similarities.close()


def texts_sent(fake: FakeJudge) -> list[str]:
    return [text for request in fake.embedding_requests for text in request["input"]]


def test_unset_there_are_no_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    point_service_at({"EVALSVC_EMBEDDINGS": ""}, monkeypatch)

    assert configured_embeddings("acme", judge_cache) is None


def test_130_texts_in_three_calls_with_the_judge_s_key_then_from_the_cache(
    server: FakeJudge,
) -> None:
    items = [(f"answer {k} says yes", f"reference {k} says yes") for k in range(65)]

    scores = run(items)

    # The batches go out at once, in any order.
    sizes = sorted((len(request["input"]) for request in server.embedding_requests), reverse=True)
    assert sizes == [64, 64, 2]
    assert {request["model"] for request in server.embedding_requests} == {"text-embedding-3-small"}
    assert set(server.authorizations) == {f"Bearer {KEY}"}
    assert server.requests == []  # no chat completion
    assert set(scores) == set(range(65))
    assert all(1.0 <= score.value <= 5.0 for score in scores.values())
    assert scores[0].reason.startswith("cosine similarity 0.")
    # Kept in the judge cache's table, per tenant, float32 in base64.
    stored = judge_cache.get_many("acme", [cache_key(MODEL, "answer 0 says yes")])
    assert next(iter(stored.values()))[0] == EMBEDDING_DIMENSIONS
    assert judge_cache.get_many("other", [cache_key(MODEL, "answer 0 says yes")]) == {}

    again = run(items)

    assert len(server.embedding_requests) == 3 and again == scores


def test_an_8192_dimension_vector_is_kept_far_under_an_item_s_400_kb(server: FakeJudge) -> None:
    server.embeddings = lambda request: (
        200,
        embeddings_reply([[0.123456789] * 8192 for _ in request["input"]], 3),
    )

    run([("long vectors", "long vectors")])

    key = f"T#acme#{cache_key(MODEL, 'long vectors')}"
    item = dynamo.call("get_item", TableName=judge_cache._table(), Key={"pk": {"S": key}})["Item"]
    assert len(json.dumps(item)) < 50_000 < 400 * 1024


def test_throttling_and_5xx_are_retried_then_the_answer_is_used(server: FakeJudge) -> None:
    server.embeddings = failing_first(2, (503, "overloaded"), hashed_embeddings)

    scores = run([("a b", "a b c")])

    assert len(server.embedding_requests) == 3 and set(scores) == {0}


def test_failure_after_every_attempt_is_named_and_nothing_else_is_lost(server: FakeJudge) -> None:
    server.embeddings = failing_first(100, (500, "down"), server.embeddings)

    with pytest.raises(JudgeFailed) as raised:
        run([("one", "two")])

    assert str(raised.value) == (
        f"the embeddings model {MODEL} failed on item 0's output (3 characters, the longest of "
        "the 2 texts in its call) after 4 attempts: the embeddings model answered HTTP 500; "
        "nothing was stored"
    )
    assert len(server.embedding_requests) == 4


def test_a_text_too_long_for_the_model_is_a_failure_naming_its_item(
    server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALSVC_EMBEDDINGS_BATCH", "1")
    point_service_at({}, monkeypatch)
    server.embeddings = refusing_long_texts(50_000)
    long_text = "word " * 20_000  # 100,000 characters, sent as they are

    with pytest.raises(JudgeFailed) as raised:
        run([("short", "fine"), ("fine", long_text)])

    message = str(raised.value)
    assert message.startswith(f"the embeddings model {MODEL} failed on item 1's reference ")
    assert "after 1 attempts: it refused the texts (HTTP 400: the input is too long" in message
    assert "word word" not in message
    assert max(len(t) for t in texts_sent(server)) == 100_000
    # what was embedded before the failure is kept
    kept = judge_cache.get_many("acme", [cache_key(MODEL, "short"), cache_key(MODEL, "fine")])
    assert len(kept) == 2


def test_an_answer_with_the_wrong_count_of_vectors_is_retried_then_fails(
    server: FakeJudge,
) -> None:
    server.embeddings = lambda request: (200, embeddings_reply([[1.0, 0.0]], 1))

    with pytest.raises(JudgeFailed, match=r"after 4 attempts: unusable answer \(1 vectors for 2"):
        run([("a", "b")])


def test_the_deadline_leaves_late_items_out(
    server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALSVC_EMBEDDINGS_BATCH", "1")
    monkeypatch.setenv("EVALSVC_JUDGE_CONCURRENCY", "1")
    point_service_at({}, monkeypatch)
    server.latency = 0.5

    started = time.monotonic()
    similarities = embeddings(deadline=Deadline.after(1.8)).begin(
        [("a", "a"), ("b", "c"), ("d", "e"), ("f", "g")]
    )
    try:
        scores = similarities.result()
    finally:
        similarities.close()

    assert time.monotonic() - started < 3
    assert 0 in scores and len(scores) < 4


def test_usage_beside_the_judge_s_is_priced_each_at_its_own_in_the_month(
    server: FakeJudge,
) -> None:
    with spending.session("acme", "POST /evaluate", 20) as spend:
        # A judge's call, as the LLM client meters it.
        with spend.meter.attempt(Usage(1, 0, 2_000, 250, "openai:gpt-4o-mini")) as attempt:
            attempt.used(1_000_000, 100_000)
        run([("the cat", "a cat"), ("the cat", "dogs")])
        usage = spend.usage()

    tokens = embedding_tokens(["the cat", "a cat", "dogs"])
    assert [(s.model, s.llm_calls, s.input_tokens) for s in usage.shares] == [
        ("openai:gpt-4o-mini", 1, 1_000_000),
        (MODEL, 1, tokens),
    ]
    expected = Decimal("0.15") + Decimal("0.06") + Decimal("0.02") * tokens / 1_000_000
    assert usage.cost() == expected
    month = spending.month_usage("acme", spending.this_month())
    assert month.cost_usd == pytest.approx(float(expected), rel=1e-12)
    assert month.llm_calls == 2


def test_max_cost_holds_the_sum_of_a_request_s_batches(server: FakeJudge) -> None:
    judge = calls_bound(10, 40_000, 250, 4, 150)
    judge.model = "openai:gpt-4o-mini"
    items = [(f"output {k}", f"reference {k}") for k in range(40)]
    probe = embeddings().bound(items).cost_max()
    assert probe is not None
    cap = judge.cost_max() + probe / 2  # type: ignore[operator]

    with (
        pytest.raises(InvalidInput, match="more than max_cost_usd"),
        spending.session("acme", "POST /evaluate", 20, cap) as spend,
    ):
        spend.guard(judge)  # the judge's batch fits the cap alone
        embeddings().begin(items)  # and the embeddings' would alone, but not with it

    assert server.embedding_requests == []


def test_a_chunk_s_usage_of_two_models_is_kept_model_by_model() -> None:
    chunk = Chunk("evaluation", "acme", "ev_1", 0, 0, 1, "a", "b")
    judge = Usage(2, 0, 1_000, 100, "openai:gpt-4o-mini")
    embed = Usage(1, 3, 500, 0, MODEL)

    jobs_store.add_spent(chunk, judge + embed)
    jobs_store.add_spent(chunk, judge)

    spent = jobs_store.spent("acme", "evaluation", "ev_1").usage
    assert spent == judge + judge + embed
    assert spent.cost() == (judge + judge).cost() + embed.cost()  # type: ignore[operator]


# ---- Titan Text Embeddings v2 on Bedrock, through botocore's Stubber ------------------------

TITAN = "amazon.titan-embed-text-v2:0"


def _titan(vector: list[float], tokens: int) -> dict[str, Any]:
    raw = json.dumps({"embedding": vector, "inputTextTokenCount": tokens}).encode()
    return {"body": StreamingBody(io.BytesIO(raw), len(raw)), "contentType": "application/json"}


def _expected(text: str) -> dict[str, Any]:
    return {
        "modelId": TITAN,
        "body": json.dumps({"inputText": text, "normalize": True, "dimensions": 256}),
        "contentType": "application/json",
        "accept": "application/json",
    }


@pytest.fixture
def titan(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stubber]:
    from evalsvc.scoring.llm import bedrock

    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    stubber = Stubber(client)
    monkeypatch.setattr(bedrock, "_bedrock_client", lambda region, read_timeout: client)
    point_service_at(
        {
            "EVALSVC_EMBEDDINGS": f"bedrock:{TITAN}",
            "EVALSVC_EMBEDDINGS_DIMENSIONS": "256",
            "EVALSVC_JUDGE_CONCURRENCY": "1",
            "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
        },
        monkeypatch,
    )
    with stubber:
        yield stubber
    stubber.assert_no_pending_responses()


def test_titan_one_text_a_call_retried_when_throttled_and_priced(titan: Stubber) -> None:
    titan.add_response("invoke_model", _titan([0.6, 0.8] + [0.0] * 254, 4), _expected("yes"))
    titan.add_client_error(
        "invoke_model", service_error_code="ThrottlingException", http_status_code=429
    )
    titan.add_response("invoke_model", _titan([0.8, 0.6] + [0.0] * 254, 3), _expected("ok"))

    with spending.session("acme", "POST /evaluate", 20) as spend:
        scores = run([("yes", "ok"), ("yes", "yes")])
        usage = spend.usage()

    assert scores[0].value == round(1 + 4 * 0.96, 4)
    assert scores[0].reason == (
        f"cosine similarity 0.9600 between the output and the reference (bedrock:{TITAN})"
    )
    assert scores[1].value == 5.0
    assert usage == Usage(3, 0, 7, 0, f"bedrock:{TITAN}")
    assert usage.cost() == Decimal("0.02") * 7 / 1_000_000


def test_titan_refusing_a_text_names_its_item(titan: Stubber) -> None:
    titan.add_client_error(
        "invoke_model",
        service_error_code="ValidationException",
        service_message="Too many input tokens",
        http_status_code=400,
    )

    with pytest.raises(JudgeFailed) as raised:
        run([("x" * 60_000, "y")])

    assert str(raised.value) == (
        f"the embeddings model bedrock:{TITAN} failed on item 0's output after 1 attempts: it "
        "refused the texts (Bedrock answered ValidationException: Too many input tokens); "
        "nothing was stored"
    )


def test_titan_vectors_of_other_dimensions_than_asked_are_unusable(titan: Stubber) -> None:
    for _ in range(4):
        titan.add_response("invoke_model", _titan([1.0] * 1024, 2), _expected("z"))

    with pytest.raises(
        JudgeFailed, match="vectors of 1024 dimensions, where this model's have 256"
    ):
        run([("z", "z")])


def test_a_5xx_saying_a_text_is_too_large_is_not_asked_again(server: FakeJudge) -> None:
    # llama-server's answer to a text longer than its batch
    too_large = "input (900 tokens) is too large to process. increase the physical batch size"
    server.embeddings = lambda request: (
        500,
        json.dumps({"error": {"code": 500, "message": too_large, "type": "server_error"}}),
    )

    with pytest.raises(JudgeFailed) as raised:
        run([("a", "b")])

    assert f"after 1 attempts: it refused the texts (HTTP 500: {too_large})" in str(raised.value)
    assert len(server.embedding_requests) == 1
