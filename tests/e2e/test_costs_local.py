"""E3 end to end: the local server (`evalsvc serve`) with the fake OpenAI-compatible judge,
which reports `usage`, and a price for its model; the operator's `evalsvc tenants` commands."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.fake_judge import FakeJudge

PRICES = json.dumps({"openai:fake-judge": {"input": 2.5, "output": 10}})
HEADERS = {"Authorization": DEV_KEY}


@pytest.fixture(scope="module")
def costs_judge() -> Iterator[FakeJudge]:
    fake = FakeJudge()
    with fake.running():
        yield fake


@pytest.fixture(scope="module")
def priced(
    tmp_path_factory: pytest.TempPathFactory, costs_judge: FakeJudge
) -> Iterator[LocalServer]:
    local = LocalServer(
        tmp_path_factory.mktemp("evalsvc-costs"),
        judge_url=costs_judge.base_url,
        extra_env={
            "EVALSVC_PRICES": PRICES,
            "EVALSVC_INLINE_MAX_JUDGE_CALLS": "8",
            "EVALSVC_CHUNK_JUDGE_CALLS": "5",
        },
    )
    local.start()
    yield local
    local.stop()


def call(server: LocalServer, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
    headers = {**HEADERS, **kwargs.pop("headers", {})}
    return requests.request(
        method, server.base_url + path, json=body, headers=headers, timeout=60, **kwargs
    )


def seed(server: LocalServer, dataset: str, pairs: int) -> None:
    data = [
        {"id": f"p{k}", "input": f"{dataset} question {k} ✓", "output": f"please, answer {k} 🎉"}
        for k in range(pairs)
    ]
    assert call(
        server, "POST", f"/data/seed/{dataset}", {"data": data, "system_prompt": "Be kind."}
    ).ok
    assert call(
        server, "POST", "/specify_questions", {"metrics": ["Is it polite?", "check:non_empty"]}
    ).ok


def test_a_run_reports_what_the_provider_counted_and_stays_within_its_estimate(
    priced: LocalServer, costs_judge: FakeJudge
) -> None:
    seed(priced, "costs-inline", 6)
    estimate = call(priced, "POST", "/evaluate/estimate", {"seed_data_id": "costs-inline"}).json()
    before = len(costs_judge.reported)

    response = call(priced, "POST", "/evaluate", {"seed_data_id": "costs-inline"})

    assert response.status_code == 200, response.text
    usage = response.json()["usage"]
    spent = costs_judge.reported[before:]
    assert usage["llm_calls"] == len(spent) == estimate["llm_calls"] == 6
    assert usage["input_tokens"] == sum(u["prompt_tokens"] for u in spent)
    assert usage["output_tokens"] == sum(u["completion_tokens"] for u in spent)
    expected = (2.5 * usage["input_tokens"] + 10 * usage["output_tokens"]) / 1e6
    assert usage["cost_usd"] == pytest.approx(expected, rel=1e-9)
    assert usage["input_tokens"] <= estimate["input_tokens_max"]
    assert usage["output_tokens"] <= estimate["output_tokens_max"]
    assert usage["cost_usd"] <= estimate["cost_usd_max"]
    result_id = response.json()["eval_results_id"]
    assert call(priced, "GET", f"/evaluation/{result_id}").json()["usage"] == usage
    cached = call(priced, "POST", "/evaluate/estimate", {"seed_data_id": "costs-inline"}).json()
    assert (cached["llm_calls"], cached["cached_calls"], cached["cost_usd_max"]) == (0, 6, 0.0)


def test_a_queued_run_sums_its_chunks(priced: LocalServer, costs_judge: FakeJudge) -> None:
    seed(priced, "costs-queued", 12)
    before = len(costs_judge.reported)
    queued = call(
        priced,
        "POST",
        "/evaluate",
        {"seed_data_id": "costs-queued"},
        headers={"Prefer": "respond-async"},
    )
    assert queued.status_code == 202, queued.text
    result_id = queued.json()["eval_results_id"]

    deadline = time.monotonic() + 60
    result = call(priced, "GET", f"/evaluation/{result_id}").json()
    while result["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.2)
        result = call(priced, "GET", f"/evaluation/{result_id}").json()

    assert result["status"] == "complete", result
    spent = costs_judge.reported[before:]
    assert result["usage"]["llm_calls"] == 12 == len(spent)
    assert result["usage"]["input_tokens"] == sum(u["prompt_tokens"] for u in spent)


def test_max_cost_usd_refuses_before_any_call(priced: LocalServer, costs_judge: FakeJudge) -> None:
    seed(priced, "costs-capped", 3)
    bound = call(priced, "POST", "/evaluate/estimate", {"seed_data_id": "costs-capped"}).json()
    asked = len(costs_judge.requests)

    response = call(
        priced,
        "POST",
        "/evaluate",
        {"seed_data_id": "costs-capped", "max_cost_usd": bound["cost_usd_max"] / 2},
    )

    assert response.status_code == 400
    assert "max_cost_usd" in response.json()["error"]
    assert len(costs_judge.requests) == asked
    for bad in (0, -5, "ten", False):
        body = {"seed_data_id": "costs-capped", "max_cost_usd": bad}
        assert call(priced, "POST", "/evaluate", body).status_code == 400


def test_the_operators_monthly_limit_is_a_429_and_usage_shows_it(
    priced: LocalServer, costs_judge: FakeJudge
) -> None:
    seed(priced, "costs-limited", 2)
    limited = priced.cli("tenants", "set-limit", "--tenant", "local", "--monthly-usd", "0.000001")
    assert limited.returncode == 0, limited.stderr
    asked = len(costs_judge.requests)

    refused = call(priced, "POST", "/evaluate", {"seed_data_id": "costs-limited"})

    assert refused.status_code == 429
    assert "monthly limit of $0.000001" in refused.json()["error"]
    assert len(costs_judge.requests) == asked
    month = call(priced, "GET", "/usage").json()
    assert month["limit_usd"] == 0.000001 and month["reserved_usd"] == 0.0
    assert month["llm_calls"] >= 6 and month["cost_usd"] > 0

    cleared = priced.cli("tenants", "set-limit", "--tenant", "local", "--clear")
    assert cleared.returncode == 0, cleared.stderr
    assert call(priced, "POST", "/evaluate", {"seed_data_id": "costs-limited"}).status_code == 200
    shown = priced.cli("tenants", "usage", "--tenant", "local")
    assert (
        json.loads(shown.stdout)["llm_calls"] == call(priced, "GET", "/usage").json()["llm_calls"]
    )
    assert call(priced, "GET", "/usage", params={"month": "2026-1"}).status_code == 400


def test_another_tenant_sees_only_its_own_month(priced: LocalServer) -> None:
    created = priced.cli(
        "keys", "create", "--tenant", "costs-other", "--user", "o", "--email", "o@example.test"
    )
    key = created.stdout.splitlines()[-1]

    month = requests.get(
        f"{priced.base_url}/usage", headers={"Authorization": key}, timeout=10
    ).json()

    assert (month["llm_calls"], month["cost_usd"], month["limit_usd"]) == (0, 0.0, None)


@pytest.mark.parametrize("bad", ["0", "-1", "ten", "nan", "1e99"])
def test_set_limit_refuses_an_amount_that_is_not_one(priced: LocalServer, bad: str) -> None:
    refused = priced.cli("tenants", "set-limit", "--tenant", "local", "--monthly-usd", bad)

    if bad == "0":  # nothing may be spent: a limit all the same
        assert refused.returncode == 0, refused.stderr
        priced.cli("tenants", "set-limit", "--tenant", "local", "--clear")
        return
    assert refused.returncode == 2
    assert "dollars" in refused.stderr and "Traceback" not in refused.stderr


def test_a_malformed_price_table_stops_the_server_at_start(fresh_server: LocalServer) -> None:
    fresh_server.extra_env = {"EVALSVC_PRICES": '{"openai:x": {"input": 1}}'}

    with pytest.raises(RuntimeError) as failed:
        fresh_server.start()

    assert "EVALSVC_PRICES['openai:x'] must be an object with exactly input and output" in str(
        failed.value
    )
