"""judge_samples on POST /evaluate (E6): every judged (pair, question) is asked k times, each its
own judge cache entry, sampled; the pair's score is the mean of the k answers and each question
reports the judge's own noise. Estimates, max_cost_usd, the monthly limit, the call limits of a
request and of a chunk, and progress count k calls. Against a fake judge that answers the same
prompt differently each time (tests/fake_judge.VaryingJudge) and moto tables."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import boto3
import numpy as np
import pytest
from evalsvc.core.settings import get_settings
from evalsvc.logic import spending
from evalsvc.logic.kinds.evaluation import EVALUATION
from evalsvc.scoring.judges import CachedJudge
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage import results as results_store

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, VaryingJudge
from tests.integration.conftest import Tenant, ok
from tests.work_queue import Work

QUESTIONS = ["Does the output say please?", "Is the output short?"]
METRICS = [QUESTIONS[0], "check:non_empty", QUESTIONS[1]]
PAIRS = [
    {"id": "a", "input": "hi", "output": "please sit"},
    {"id": "b", "input": "hey", "output": "sit"},
    {"id": "c", "input": "yo", "output": "Please, sit down"},
    {"id": "d", "input": "hm", "output": "stand up"},
]


def seed(tenant: Tenant, pairs: list[dict[str, str]] = PAIRS) -> None:
    ok(tenant.post("/data/seed/ds", {"data": pairs, "system_prompt": "Be polite."}))
    ok(tenant.post("/specify_questions", {"metrics": METRICS}))


@pytest.fixture
def varying(fake_judge: FakeJudge) -> VaryingJudge:
    """The fake judge answering each prompt differently each time it is asked."""
    answer = VaryingJudge()
    fake_judge.answer = answer
    return answer


@pytest.fixture
def priced(priced_judge: FakeJudge) -> FakeJudge:
    """The priced fake judge, answering each prompt differently each time it is asked."""
    priced_judge.answer = VaryingJudge()
    return priced_judge


def evaluate(tenant: Tenant, samples: int, **more: Any) -> dict[str, Any]:
    response = tenant.post("/evaluate", {"seed_data_id": "ds", "judge_samples": samples, **more})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def estimate(tenant: Tenant, samples: int) -> dict[str, Any]:
    response = tenant.post("/evaluate/estimate", {"seed_data_id": "ds", "judge_samples": samples})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def cache_entries() -> int:
    table = get_settings().judge_cache_table
    scanned = boto3.client("dynamodb", region_name="us-east-1").scan(
        TableName=table, Select="COUNT"
    )
    return int(scanned["Count"])


def numpy_noise(samples: list[list[int]]) -> float:
    return float(np.sqrt(np.mean(np.var(np.array(samples, dtype=float), ddof=1, axis=1))))


def all_scored(tenant: Tenant, results_id: str) -> list[list[dict[str, Any]]]:
    response = tenant.get(f"/evaluation/{results_id}?includeAllScores=true")
    assert response.status_code == 200, response.text
    scored: list[list[dict[str, Any]]] = response.json()["all_scored_pairs"]
    return scored


# ---- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["/evaluate", "/evaluate/estimate"])
@pytest.mark.parametrize("bad", [0, 6, -1, "2", True, 2.5, 3.0, None, [3]])
def test_a_bad_judge_samples_is_400_naming_it(
    acme: Tenant, fake_judge: FakeJudge, route: str, bad: object
) -> None:
    # Given a dataset and a judged metrics set
    seed(acme)

    # When judge_samples is not an integer 1-5
    response = acme.post(route, {"seed_data_id": "ds", "judge_samples": bad})

    # Then it is refused before any call, saying which field to fix
    assert response.status_code == 400, response.text
    assert "judge_samples" in response.json()["error"]
    assert fake_judge.requests == []


# ---- k calls, k cache entries ---------------------------------------------------------------


def test_three_samples_ask_each_pair_and_question_three_times_sampling(
    acme: Tenant, fake_judge: FakeJudge, varying: VaryingJudge
) -> None:
    seed(acme)

    body = evaluate(acme, 3)

    # Three calls for each (pair, question), none for the check, each its own cache entry
    asked = fake_judge.verdicts_asked()
    assert len(asked) == len(PAIRS) * len(QUESTIONS) * 3
    assert all(asked.count(item) == 3 for item in asked)
    assert {(q, p["input"], p["output"]) for q in QUESTIONS for p in PAIRS} == set(asked)
    assert cache_entries() == len(asked)
    assert body["usage"]["llm_calls"] == len(asked)
    # sampled from the first attempt: a greedy model would answer alike
    assert all(request["temperature"] > 0 for request in fake_judge.requests)


def test_a_repeated_sampled_evaluation_makes_no_call(
    acme: Tenant, fake_judge: FakeJudge, varying: VaryingJudge
) -> None:
    seed(acme)
    first = evaluate(acme, 3)
    calls = len(fake_judge.requests)

    again = evaluate(acme, 3)

    assert len(fake_judge.requests) == calls
    assert again["usage"]["llm_calls"] == 0 and again["usage"]["cache_hits"] == calls
    assert again["scores"] == first["scores"]


def test_more_samples_later_ask_only_for_the_new_ones(
    acme: Tenant, fake_judge: FakeJudge, varying: VaryingJudge
) -> None:
    seed(acme)
    items = len(PAIRS) * len(QUESTIONS)

    # One sample is the greedy verdict, a cache entry of its own
    evaluate(acme, 1)
    assert len(fake_judge.requests) == items
    assert all(request["temperature"] == 0 for request in fake_judge.requests)
    # Two samples: two new entries, neither the greedy one
    evaluate(acme, 2)
    assert len(fake_judge.requests) == items + 2 * items
    # Three after two: one more call per item, the first two reused
    body = evaluate(acme, 3)
    assert len(fake_judge.requests) == items + 3 * items
    assert body["usage"]["llm_calls"] == items and body["usage"]["cache_hits"] == 2 * items
    assert cache_entries() == 4 * items
    # each prompt was answered four times in all (once greedy, three samples)
    assert all(len(scores) == 4 for scores in varying.given.values())


# ---- the score is the mean, the noise the spread --------------------------------------------


def test_the_score_is_the_mean_of_the_samples_and_the_noise_their_spread(
    acme: Tenant, fake_judge: FakeJudge, varying: VaryingJudge
) -> None:
    seed(acme)

    body = evaluate(acme, 3)

    scored = all_scored(acme, body["eval_results_id"])
    got = acme.get(f"/evaluation/{body['eval_results_id']}").json()
    assert got["judge_samples"] == 3
    for m, metric in enumerate(body["scores"]):
        if metric["metric"].startswith("check:"):
            assert metric["judge_noise_sd"] is None
            assert got["score_judge_noise_sds"][m] is None
            continue
        q = QUESTIONS.index(metric["metric"])
        samples = []
        for pair in PAIRS:
            given = [
                scores
                for prompt, scores in varying.given.items()
                if f"<question>\n{QUESTIONS[q]}\n" in prompt
                and f"<output>\n{pair['output']}\n" in prompt
            ]
            assert len(given) == 1 and len(given[0]) == 3
            samples.append(given[0])
            listed = next(s for s in scored[m] if s["pair_id"] == pair["id"])
            assert listed["score"] == pytest.approx(sum(given[0]) / 3, abs=1e-12)
            # the reason is the one given with the median answer
            assert listed["reason"].endswith(f"scored {sorted(given[0])[1]}.")
        expected = numpy_noise(samples)
        assert expected > 0
        assert metric["judge_noise_sd"] == pytest.approx(expected, abs=1e-6)
        assert got["score_judge_noise_sds"][m] == pytest.approx(expected, abs=1e-6)
        assert metric["mean_score"] == pytest.approx(np.mean(samples), abs=1e-9)


def test_one_sample_has_no_judge_noise(
    acme: Tenant, fake_judge: FakeJudge, varying: VaryingJudge
) -> None:
    seed(acme)

    body = evaluate(acme, 1)

    assert [metric["judge_noise_sd"] for metric in body["scores"]] == [None, None, None]
    got = acme.get(f"/evaluation/{body['eval_results_id']}").json()
    assert got["judge_samples"] == 1 and got["score_judge_noise_sds"] == [None, None, None]
    assert got["judge_calls_total"] == got["judge_calls_done"] == len(PAIRS) * len(QUESTIONS)


def test_a_steady_judge_has_zero_noise(acme: Tenant, fake_judge: FakeJudge) -> None:
    seed(acme)  # the default fake judge gives a prompt the same answer every time

    body = evaluate(acme, 4)

    assert [metric["judge_noise_sd"] for metric in body["scores"]] == [0.0, None, 0.0]
    assert len(fake_judge.requests) == len(PAIRS) * len(QUESTIONS) * 4


# ---- estimates, caps, limits -----------------------------------------------------------------


@pytest.mark.parametrize("texts_read", [True, False], ids=["from-texts", "from-sizes"])
def test_the_estimate_of_k_samples_is_k_times_that_of_one(
    acme: Tenant, priced: FakeJudge, monkeypatch: pytest.MonkeyPatch, texts_read: bool
) -> None:
    seed(acme)
    if not texts_read:  # too large to read inside a request: bounded from the pairs' sizes
        point_service_at({"EVALSVC_INLINE_MAX_BYTES": "1"}, monkeypatch)

    one, three = estimate(acme, 1), estimate(acme, 3)

    assert one["llm_calls"] == len(PAIRS) * len(QUESTIONS)
    assert three["llm_calls"] == 3 * one["llm_calls"]
    assert three["pairs"] == one["pairs"] == len(PAIRS)
    for figure in ("input_tokens_max", "output_tokens_max"):
        assert three[figure] == 3 * one[figure]
    for figure in ("cost_usd_max", "cost_usd_expected"):
        assert three[figure] == pytest.approx(3 * one[figure], rel=1e-9)
    assert priced.requests == []


def test_the_estimate_counts_the_cached_samples(
    acme: Tenant, fake_judge: FakeJudge, varying: VaryingJudge
) -> None:
    seed(acme)
    items = len(PAIRS) * len(QUESTIONS)
    evaluate(acme, 2)

    three = estimate(acme, 3)
    one = estimate(acme, 1)

    assert (three["llm_calls"], three["cached_calls"]) == (items, 2 * items)
    assert (one["llm_calls"], one["cached_calls"]) == (items, 0)  # the greedy entry is its own


def test_max_cost_usd_holds_all_k_samples(acme: Tenant, priced: FakeJudge) -> None:
    seed(acme)
    one, three = estimate(acme, 1), estimate(acme, 3)
    cap = 2 * one["cost_usd_max"]  # room for one sample, not for three

    refused = acme.post(
        "/evaluate", {"seed_data_id": "ds", "judge_samples": 3, "max_cost_usd": cap}
    )

    assert refused.status_code == 400, refused.text
    assert "max_cost_usd" in refused.json()["error"]
    assert priced.requests == []
    done = evaluate(acme, 3, max_cost_usd=three["cost_usd_max"])
    assert done["usage"]["llm_calls"] == three["llm_calls"]
    assert done["usage"]["cost_usd"] <= three["cost_usd_max"]


def record_admissions(monkeypatch: pytest.MonkeyPatch) -> list[Decimal]:
    """The bound of every piece of work checked against the monthly limit before its calls
    (what it could cost at most), from now on, in order."""
    admitted: list[Decimal] = []
    admit = spending.Spending._admit

    def recording(self: spending.Spending, cost_max: Decimal, limit: Decimal) -> None:
        admitted.append(cost_max)
        admit(self, cost_max, limit)

    monkeypatch.setattr(spending.Spending, "_admit", recording)
    return admitted


def test_the_monthly_limit_is_held_to_all_k_samples(
    acme: Tenant, priced: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme)
    one, three = estimate(acme, 1), estimate(acme, 3)
    spending.set_limit("acme", Decimal(str(2 * one["cost_usd_max"])))
    admitted = record_admissions(monkeypatch)

    # Three samples cannot fit a limit with room for two: 429 before any call, nothing held
    refused = acme.post("/evaluate", {"seed_data_id": "ds", "judge_samples": 3})
    assert refused.status_code == 429, refused.text
    assert "monthly limit" in refused.json()["error"]
    assert priced.requests == []
    assert [float(usd) for usd in admitted] == [pytest.approx(three["cost_usd_max"])]
    assert acme.get("/usage").json()["reserved_usd"] == 0.0
    # One sample fits, checked at one sample's bound
    admitted.clear()
    evaluate(acme, 1)
    assert [float(usd) for usd in admitted] == [pytest.approx(one["cost_usd_max"])]


# ---- queued ----------------------------------------------------------------------------------


def queue_async(tenant: Tenant, body: dict[str, Any]) -> dict[str, Any]:
    response = tenant.http.post(
        "/v1/evaluate", json=body, headers={**tenant.headers, "Prefer": "respond-async"}
    )
    assert response.status_code == 202, response.text
    queued: dict[str, Any] = response.json()
    return queued


def test_each_chunk_of_a_queued_sampled_run_is_held_to_its_k_calls(
    acme: Tenant, priced: FakeJudge, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a limit with room to spare, and chunks of 6 judge calls: one pair on two questions,
    # three samples each
    seed(acme)
    three = estimate(acme, 3)
    spending.set_limit("acme", Decimal(100))
    point_service_at({"EVALSVC_CHUNK_JUDGE_CALLS": "6"}, monkeypatch)
    admitted = record_admissions(monkeypatch)

    # When the run is queued and its chunks delivered
    results_id = queue_async(acme, {"seed_data_id": "ds", "judge_samples": 3})["eval_results_id"]
    assert admitted == []  # queueing checks the room, it holds nothing
    work.drain()

    # Then each of its four chunks was held to its pair's six calls: the whole run's bound in all
    done = acme.get(f"/evaluation/{results_id}").json()
    assert done["status"] == "complete", done
    assert len(admitted) == len(PAIRS)
    assert float(sum(admitted)) == pytest.approx(three["cost_usd_max"], rel=1e-9)
    assert done["usage"]["llm_calls"] == three["llm_calls"]


def test_a_run_too_slow_for_its_request_expects_and_caps_all_k_samples(
    acme: Tenant, priced: FakeJudge, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a judge this process expects to be far too slow for the request
    seed(acme)
    one = estimate(acme, 1)
    expected: list[int] = []

    def slow(self: CachedJudge, calls: int) -> float:
        expected.append(calls)
        return 10_000.0

    monkeypatch.setattr(CachedJudge, "expected_seconds", slow)

    # When a run of three samples with room in its cap for one would be handed to the queue
    refused = acme.post(
        "/evaluate",
        {"seed_data_id": "ds", "judge_samples": 3, "max_cost_usd": 2 * one["cost_usd_max"]},
    )

    # Then its time was expected for all its calls, and its cap refuses it before any call
    assert expected == [len(PAIRS) * len(QUESTIONS) * 3]
    assert refused.status_code == 400, refused.text
    assert "max_cost_usd" in refused.json()["error"]
    assert priced.requests == [] and work.waiting() == 0


def test_a_queued_evaluation_that_cannot_fit_the_month_with_k_samples_is_429(
    acme: Tenant, priced: FakeJudge, work: Work
) -> None:
    seed(acme)
    one = estimate(acme, 1)
    spending.set_limit("acme", Decimal(str(2 * one["cost_usd_max"])))

    refused = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "ds", "judge_samples": 3},
        headers={**acme.headers, "Prefer": "respond-async"},
    )

    assert refused.status_code == 429, refused.text
    assert "monthly limit" in refused.json()["error"]
    assert work.waiting() == 0
    assert queue_async(acme, {"seed_data_id": "ds", "judge_samples": 1})["status"] == "running"


def test_a_queued_sampled_evaluation_matches_the_inline_one(
    acme: Tenant,
    globex: Tenant,
    fake_judge: FakeJudge,
    work: Work,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given the same data for two tenants (each its own judge cache), five pairs
    pairs = [*PAIRS, {"id": "e", "input": "ok", "output": "please go"}]
    seed(acme, pairs)
    seed(globex, pairs)
    fake_judge.answer = VaryingJudge()
    inline = evaluate(acme, 3)
    assert inline["usage"]["llm_calls"] == 30

    # When the other tenant's run is queued, 12 judge calls a chunk (2 pairs of 6 calls), and
    # the judge, asked afresh, answers as it answered the first run
    point_service_at({"EVALSVC_CHUNK_JUDGE_CALLS": "12"}, monkeypatch)
    fake_judge.answer = VaryingJudge()
    queued = queue_async(globex, {"seed_data_id": "ds", "judge_samples": 3})
    results_id = queued["eval_results_id"]

    # Then its progress counts judge calls, its chunks hold 12 calls each
    assert (queued["judge_calls_done"], queued["judge_calls_total"]) == (0, 30)
    job = jobs_store.get("globex", EVALUATION, results_id)
    assert job is not None and job.chunk_count == 3
    work.deliver(1)
    running = globex.get(f"/evaluation/{results_id}").json()
    assert running["status"] == "running"
    assert (running["pairs_done"], running["pairs_total"]) == (2, 5)
    assert (running["judge_calls_done"], running["judge_calls_total"]) == (12, 30)
    work.drain()
    done = globex.get(f"/evaluation/{results_id}").json()
    assert done["status"] == "complete", done
    assert (done["judge_calls_done"], done["judge_calls_total"]) == (30, 30)
    assert done["usage"]["llm_calls"] == 30
    # and its scores and judge noise are the inline run's
    assert done["judge_samples"] == 3
    assert done["score_means"] == pytest.approx([m["mean_score"] for m in inline["scores"]])
    noise = [m["judge_noise_sd"] for m in inline["scores"]]
    assert noise[1] is None and done["score_judge_noise_sds"][1] is None
    for m in (0, 2):
        assert done["score_judge_noise_sds"][m] == pytest.approx(noise[m], abs=1e-12)
        assert noise[m] is not None and noise[m] > 0
    ids = [p["id"] for p in pairs]
    kept = results_store.get_scored("globex", results_id, ids)
    first = results_store.get_scored("acme", inline["eval_results_id"], ids)
    for pair_id in ids:
        assert kept[pair_id].scores == first[pair_id].scores
        assert [sorted(s) for s in kept[pair_id].samples or []] == [
            sorted(s) for s in first[pair_id].samples or []
        ]
        assert kept[pair_id].samples is not None and kept[pair_id].samples[1] == []
    queued_samples = [kept[pair_id].samples[0] for pair_id in ids]  # type: ignore[index]
    assert done["score_judge_noise_sds"][0] == pytest.approx(numpy_noise(queued_samples), abs=1e-6)
    assert math.isfinite(done["score_judge_noise_sds"][2])
