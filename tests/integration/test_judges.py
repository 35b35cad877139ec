"""Question metrics scored by the LLM judge: an OpenAI-compatible fake on 127.0.0.1, and
Bedrock Converse through botocore's Stubber."""

from __future__ import annotations

import json
from collections.abc import Iterator

import boto3
import pytest
from botocore.stub import Stubber
from evalsvc.scoring.verdicts import VERDICT_MAX_TOKENS

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, sequence
from tests.integration.conftest import Tenant, ok

QUESTION = "Does the output say please?"
VERDICT_4 = json.dumps({"reason": "Mostly polite.", "score": 4})


def seed(tenant: Tenant) -> None:
    data = [
        {"id": "a", "input": "hi", "output": "please sit"},
        {"id": "b", "input": "hey", "output": "sit"},
        {"id": "c", "input": "yo", "output": "Please, sit down"},
    ]
    assert (
        tenant.post("/data/seed/ds", {"data": data, "system_prompt": "Be polite."}).status_code
        == 200
    )
    assert (
        tenant.post("/specify_questions", {"metrics": [QUESTION, "check:non_empty"]}).status_code
        == 200
    )


def seed_one(tenant: Tenant) -> None:
    """Dataset `one`: one pair, and the judged question as the latest metrics set."""
    ok(
        tenant.post(
            "/data/seed/one",
            {"data": [{"id": "a", "input": "hi", "output": "please"}], "system_prompt": "P"},
        )
    )
    ok(tenant.post("/specify_questions", {"metrics": [QUESTION]}))


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    fake = FakeJudge()
    with fake.running():
        point_service_at(
            {
                "EVALSVC_LLM": "openai:fake-judge",
                "EVALSVC_OPENAI_BASE_URL": fake.base_url,
                "EVALSVC_OPENAI_API_KEY": "sk-test-not-a-real-key",
                "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
                "EVALSVC_JUDGE_TIMEOUT_SECONDS": "30",
            },
            monkeypatch,
        )
        yield fake


def test_judge_scores_questions_with_reasons(acme: Tenant, judge: FakeJudge) -> None:
    seed(acme)

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    question = response.json()["scores"][0]
    assert question["metric"] == QUESTION
    assert question["mean_score"] == 4.0
    assert question["lowest_scoring_pairs"][0] == {
        "pair_id": "b",
        "score_reason": "The output never says please.",
        "score": 2.0,
    }
    assert len(judge.requests) == 3
    request = judge.requests[0]
    assert request["model"] == "fake-judge"
    assert request["temperature"] == 0
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["schema"]["required"] == ["reason", "score"]
    # Calls run concurrently: the requests arrive in any order, one per pair
    prompts = [r["messages"][1]["content"] for r in judge.requests]
    assert all(QUESTION in p and "Be polite." in p for p in prompts)
    pair_a = [p for p in prompts if "<input>\nhi\n</input>" in p]
    assert len(pair_a) == 1 and "<output>\nplease sit\n</output>" in pair_a[0]
    assert "reason" in request["messages"][0]["content"].lower()


def test_re_evaluating_unchanged_pairs_makes_no_judge_calls(acme: Tenant, judge: FakeJudge) -> None:
    seed(acme)
    first = acme.post("/evaluate", {"seed_data_id": "ds"}).json()
    assert len(judge.requests) == 3

    second = acme.post("/evaluate", {"seed_data_id": "ds"}).json()
    assert len(judge.requests) == 3
    assert second["scores"][0]["mean_score"] == first["scores"][0]["mean_score"]

    ok(acme.post("/data/seed/ds/pair", {"id": "d", "input": "new", "output": "please"}))
    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))
    assert len(judge.requests) == 4


def test_throttling_then_success(acme: Tenant, judge: FakeJudge) -> None:
    seed(acme)
    judge.answer = sequence((429, '{"error": "slow down"}'), (503, "busy"), (200, VERDICT_4))

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    assert response.json()["scores"][0]["mean_score"] == 4.0
    assert len(judge.requests) == 5


def test_garbage_then_success(acme: Tenant, judge: FakeJudge) -> None:
    seed(acme)
    judge.answer = sequence(
        (200, "I think it is fine."),
        (200, '{"reason": "x", "score": 9}'),
        (200, 'Sure! ```json\n{"reason": "Fenced but fine.", "score": 4}\n``` Hope that helps.'),
    )

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    assert (
        response.json()["scores"][0]["lowest_scoring_pairs"][0]["score_reason"]
        == "Fenced but fine."
    )
    # Three first calls, greedy; the two pairs answered unusably are asked again, sampling.
    assert sorted(r["temperature"] for r in judge.requests) == [0, 0, 0, 0.7, 0.7]


def test_garbage_forever_is_502_and_stores_nothing(
    acme: Tenant, judge: FakeJudge, tables: dict[str, str]
) -> None:
    seed(acme)
    judge.answer = sequence((200, "no idea"))

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 502
    error = response.json()["error"]
    assert (
        f"metric {QUESTION!r}" in error
        and "after 4 attempts" in error
        and "nothing was stored" in error
    )
    assert "pair 'a'" in error or "pair 'b'" in error or "pair 'c'" in error
    assert boto3.client("dynamodb").scan(TableName=tables["EVALSVC_RESULTS_TABLE"])["Items"] == []


def test_slow_judge_within_limits_with_bounded_concurrency(
    acme: Tenant, judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALSVC_JUDGE_CONCURRENCY", "3")
    point_service_at({}, monkeypatch)
    judge.latency = 0.3
    data = [{"id": f"p{i}", "input": "i", "output": "please" if i % 2 else "no"} for i in range(9)]
    ok(acme.post("/data/seed/slow", {"data": data}))
    ok(acme.post("/specify_questions", {"metrics": [QUESTION]}))

    response = acme.post("/evaluate", {"seed_data_id": "slow"})

    assert response.status_code == 200, response.text
    assert response.json()["pair_count"] == 9
    assert 2 <= judge.max_in_flight <= 3


def test_judge_refusing_credentials_is_503(acme: Tenant, judge: FakeJudge) -> None:
    seed(acme)
    judge.answer = sequence((401, '{"error": "bad key"}'))

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 503
    assert "EVALSVC_OPENAI_API_KEY" in response.json()["error"]
    assert "sk-test-not-a-real-key" not in response.text


@pytest.mark.parametrize("setting", ["openai:", "mystery:model", "openai"])
def test_bad_llm_setting_is_503(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch, setting: str
) -> None:
    seed(acme)
    point_service_at({"EVALSVC_LLM": setting}, monkeypatch)

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 503
    assert "EVALSVC_LLM" in response.json()["error"]


def _converse_response(reason: str, score: int) -> dict[str, object]:
    return {
        "output": {
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "toolUse": {
                            "toolUseId": "t1",
                            "name": "record_verdict",
                            "input": {"reason": reason, "score": score},
                        }
                    }
                ],
            }
        },
        "stopReason": "tool_use",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 12},
    }


def test_bedrock_judge_with_a_forced_tool(acme: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalsvc.scoring.llm import bedrock

    seed(acme)
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    stubber = Stubber(client)
    stubber.add_client_error(
        "converse", service_error_code="ThrottlingException", http_status_code=429
    )
    for score in (5, 2, 5):
        stubber.add_response("converse", _converse_response(f"scored {score}", score))
    monkeypatch.setattr(bedrock, "_bedrock_client", lambda region, read_timeout: client)
    point_service_at(
        {
            "EVALSVC_LLM": "bedrock:anthropic.claude-3-haiku",
            "EVALSVC_JUDGE_CONCURRENCY": "1",
            "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
        },
        monkeypatch,
    )

    with stubber:
        response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    assert response.json()["scores"][0]["mean_score"] == 4.0
    stubber.assert_no_pending_responses()
    # Four attempts (one throttled), each answer's tokens as Converse counted them; the model
    # is not in the price table.
    assert response.json()["usage"] == {
        "llm_calls": 4,
        "cache_hits": 0,
        "input_tokens": 30,
        "output_tokens": 15,
        "cost_usd": None,
        "model": "bedrock:anthropic.claude-3-haiku",
        "lost_work": None,
    }


def test_bedrock_usage_is_priced_from_the_built_in_table(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.scoring.llm import bedrock

    seed(acme)
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    stubber = Stubber(client)
    for score in (5, 2, 5):
        stubber.add_response("converse", _converse_response(f"scored {score}", score))
    monkeypatch.setattr(bedrock, "_bedrock_client", lambda region, read_timeout: client)
    point_service_at(
        {
            "EVALSVC_LLM": "bedrock:anthropic.claude-3-haiku-20240307-v1:0",
            "EVALSVC_JUDGE_CONCURRENCY": "1",
        },
        monkeypatch,
    )

    with stubber:
        usage = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]

    # $0.25 and $1.25 per million input and output tokens
    assert (usage["llm_calls"], usage["input_tokens"], usage["output_tokens"]) == (3, 30, 15)
    assert usage["cost_usd"] == pytest.approx((30 * 0.25 + 15 * 1.25) / 1e6, rel=1e-12)


def test_bedrock_tool_input_outside_the_schema_is_a_failed_attempt(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch, tables: dict[str, str]
) -> None:
    from evalsvc.scoring.llm import bedrock

    seed_one(acme)
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    stubber = Stubber(client)
    for _ in range(4):
        stubber.add_response("converse", _converse_response("Very polite.", 9))
    monkeypatch.setattr(bedrock, "_bedrock_client", lambda region, read_timeout: client)
    point_service_at(
        {"EVALSVC_LLM": "bedrock:model-x", "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01"}, monkeypatch
    )

    with stubber:
        response = acme.post("/evaluate", {"seed_data_id": "one"})

    assert response.status_code == 502, response.text
    assert "after 4 attempts" in response.json()["error"]
    assert "$.score: 9 is not one of [1, 2, 3, 4, 5]" in response.json()["error"]
    stubber.assert_no_pending_responses()
    assert boto3.client("dynamodb").scan(TableName=tables["EVALSVC_RESULTS_TABLE"])["Items"] == []


def test_bedrock_request_shape(acme: Tenant, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalsvc.scoring.llm import bedrock

    seed_one(acme)
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    stubber = Stubber(client)
    seen: list[dict[str, object]] = []
    client.meta.events.register(
        "before-parameter-build.bedrock-runtime.Converse", lambda params, **_: seen.append(params)
    )
    stubber.add_response("converse", _converse_response("ok", 5))
    monkeypatch.setattr(bedrock, "_bedrock_client", lambda region, read_timeout: client)
    point_service_at({"EVALSVC_LLM": "bedrock:model-x"}, monkeypatch)

    with stubber:
        assert acme.post("/evaluate", {"seed_data_id": "one"}).status_code == 200

    params = seen[0]
    assert params["modelId"] == "model-x"
    # Every call says how many tokens its answer may take: what bounds an estimate.
    assert params["inferenceConfig"] == {"temperature": 0, "maxTokens": VERDICT_MAX_TOKENS}
    assert params["toolConfig"]["toolChoice"] == {"tool": {"name": "record_verdict"}}  # type: ignore[index]


def test_evaluation_metrics_are_emitted(acme: Tenant, judge: FakeJudge) -> None:
    from evalsvc.core.observability import metrics

    seed(acme)
    judge.answer = sequence((429, "{}"), (200, VERDICT_4))
    metrics.clear_metrics()

    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200

    emitted = metrics.serialize_metric_set()
    values = {
        m["Name"]: emitted[m["Name"]] for m in emitted["_aws"]["CloudWatchMetrics"][0]["Metrics"]
    }
    metrics.clear_metrics()
    assert values["PairsScored"] == [3.0, 3.0]
    assert values["JudgeCalls"] == [3.0, 0.0]
    assert values["JudgeCacheHits"] == [0.0, 3.0]
    assert values["JudgeRetries"] == [1.0, 0.0]
    assert values["Evaluations"] == [1.0, 1.0]
