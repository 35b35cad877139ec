"""Every request path plans against its deadline: LLM work that will not fit goes to the work
queue (or answers 503 with Retry-After), verdicts obtained before the cut are kept, per-call
timeouts come from the time left, Retry-After is honoured, and the judge's calls share one
pool across questions and pairs.

The gateway's limit is lowered here (EVALSVC_REQUEST_SECONDS) so that the slow judges these
tests need stay fast; tests/e2e/test_deadlines_local.py runs the real 29 s against the local
server."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, fake_llm, sequence, service_env
from tests.integration.conftest import Tenant
from tests.work_queue import Work

QUESTIONS = ["Does the output say please?", "Is the output short?"]


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    fake = FakeJudge()
    with fake.running():
        point_service_at(
            {
                **service_env(fake),
                "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
                "EVALSVC_JUDGE_CONCURRENCY": "4",
                "EVALSVC_REQUEST_SECONDS": "6",
            },
            monkeypatch,
        )
        yield fake


def seed(tenant: Tenant, pairs: int, metrics: list[str] = QUESTIONS) -> None:
    data = [{"id": f"p{i:02d}", "input": f"q{i}", "output": f"please {i}"} for i in range(pairs)]
    assert tenant.post("/data/seed/ds", {"data": data}).status_code == 200
    assert tenant.post("/specify_questions", {"metrics": metrics}).status_code == 200


def assert_each_verdict_asked_once(judge: FakeJudge, expected: int) -> None:
    asked = Counter(judge.verdicts_asked())
    assert len(asked) == expected
    assert set(asked.values()) == {1}, [k for k, n in asked.items() if n > 1]


def test_an_evaluation_that_outgrows_its_request_goes_on_in_the_queue(
    acme: Tenant, judge: FakeJudge, work: Work
) -> None:
    # Given 10 pairs x 2 questions = 20 calls of 1 s, 4 at a time (5 s of judging), and a
    # request that has 6 s, 3 of them kept back to store the result
    judge.latency = 1.0
    seed(acme, 10)

    # When it is evaluated with a plain POST
    started = time.monotonic()
    response = acme.post("/evaluate", {"seed_data_id": "ds"})
    took = time.monotonic() - started

    # Then it answered before the deadline, naming the result that goes on in the background
    assert response.status_code == 503, response.text
    assert took < 6
    results_id = response.headers["Location"].removeprefix("evaluation/")
    assert response.headers["Retry-After"] == "10"
    assert response.json()["error"].startswith(f"evaluation {results_id!r} goes on in the")
    asked_inline = len(judge.requests)
    assert 0 < asked_inline < 20
    # And the queue completes it, asking only for the verdicts the request did not get
    work.drain()
    done = acme.get(f"/evaluation/{results_id}").json()
    assert (done["status"], done["pair_count"]) == ("complete", 10)
    assert done["score_means"][0] == 5.0
    assert_each_verdict_asked_once(judge, 20)


def test_without_a_queue_the_request_answers_503_and_a_retry_goes_on_from_the_verdicts(
    acme: Tenant, judge: FakeJudge
) -> None:
    judge.latency = 1.0
    seed(acme, 10)

    first = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert first.status_code == 503, first.text
    assert first.headers["Retry-After"] == "1"
    assert "send the same request again to go on from them" in first.json()["error"]
    asked_first = len(judge.requests)
    assert 0 < asked_first < 20
    # Each retry asks only for what is missing, until one completes
    for _ in range(4):
        again = acme.post("/evaluate", {"seed_data_id": "ds"})
        if again.status_code == 200:
            break
        assert again.status_code == 503
    assert again.status_code == 200, again.text
    assert again.json()["pair_count"] == 10
    assert_each_verdict_asked_once(judge, 20)


def test_a_judge_known_to_be_slow_is_queued_without_starting(
    acme: Tenant, judge: FakeJudge, work: Work
) -> None:
    # Given a process that has seen this judge take 1 s a call
    judge.latency = 1.0
    seed(acme, 2, QUESTIONS[:1])
    assert acme.post("/evaluate", {"seed_data_id": "ds"}).status_code == 200
    assert len(judge.requests) == 2
    # When 12 more pairs are evaluated: 3 rounds of 4 calls, 3 s, more than the 3 s it has
    data = [{"id": f"n{i}", "input": f"n{i}", "output": f"please {i}"} for i in range(12)]
    assert acme.post("/data/seed/ds", {"data": data}).status_code == 200

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    # Then it was queued at once: no call was made inside the request
    assert response.status_code == 503, response.text
    assert "it would not fit in this request" in response.json()["error"]
    assert len(judge.requests) == 2
    work.drain()
    assert len(judge.requests) == 14


def test_one_pool_of_calls_serves_every_question_and_pair(acme: Tenant, judge: FakeJudge) -> None:
    # Given 2 pairs x 2 questions and 4 calls allowed at a time
    judge.latency = 0.5
    seed(acme, 2)

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    # Then all four were in flight together (a pool per question would allow two)
    assert response.status_code == 200, response.text
    assert judge.max_in_flight == 4


def test_a_call_times_out_when_the_request_does(acme: Tenant, judge: FakeJudge) -> None:
    # Given a judge that takes 20 s, and a request with 6 s (3 to work, JUDGE_TIMEOUT 30 s)
    judge.latency = 20.0
    seed(acme, 1, QUESTIONS[:1])

    started = time.monotonic()
    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    # Then the call was given the time left, not its 30 s
    assert response.status_code == 503, response.text
    assert time.monotonic() - started < 6


def _throttled(seconds: str) -> Any:
    return (429, json.dumps({"error": "slow down"}), {"Retry-After": seconds})


def test_retry_after_is_honoured(
    acme: Tenant, judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a throttled judge that asks for 1.5 s (its own backoff would be 10 ms), and a
    # request with room for that pause and a call after it (5 s of work: on a loaded machine
    # the reads before the first call take a good part of a second)
    point_service_at({"EVALSVC_REQUEST_SECONDS": "8"}, monkeypatch)
    judge.answer = sequence(_throttled("1.5"), (200, json.dumps({"reason": "ok", "score": 5})))
    seed(acme, 1, QUESTIONS[:1])

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    first, second = judge.request_times
    assert second - first >= 1.5


def test_a_retry_after_past_the_deadline_hands_the_work_to_the_queue(
    acme: Tenant, judge: FakeJudge, work: Work
) -> None:
    judge.answer = sequence(_throttled("60"), (200, json.dumps({"reason": "ok", "score": 5})))
    seed(acme, 1, QUESTIONS[:1])

    started = time.monotonic()
    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    # Then it did not wait a minute inside the request
    assert response.status_code == 503, response.text
    assert time.monotonic() - started < 6
    assert len(judge.requests) == 1
    # And the queue asks again
    results_id = response.headers["Location"].removeprefix("evaluation/")
    work.drain()
    assert acme.get(f"/evaluation/{results_id}").json()["status"] == "complete"
    assert len(judge.requests) == 2


def test_questions_that_do_not_come_in_time_are_503_and_store_nothing(
    acme: Tenant, judge: FakeJudge
) -> None:
    judge.latency = 20.0
    judge.answer = fake_llm

    response = acme.post("/questions", {"system_prompt": "You must always answer in English."})

    assert response.status_code == 503, response.text
    assert response.headers["Retry-After"] == "1"
    assert "within the request's time limit" in response.json()["error"]
    assert acme.get("/list_questions").json()["total_count"] == 0


def test_an_llm_improvement_that_does_not_come_in_time_falls_back_to_the_rules(
    acme: Tenant, judge: FakeJudge
) -> None:
    seed(acme, 1, ["check:non_empty"])
    judge.latency = 20.0
    judge.answer = fake_llm
    comparison = {"candidates": [{"prompt": "Be kind.", "score_means": [3.0]}]}

    started = time.monotonic()
    response = acme.post(
        "/improve_prompt", {"seed_data_id": "ds", "prompt_comparison_results": comparison}
    )

    assert response.status_code == 200, response.text
    assert time.monotonic() - started < 6
    assert response.json()["improved_prompt"].startswith("Be kind.")


def test_an_augmentation_that_outgrows_its_request_goes_on_in_the_queue(
    acme: Tenant, judge: FakeJudge, work: Work
) -> None:
    # Given 8 seeds, 4 LLM calls at a time of 2 s each, and 3 s to work in
    seed(acme, 8, ["check:non_empty"])
    judge.answer = fake_llm
    judge.latency = 2.0

    response = acme.post("/augment", {"seed_data_id": "ds", "multiple": 2})

    assert response.status_code == 503, response.text
    dataset_id = response.headers["Location"].removeprefix("data/synthetic/")
    assert acme.get(f"/data/synthetic/{dataset_id}").status_code == 503
    judge.latency = 0.0
    work.drain()
    made = acme.get(f"/data/synthetic/{dataset_id}").json()
    assert len(made["data"]) == 16


def test_model_text_with_lone_surrogates_is_stored_readably(acme: Tenant, judge: FakeJudge) -> None:
    # A JSON escape of a lone surrogate is valid JSON; it cannot be stored as UTF-8
    judge.answer = sequence((200, '{"reason": "odd \\ud800 text", "score": 4}'))
    seed(acme, 1, QUESTIONS[:1])

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    reason = response.json()["scores"][0]["lowest_scoring_pairs"][0]["score_reason"]
    assert reason == "odd \ufffd text"
