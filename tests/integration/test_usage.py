"""E3: LLM usage on the responses, prices, estimates, max_cost_usd and GET /usage, against the
fake OpenAI-compatible judge (which reports `usage`) and moto tables."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from evalsvc.scoring.verdicts import VERDICT_MAX_TOKENS

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, sequence
from tests.integration.conftest import Tenant, ok
from tests.integration.test_bad_input_catalogue import snapshot

QUESTION = "Does the output say please?"
VERDICT = json.dumps({"reason": "Polite enough.", "score": 4})
# USD per million tokens of the fake judge's model, given through EVALSVC_PRICES.
PRICE_IN, PRICE_OUT = Decimal("1.5"), Decimal("6")
PRICES = json.dumps({"openai:fake-judge": {"input": 1.5, "output": 6}})


def judge_env(fake: FakeJudge, **extra: str) -> dict[str, str]:
    return {
        "EVALSVC_LLM": "openai:fake-judge",
        "EVALSVC_OPENAI_BASE_URL": fake.base_url,
        "EVALSVC_OPENAI_API_KEY": "sk-test-not-a-real-key",
        "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
        "EVALSVC_PRICES": PRICES,
        **extra,
    }


def seed(tenant: Tenant, metrics: list[str] | None = None, pairs: int = 3) -> str:
    data = [{"id": f"p{k}", "input": f"q{k}", "output": f"please answer {k}"} for k in range(pairs)]
    assert tenant.post("/data/seed/ds", {"data": data, "system_prompt": "Be polite."}).is_success
    created = tenant.post("/specify_questions", {"metrics": metrics or [QUESTION]})
    assert created.status_code == 200
    return str(created.json()["metrics_id"])


def reported(fake: FakeJudge) -> tuple[int, int]:
    return (
        sum(u["prompt_tokens"] for u in fake.reported),
        sum(u["completion_tokens"] for u in fake.reported),
    )


def cost(input_tokens: int, output_tokens: int) -> float:
    return float((PRICE_IN * input_tokens + PRICE_OUT * output_tokens) / 1_000_000)


def test_an_evaluation_reports_the_providers_counts_and_their_cost(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme)

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    usage = response.json()["usage"]
    input_tokens, output_tokens = reported(priced_judge)
    assert input_tokens > 0 and output_tokens > 0
    assert usage == {
        "llm_calls": 3,
        "cache_hits": 0,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cost_usd": pytest.approx(cost(input_tokens, output_tokens), rel=1e-12),
        "model": "openai:fake-judge",
        "lost_work": None,
    }
    stored = acme.get(f"/evaluation/{response.json()['eval_results_id']}").json()
    assert stored["usage"] == usage
    # Every call asked for at most max_tokens.
    assert {request["max_tokens"] for request in priced_judge.requests} == {VERDICT_MAX_TOKENS}


def test_cache_hits_are_counted_and_cost_nothing(acme: Tenant, priced_judge: FakeJudge) -> None:
    seed(acme)
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200

    again = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]

    assert again == {
        "llm_calls": 0,
        "cache_hits": 3,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "model": "openai:fake-judge",
        "lost_work": None,
    }


def test_every_attempt_is_counted_when_an_answer_is_retried(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme, pairs=1)
    priced_judge.answer = sequence((200, "not json at all"), (429, "{}"), (200, VERDICT))

    usage = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]

    # Three attempts: an unusable answer (its tokens were spent), a throttled one (none), a
    # verdict.
    assert usage["llm_calls"] == 3
    assert (usage["input_tokens"], usage["output_tokens"]) == reported(priced_judge)
    assert len(priced_judge.reported) == 2


def test_an_answer_without_counts_is_counted_at_its_bound(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme, pairs=1)
    priced_judge.usage = None
    estimate = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()

    usage = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]

    attempts = 4  # EVALSVC_JUDGE_MAX_ATTEMPTS
    assert usage["output_tokens"] == VERDICT_MAX_TOKENS
    assert usage["input_tokens"] == estimate["input_tokens_max"] // attempts


def test_a_model_without_a_price_has_a_null_cost(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_PRICES": ""}, monkeypatch)
    seed(acme)
    estimate = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()

    usage = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]

    assert usage["llm_calls"] == 3 and usage["input_tokens"] > 0
    assert usage["cost_usd"] is None
    assert estimate["cost_usd_max"] is None and estimate["cost_usd_expected"] is None
    # Once every verdict is cached, nothing is left to pay for.
    again = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()
    assert (again["llm_calls"], again["cost_usd_max"]) == (0, 0.0)


def test_deterministic_work_has_no_calls_and_costs_nothing(acme: Tenant) -> None:
    seed(acme, metrics=["check:non_empty"])

    usage = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]

    assert usage == {
        "llm_calls": 0,
        "cache_hits": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "model": None,
        "lost_work": None,
    }


def test_questions_improvement_and_augmentation_report_their_usage(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme)
    before = len(priced_judge.reported)
    questions = acme.post("/questions", {"system_prompt": "You must always say please."})
    assert questions.status_code == 200, questions.text
    assert questions.json()["usage"]["llm_calls"] == 1
    assert (
        questions.json()["usage"]["input_tokens"] == priced_judge.reported[before]["prompt_tokens"]
    )

    result = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["eval_results_id"]
    improved = acme.post(
        "/improve_prompt",
        {
            "seed_data_id": "ds",
            "prompt_comparison_results": {
                "candidates": [{"prompt": "Be polite.", "eval_results_id": result}]
            },
        },
    )
    assert improved.status_code == 200, improved.text
    assert improved.json()["usage"]["llm_calls"] == 1
    assert (
        improved.json()["usage"]["output_tokens"] == priced_judge.reported[-1]["completion_tokens"]
    )

    augmented = acme.post("/augment", {"seed_data_id": "ds", "multiple": 2})
    assert augmented.status_code == 200, augmented.text
    usage = augmented.json()["usage"]
    assert usage["llm_calls"] == 3  # one per seed pair
    assert usage["cost_usd"] == pytest.approx(
        cost(usage["input_tokens"], usage["output_tokens"]), rel=1e-12
    )


# ---- the estimate ------------------------------------------------------------------------------


def test_an_estimate_stores_nothing_calls_nothing_and_bounds_the_run(
    acme: Tenant, priced_judge: FakeJudge, tables: dict[str, str]
) -> None:
    seed(acme, metrics=[QUESTION, "check:non_empty", "Is it short?"])
    before = snapshot(tables)

    estimate = acme.post("/evaluate/estimate", {"seed_data_id": "ds"})

    assert estimate.status_code == 200, estimate.text
    assert snapshot(tables) == before
    assert priced_judge.requests == []
    figures = estimate.json()
    assert figures["pairs"] == 3
    assert figures["llm_calls"] == 6 and figures["cached_calls"] == 0
    assert figures["model"] == "openai:fake-judge"
    usage = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]
    assert usage["input_tokens"] <= figures["input_tokens_max"]
    assert usage["output_tokens"] <= figures["output_tokens_max"]
    assert usage["cost_usd"] <= figures["cost_usd_max"]
    assert figures["cost_usd_expected"] <= figures["cost_usd_max"]
    assert figures["output_tokens_max"] == 6 * 4 * VERDICT_MAX_TOKENS  # calls x attempts x max


def test_an_estimate_counts_what_the_judge_cache_holds_as_free(
    acme: Tenant, priced_judge: FakeJudge
) -> None:
    seed(acme)
    assert acme.post("/evaluate", {"seed_data_id": "ds", "pair_query": {"latest_n_pairs": 2}})

    figures = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()

    assert (figures["llm_calls"], figures["cached_calls"]) == (1, 2)


def test_an_estimate_without_questions_is_free(acme: Tenant) -> None:
    seed(acme, metrics=["check:non_empty"])

    figures = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()

    assert figures == {
        "pairs": 3,
        "llm_calls": 0,
        "cached_calls": 0,
        "input_tokens_max": 0,
        "output_tokens_max": 0,
        "cost_usd_expected": 0.0,
        "cost_usd_max": 0.0,
        "model": None,
    }


def test_a_large_dataset_is_bounded_without_reading_its_texts(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme, pairs=5)
    small = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()
    point_service_at({"EVALSVC_INLINE_MAX_BYTES": "10"}, monkeypatch)

    unread = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()

    assert unread["llm_calls"] == small["llm_calls"] == 5
    assert unread["input_tokens_max"] >= small["input_tokens_max"]
    assert unread["output_tokens_max"] == small["output_tokens_max"]


# ---- max_cost_usd ------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [0, -1, "1", True, None, [1], 1e7])
def test_max_cost_usd_must_be_a_positive_number(
    acme: Tenant, priced_judge: FakeJudge, bad: Any
) -> None:
    seed(acme)
    body: dict[str, Any] = {"seed_data_id": "ds", "max_cost_usd": bad}
    if bad is None:
        body["max_cost_usd"] = "NaN"

    response = acme.post("/evaluate", body)

    assert response.status_code == 400, response.text
    assert "max_cost_usd" in response.json()["error"]
    assert priced_judge.requests == []


def test_a_run_that_could_cost_more_than_max_cost_usd_is_refused_before_any_call(
    acme: Tenant, priced_judge: FakeJudge, tables: dict[str, str]
) -> None:
    seed(acme)
    bound = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()["cost_usd_max"]
    before = snapshot(tables)

    response = acme.post("/evaluate", {"seed_data_id": "ds", "max_cost_usd": bound * 0.99})

    assert response.status_code == 400
    error = response.json()["error"]
    assert "max_cost_usd" in error and f"${bound:.2f}"[:-1] in error
    assert priced_judge.requests == []
    assert snapshot(tables) == before

    allowed = acme.post("/evaluate", {"seed_data_id": "ds", "max_cost_usd": bound * 1.01})
    assert allowed.status_code == 200, allowed.text


def test_max_cost_usd_refuses_a_model_without_a_price(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_PRICES": ""}, monkeypatch)
    seed(acme)

    response = acme.post("/evaluate", {"seed_data_id": "ds", "max_cost_usd": 100})

    assert response.status_code == 400
    assert "no price" in response.json()["error"]
    assert priced_judge.requests == []


def test_max_cost_usd_holds_a_queued_evaluation_before_it_is_queued(
    acme: Tenant, priced_judge: FakeJudge, work: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_INLINE_MAX_JUDGE_CALLS": "1"}, monkeypatch)
    seed(acme, pairs=4)

    response = acme.post("/evaluate", {"seed_data_id": "ds", "max_cost_usd": 0.000001})

    assert response.status_code == 400, response.text
    assert work.waiting() == 0
    assert priced_judge.requests == []


def test_max_cost_usd_holds_a_run_handed_to_the_queue_before_its_first_call(
    acme: Tenant, priced_judge: FakeJudge, work: Any
) -> None:
    from evalsvc.scoring.llm import LATENCY

    seed(acme, pairs=2)
    bound = acme.post("/evaluate/estimate", {"seed_data_id": "ds"}).json()["cost_usd_max"]
    # This process has seen the judge take a minute a call: the run cannot fit the request.
    LATENCY.record("openai:fake-judge", 60.0)

    refused = acme.post("/evaluate", {"seed_data_id": "ds", "max_cost_usd": bound / 2})
    allowed = acme.post("/evaluate", {"seed_data_id": "ds", "max_cost_usd": bound})

    assert refused.status_code == 400, refused.text
    assert "max_cost_usd" in refused.json()["error"]
    assert allowed.status_code == 503 and "background" in allowed.json()["error"]
    assert priced_judge.requests == []


# ---- GET /usage --------------------------------------------------------------------------------


def test_the_month_adds_up_every_request(acme: Tenant, priced_judge: FakeJudge) -> None:
    from evalsvc.logic.spending import this_month

    seed(acme)
    first = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]
    questions = acme.post("/questions", {"system_prompt": "Always say please."}).json()["usage"]

    month = acme.get("/usage")

    assert month.status_code == 200
    assert month.json() == {
        "month": this_month(),
        "llm_calls": first["llm_calls"] + questions["llm_calls"],
        "input_tokens": first["input_tokens"] + questions["input_tokens"],
        "output_tokens": first["output_tokens"] + questions["output_tokens"],
        "cost_usd": pytest.approx(first["cost_usd"] + questions["cost_usd"], rel=1e-9),
        "limit_usd": None,
        "limit_is_default": False,
        "reserved_usd": 0.0,
    }
    assert acme.get("/usage", params={"month": "2001-01"}).json()["llm_calls"] == 0


@pytest.mark.parametrize("month", ["1999-01", "0001-01", "2000-12", "2999-12", "9999-12"])
def test_any_month_before_the_first_spending_or_to_come_answers_zeros(
    acme: Tenant, priced_judge: FakeJudge, month: str
) -> None:
    seed(acme)
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200
    assert acme.get("/usage").json()["llm_calls"] > 0

    response = acme.get("/usage", params={"month": month})

    assert response.status_code == 200, response.text
    assert response.json() == {
        "month": month,
        "llm_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost_usd": 0.0,
        "limit_usd": None,
        "limit_is_default": False,
        "reserved_usd": 0.0,
    }


@pytest.mark.parametrize(
    "month",
    [
        "2026-13",
        "2026-1",
        "26-11",
        "2026-11-01",
        "november",
        "",
        "2026-00",
        "\u0662\u0660\u0662\u0666-\u0661\u0661",
        "\u0662\u0660\u0662\u0666-11",
    ],
)
def test_a_month_not_yyyy_mm_is_400(acme: Tenant, month: str) -> None:
    response = acme.get("/usage", params={"month": month})

    assert response.status_code == 400
    assert "YYYY-MM" in response.json()["error"]


def test_another_tenants_usage_is_never_visible(
    acme: Tenant, globex: Tenant, priced_judge: FakeJudge
) -> None:
    from evalsvc.logic import spending

    seed(acme)
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200
    spending.set_limit("acme", Decimal(50))

    theirs = globex.get("/usage").json()

    assert theirs["llm_calls"] == 0 and theirs["cost_usd"] == 0.0
    assert theirs["limit_usd"] is None
    assert acme.get("/usage").json()["limit_usd"] == 50.0


def test_a_month_with_unpriced_calls_has_a_null_cost(
    acme: Tenant, priced_judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at({"EVALSVC_PRICES": ""}, monkeypatch)
    seed(acme)
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200

    month = acme.get("/usage").json()

    assert month["llm_calls"] == 3 and month["cost_usd"] is None


# ---- metrics -----------------------------------------------------------------------------------


def test_llm_tokens_and_cost_are_emitted_by_route(
    acme: Tenant, priced_judge: FakeJudge, capsys: pytest.CaptureFixture[str]
) -> None:
    seed(acme)
    capsys.readouterr()

    usage = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["usage"]
    ok(acme.post("/questions", {"system_prompt": "Always say please."}))

    emitted: dict[tuple[str, str], list[float]] = {}
    for line in capsys.readouterr().out.splitlines():
        if not line.startswith("{"):
            continue
        record = json.loads(line)
        for metric in record.get("_aws", {}).get("CloudWatchMetrics", [{}])[0].get("Metrics", []):
            if metric["Name"].startswith("LLM"):
                assert ["route", "service"] in record["_aws"]["CloudWatchMetrics"][0]["Dimensions"]
                emitted.setdefault((record["route"], metric["Name"]), []).extend(
                    record[metric["Name"]]
                )
    assert emitted[("POST /evaluate", "LLMInputTokens")] == [usage["input_tokens"]]
    assert emitted[("POST /evaluate", "LLMOutputTokens")] == [usage["output_tokens"]]
    assert emitted[("POST /evaluate", "LLMCostUSD")] == [pytest.approx(usage["cost_usd"])]
    assert len(emitted[("POST /questions", "LLMCostUSD")]) == 1
