"""Evaluations too large for one request: queued in chunks on SQS (moto), delivered to the worker
functions' handlers the way Lambda delivers them (tests/… `drain`), completed by the last chunk.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from evalsvc.logic import jobs
from evalsvc.logic.kinds import evaluation as evaluation_kind
from evalsvc.logic.pairs_digest import pair_digest, pairs_digest
from evalsvc.models.datasets import Pair
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage import results as results_store
from evalsvc_tools.local.workers import QueueConsumer, drain

from tests import dataset_stream, pathological
from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, service_env
from tests.integration.conftest import Tenant, ok
from tests.lambda_support import handler_of
from tests.work_queue import MAX_RECEIVES, FailsFirst, Work

METRICS = ["check:readability", "check:max_words:6", "check:contains:please"]


@pytest.fixture(autouse=True)
def _small_limits(work: Work, monkeypatch: pytest.MonkeyPatch) -> None:
    point_service_at(
        {
            "EVALSVC_CHUNK_CHECKS": "1500",  # 3 check metrics: 500 pairs a chunk
            "EVALSVC_INLINE_MAX_CHECKS": "300",
        },
        monkeypatch,
    )


def seeded_pairs(count: int, words_from: int = 0) -> list[dict[str, Any]]:
    words = ["please", "thanks", "the", "answer", "is", "a", "long", "reply", "here", "now"]
    return [
        {
            "id": f"p{i:05d}",
            "input": f"question {i}",
            "output": " ".join(words[(i + k + words_from) % len(words)] for k in range(2 + i % 7)),
        }
        for i in range(count)
    ]


def seed(tenant: Tenant, count: int, dataset_id: str = "big", words_from: int = 0) -> None:
    data = seeded_pairs(count, words_from)
    response = tenant.post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": "Be kind."})
    assert response.status_code == 200, response.text
    assert tenant.post("/specify_questions", {"metrics": METRICS}).status_code == 200


def queue_async(tenant: Tenant, body: dict[str, Any] | None = None) -> str:
    response = tenant.http.post(
        "/v1/evaluate",
        json=body or {"seed_data_id": "big"},
        headers={**tenant.headers, "Prefer": "respond-async"},
    )
    assert response.status_code == 202, response.text
    assert response.headers["Preference-Applied"] == "respond-async"
    results_id: str = response.json()["eval_results_id"]
    assert response.headers["Location"] == f"evaluation/{results_id}"
    return results_id


def read(tenant: Tenant, results_id: str, all_scores: bool = False) -> dict[str, Any]:
    query = "?includeAllScores=true" if all_scores else ""
    response = tenant.get(f"/evaluation/{results_id}{query}")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def inline_twin(tenant: Tenant, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The same evaluation scored inside the request (no queue configured)."""
    monkeypatch.delenv("EVALSVC_WORK_QUEUE_URL")
    point_service_at({}, monkeypatch)
    response = tenant.post("/evaluate", {"seed_data_id": "big"})
    assert response.status_code == 200, response.text
    return read(tenant, response.json()["eval_results_id"], all_scores=True)


STATISTICS = [
    "pair_count",
    "score_means",
    "score_medians",
    "score_mins",
    "score_maxes",
    "score_std_devs",
    "score_confidence_intervals",
    "min_scoring_pairs",
    "score_histograms",
    "all_scored_pairs",
]


def assert_same_statistics(queued: dict[str, Any], inline: dict[str, Any]) -> None:
    for name in STATISTICS:
        assert queued[name] == inline[name], name


def test_a_2000_pair_evaluation_through_the_queue_matches_the_inline_path(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 2,000 pairs (over several shards) and three graded checks, 200 pairs a chunk
    point_service_at({"EVALSVC_CHUNK_CHECKS": "600"}, monkeypatch)
    seed(acme, 2000)
    header = datasets_store.get_header("acme", *_seed("big"))
    assert header is not None and header.shards > 1

    # When the evaluation is queued (10 chunks of 200 pairs)
    results_id = queue_async(acme)

    # Then it is running, with its progress, until the workers are done
    running = read(acme, results_id)
    assert (running["status"], running["pairs_done"], running["pairs_total"]) == (
        "running",
        0,
        2000,
    )
    assert running["score_means"] == [] and running["min_scoring_pairs"] == []
    work.deliver(3)
    assert (read(acme, results_id)["status"], read(acme, results_id)["pairs_done"]) == (
        "running",
        600,
    )
    work.drain()
    done = read(acme, results_id, all_scores=True)
    assert (done["status"], done["pairs_done"], done["pairs_total"]) == ("complete", 2000, 2000)
    assert "failure" not in done
    # …with exactly the statistics, lowest pairs and scores of the same evaluation inline
    assert_same_statistics(done, inline_twin(acme, monkeypatch))
    assert len(done["all_scored_pairs"][0]) == 2000
    assert work.waiting() == 0 and work.waiting(work.dead_letter_url) == 0


def test_a_queued_result_becomes_the_datasets_newest_only_once_complete(
    acme: Tenant, work: Work
) -> None:
    seed(acme, 600)
    results_id = queue_async(acme)
    assert results_store.latest_for_dataset("acme", *_seed("big")) is None

    work.drain()

    assert results_store.latest_for_dataset("acme", *_seed("big")) == results_id


def _seed(dataset_id: str) -> tuple[Any, str]:
    from evalsvc.models.datasets import DatasetKind

    return DatasetKind.SEED, dataset_id


def test_a_plain_post_that_cannot_wait_names_the_result_to_poll(acme: Tenant, work: Work) -> None:
    seed(acme, 600)

    response = acme.post("/evaluate", {"seed_data_id": "big"})

    assert response.status_code == 503
    assert response.headers["Retry-After"].isdigit()
    message = response.json()["error"]
    results_id = message.split("'")[1]
    assert results_id.startswith("ev_") and f"GET /evaluation/{results_id}" in message
    assert "0 of 600 pairs scored" in message
    work.drain()
    assert read(acme, results_id)["status"] == "complete"


def test_small_evaluations_still_run_inside_the_request(acme: Tenant, work: Work) -> None:
    seed(acme, 100)  # 300 check scorings: the inline limit

    response = acme.post("/evaluate", {"seed_data_id": "big"})

    assert response.status_code == 200, response.text
    assert response.json()["pair_count"] == 100
    assert work.waiting() == 0


def test_pair_query_selects_the_same_pairs_when_queued(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme, 1200)
    query = {"seed_data_id": "big", "pair_query": {"latest_n_pairs": 1100}}

    results_id = queue_async(acme, query)
    work.drain()

    done = read(acme, results_id, all_scores=True)
    assert done["pairs_total"] == 1100
    pair_ids = [p["pair_id"] for p in done["all_scored_pairs"][0]]
    assert pair_ids == [f"p{i:05d}" for i in range(100, 1200)]


# ---- faults ------------------------------------------------------------------------------------


def test_a_worker_that_dies_after_counting_its_chunk_is_not_counted_twice(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a worker that dies after its work is stored and counted, before the message is
    # deleted (its visibility timeout then ends and the chunk is delivered again)
    seed(acme, 1500)
    real = work.chunk_handler
    deaths = []

    def dies_once(event: dict[str, Any], context: Any) -> Any:
        real(event, context)
        if not deaths:
            deaths.append(event)
            record = event["Records"][0]
            work.client.change_message_visibility(
                QueueUrl=work.queue_url, ReceiptHandle=record["receiptHandle"], VisibilityTimeout=0
            )
            raise RuntimeError("worker killed")
        return {"batchItemFailures": []}

    work.chunk_handler = dies_once
    results_id = queue_async(acme)

    # When every message is delivered (the first chunk twice)
    deliveries = work.drain()

    # Then the chunk counted once: 1500 pairs done, and the inline statistics
    assert deliveries == 4 and deaths
    done = read(acme, results_id, all_scores=True)
    assert (done["status"], done["pairs_done"]) == ("complete", 1500)
    twin = inline_twin(acme, monkeypatch)
    assert_same_statistics(done, twin)


def test_a_worker_that_dies_before_finishing_the_last_chunk_is_finished_by_the_retry(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme, 1000)
    finish = FailsFirst(jobs.finish, "worker killed while finishing")
    monkeypatch.setattr(jobs, "finish", finish)
    results_id = queue_async(acme)

    work.drain()

    assert finish.calls == 2
    done = read(acme, results_id)
    assert (done["status"], done["pairs_done"]) == ("complete", 1000)


def test_a_chunk_failing_once_is_retried_and_the_job_completes(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme, 1000)
    monkeypatch.setattr(jobs_store, "count", FailsFirst(jobs_store.count, "connection reset"))
    results_id = queue_async(acme)

    work.drain()

    done = read(acme, results_id)
    assert (done["status"], done["pairs_done"]) == ("complete", 1000)


def test_a_poison_chunk_goes_to_the_dead_letter_queue_and_fails_the_result(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a chunk whose pairs can never be scored
    seed(acme, 1500)
    real = evaluation_kind.score_pairs
    attempts = []

    def poisoned(metrics: Any, pairs: Any, system_prompt: str, *args: Any) -> Any:
        positions = args[0] if args else [0]
        if positions[0] == 500:
            attempts.append(positions[0])
            raise ValueError("cannot score this chunk")
        return real(metrics, pairs, system_prompt, *args)

    monkeypatch.setattr(evaluation_kind, "score_pairs", poisoned)
    results_id = queue_async(acme)

    # When the queues are worked until empty
    work.drain()

    # Then the chunk was tried maxReceiveCount times, then dead-lettered, and the result failed
    # saying which chunk and why; nothing is left on either queue
    assert len(attempts) == MAX_RECEIVES
    failed = read(acme, results_id)
    assert failed["status"] == "failed"
    assert "a chunk kept failing and was set aside" in failed["failure"]
    assert f"chunk 1 (pairs 501-1000), attempt {MAX_RECEIVES}" in failed["failure"]
    assert "internal error (ValueError)" in failed["failure"]
    assert failed["pairs_done"] == 1000
    assert work.waiting() == 0 and work.waiting(work.dead_letter_url) == 0
    # A caller still waiting on it would be told the same
    stored = results_store.get("acme", results_id)
    assert stored is not None and stored.failure_error == "InternalError"
    # And a failed result cannot be voted on
    vote = acme.put(
        f"/vote_eval_pair/{results_id}", {"pair_id": "p00000", "metric_idx": 0, "vote": 1}
    )
    assert vote.status_code == 409 and "failed" in vote.json()["error"]


def test_an_unreadable_message_is_dead_lettered_and_dropped(work: Work) -> None:
    work.client.send_message(QueueUrl=work.queue_url, MessageBody="not a chunk")

    deliveries = work.drain()

    assert deliveries == MAX_RECEIVES + 1  # five tries, then the dead-letter worker
    assert work.waiting() == 0 and work.waiting(work.dead_letter_url) == 0


def test_overwriting_the_dataset_mid_evaluation_scores_the_version_it_began_with(
    acme: Tenant, work: Work
) -> None:
    seed(acme, 1000)
    results_id = queue_async(acme)
    work.deliver(1)
    seed(acme, 1000, words_from=3)  # a new version; the one being evaluated is kept

    work.drain()

    done = read(acme, results_id)
    assert (done["status"], done["pairs_done"], done["pair_count"]) == ("complete", 1000, 1000)
    # Every pair was read from the version the evaluation pinned, none from the new one
    pairs = [Pair(p["id"], p["input"], p["output"]) for p in seeded_pairs(1000)]
    assert done["inputs"]["pairs_digest"] == pairs_digest(pair_digest(p) for p in pairs)
    replaced = [Pair(p["id"], p["input"], p["output"]) for p in seeded_pairs(1000, 3)]
    assert done["inputs"]["pairs_digest"] != pairs_digest(pair_digest(p) for p in replaced)


def test_an_evaluation_whose_version_was_purged_meanwhile_fails_with_the_reason(
    acme: Tenant, work: Work
) -> None:
    seed(acme, 1000)
    results_id = queue_async(acme)
    work.deliver(1)
    seed(acme, 1000)  # a new version; the one being evaluated is kept...
    dataset_stream.expire_all("acme", "big")  # ...until its retention ends

    work.drain()

    failed = read(acme, results_id)
    assert failed["status"] == "failed"
    assert "is no longer kept: its retention ended" in failed["failure"]


def test_votes_wait_for_a_running_result(acme: Tenant, work: Work) -> None:
    seed(acme, 1000)
    results_id = queue_async(acme)
    work.deliver(1)

    vote = acme.put(
        f"/vote_eval_pair/{results_id}", {"pair_id": "p00000", "metric_idx": 0, "vote": 1}
    )

    assert vote.status_code == 409
    assert "still running (500 of 1000 pairs scored)" in vote.json()["error"]


# ---- the judge ---------------------------------------------------------------------------------


@pytest.fixture
def judge(work: Work, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    fake = FakeJudge()
    with fake.running():
        point_service_at(
            {
                **service_env(fake),
                "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.001",
                "EVALSVC_JUDGE_MAX_ATTEMPTS": "2",
                "EVALSVC_INLINE_MAX_JUDGE_CALLS": "10",
                "EVALSVC_CHUNK_JUDGE_CALLS": "40",
            },
            monkeypatch,
        )
        yield fake


def test_judge_throttling_slows_a_queued_job_but_does_not_fail_it(
    acme: Tenant, work: Work, judge: FakeJudge
) -> None:
    # Given a judge that throttles the first 30 calls (each pair's 2 attempts used up)
    served = []
    base = judge.answer

    def throttles_first(request: dict[str, Any]) -> tuple[int, str]:
        served.append(1)
        if len(served) <= 30:
            return 429, json.dumps({"error": "slow down"})
        return base(request)

    judge.answer = throttles_first
    data = [
        {"id": f"q{i}", "input": "hi", "output": "please" if i % 2 else "no"} for i in range(40)
    ]
    assert acme.post("/data/seed/judged", {"data": data}).status_code == 200
    assert acme.post("/specify_questions", {"metrics": ["Is it polite?"]}).status_code == 200

    # When the 40-pair evaluation (one chunk) is queued and worked
    results_id = queue_async(acme, {"seed_data_id": "judged"})
    deliveries = work.drain()

    # Then the throttled chunk went back on the queue (not towards the dead-letter queue) and
    # the job completed with every verdict
    assert deliveries >= 2
    done = read(acme, results_id)
    assert (done["status"], done["pairs_done"]) == ("complete", 40)
    assert done["score_means"] == [3.5]
    assert work.waiting(work.dead_letter_url) == 0


# ---- the worker functions with their events/ files ---------------------------------------------


def test_the_workers_take_their_event_files(work: Work) -> None:
    from tests.lambda_support import LambdaContext, load_event

    for function in ("score_chunks", "fail_chunks"):
        event = load_event(function)  # a chunk of a result that does not exist: dropped

        response = handler_of(function)(event, LambdaContext())

        assert response == {"batchItemFailures": []}, function


def test_an_unreadable_record_is_reported_as_failed_alone(work: Work) -> None:
    import copy

    from tests.lambda_support import LambdaContext, load_event

    event = load_event("score_chunks")
    bad = copy.deepcopy(event["Records"][0])
    bad["messageId"], bad["body"] = "bad-one", "{not json"
    event["Records"].append(bad)

    response = handler_of("score_chunks")(event, LambdaContext())

    assert response == {"batchItemFailures": [{"itemIdentifier": "bad-one"}]}


def test_an_idempotent_async_request_queues_one_job_and_replays_its_answer(
    acme: Tenant, work: Work
) -> None:
    seed(acme, 600)
    headers = {**acme.headers, "Prefer": "respond-async", "Idempotency-Key": "eval-600"}

    first, again = (
        acme.http.post("/v1/evaluate", json={"seed_data_id": "big"}, headers=headers)
        for _ in range(2)
    )

    assert first.status_code == again.status_code == 202
    assert first.json() == again.json()
    assert again.headers["Idempotent-Replay"] == "true"
    results_id = first.json()["eval_results_id"]
    assert again.headers["Location"] == first.headers["Location"] == f"evaluation/{results_id}"
    assert work.waiting() == 2  # the chunks of one job: 600 pairs, 500 a chunk


def test_a_worker_short_of_time_keeps_its_verdicts_and_the_chunk_goes_on(
    acme: Tenant, work: Work, judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a slow judge, two calls at a time, and a worker with 13 s left (10 s of margin)
    judge.latency = 0.5
    point_service_at({"EVALSVC_JUDGE_CONCURRENCY": "2"}, monkeypatch)
    data = [{"id": f"q{i}", "input": "hi", "output": f"please {i}"} for i in range(12)]
    assert acme.post("/data/seed/judged", {"data": data}).status_code == 200
    assert acme.post("/specify_questions", {"metrics": ["Is it polite?"]}).status_code == 200
    results_id = queue_async(acme, {"seed_data_id": "judged"})
    hurried = QueueConsumer(
        work.client, work.queue_url, handler_of("score_chunks"), batch_size=1, timeout_seconds=13
    )

    # When it works the one chunk (12 calls, about 3 s of judging)
    deliveries = drain([hurried])

    # Then it stopped at its deadline, requeued the chunk, and the next delivery asked only
    # for the verdicts still missing: every pair judged once
    assert deliveries >= 2
    assert len(judge.requests) == 12
    done = read(acme, results_id)
    assert (done["status"], done["pairs_done"], done["score_means"]) == ("complete", 12, [5.0])


def test_a_worker_short_of_time_keeps_the_pairs_it_checked_and_the_chunk_goes_on(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a check that takes about half a second on each of these 100,000-character outputs,
    # 10 pairs in one chunk, and a worker with 12 s left (2 s to work after its margin)
    text = pathological.outputs()["random a and b"]
    data = [{"id": f"s{i}", "input": "x", "output": text[i : i + 99_990]} for i in range(10)]
    written = acme.post("/data/seed/slow", {"data": data})
    assert written.status_code == 200, written.text
    slow_check = {"metrics": ["check:regex:a[ab]{990}x"]}
    assert acme.post("/specify_questions", slow_check).status_code == 200
    results_id = queue_async(acme, {"seed_data_id": "slow"})
    hurried = QueueConsumer(
        work.client, work.queue_url, handler_of("score_chunks"), batch_size=1, timeout_seconds=12
    )
    writes: list[int] = []
    real_put = results_store.put_scored

    def put_scored(tenant: str, results_id: str, scored: list[Any]) -> None:
        writes.append(len(scored))
        real_put(tenant, results_id, scored)

    monkeypatch.setattr(results_store, "put_scored", put_scored)

    # When it works the chunk
    deliveries = drain([hurried])

    # Then each delivery stored what it scored before its deadline and the next went on from
    # there: the result is complete, every pair scored once, as inline
    assert deliveries >= 2
    assert len(writes) == deliveries and sum(writes) == 10
    done = read(acme, results_id, all_scores=True)
    assert (done["status"], done["pairs_done"]) == ("complete", 10)
    assert [p["pair_id"] for p in done["all_scored_pairs"][0]] == [f"s{i}" for i in range(10)]
    monkeypatch.delenv("EVALSVC_WORK_QUEUE_URL")
    point_service_at({}, monkeypatch)
    inline = acme.post("/evaluate", {"seed_data_id": "slow"})
    assert inline.status_code == 200, inline.text
    assert_same_statistics(done, read(acme, inline.json()["eval_results_id"], all_scores=True))


def test_retrying_a_plain_post_that_could_not_wait_finds_the_same_job(
    acme: Tenant, work: Work
) -> None:
    seed(acme, 600)
    headers = {**acme.headers, "Idempotency-Key": "nightly-600"}

    first = acme.http.post("/v1/evaluate", json={"seed_data_id": "big"}, headers=headers)
    again = acme.http.post("/v1/evaluate", json={"seed_data_id": "big"}, headers=headers)

    assert first.status_code == again.status_code == 503
    results_id = first.json()["error"].split("'")[1]
    assert again.json()["error"].split("'")[1] == results_id
    assert first.headers["Location"] == f"evaluation/{results_id}"
    assert work.waiting() == 2  # one job's chunks, not two jobs'
    # Another body under the same key is another request, and another job
    other_body = {"seed_data_id": "big", "pair_query": {"latest_n_pairs": 550}}
    other = acme.http.post("/v1/evaluate", json=other_body, headers=headers)
    assert other.status_code == 503 and results_id not in other.json()["error"]
    work.drain()
    # Once it is complete, the same request answers with it (and that answer is kept)
    done = acme.http.post("/v1/evaluate", json={"seed_data_id": "big"}, headers=headers)
    assert done.status_code == 200 and done.json()["eval_results_id"] == results_id
    assert acme.http.post("/v1/evaluate", json=other_body, headers=headers).status_code == 422


def test_a_dead_lettered_message_of_another_version_fails_the_job_it_names(
    acme: Tenant, work: Work
) -> None:
    seed(acme, 600)
    results_id = queue_async(acme)
    body = json.dumps({"v": 99, "kind": "evaluation", "tenant": "acme", "job": results_id})
    work.client.send_message(QueueUrl=work.dead_letter_url, MessageBody=body)

    work.deliver_dead_letters()

    failed = read(acme, results_id)
    assert failed["status"] == "failed"
    assert "could not be read by the worker" in failed["failure"]


def test_a_count_that_committed_but_lost_its_answer_is_not_counted_twice(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.core.errors import StorageUnavailable

    real = jobs_store.count
    lost: list[object] = []

    def counts_then_times_out(*args: Any) -> Any:
        counted = real(*args)
        if not lost:
            lost.append(counted)
            raise StorageUnavailable("the answer was lost (a timeout)")
        return counted

    monkeypatch.setattr(jobs_store, "count", counts_then_times_out)
    seed(acme, 1000)
    results_id = queue_async(acme)

    work.drain()

    assert lost and lost[0] is not None  # the first count committed
    done = read(acme, results_id)
    assert (done["status"], done["pairs_done"], done["pair_count"]) == ("complete", 1000, 1000)


def test_not_applicable_pairs_count_the_same_through_the_queue_as_inline(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 1,200 pairs, every third without a reference, scored on two reference checks and
    # a check of every pair, 100 pairs a chunk, clustered by input
    point_service_at({"EVALSVC_CHUNK_CHECKS": "300"}, monkeypatch)
    data = seeded_pairs(1200)
    for i, pair in enumerate(data):
        if i % 3:
            pair["reference"] = " ".join(reversed(pair["output"].split()))
    ok(acme.post("/data/seed/big", {"data": data}))
    definitions = ["check:token_f1", "check:rouge_l", "check:max_words:6"]
    metrics_id = ok(acme.post("/specify_questions", {"metrics": definitions})).json()["metrics_id"]
    body = {"seed_data_id": "big", "metrics_id": metrics_id, "cluster_by": "input"}

    results_id = queue_async(acme, body)
    work.drain()

    done = read(acme, results_id, all_scores=True)
    assert done["status"] == "complete"
    assert done["score_not_applicable"] == [400, 400, 0]
    assert [len(m) for m in done["all_scored_pairs"]] == [800, 800, 1200]
    # …and exactly the figures of the same evaluation inside one request
    monkeypatch.delenv("EVALSVC_WORK_QUEUE_URL")
    point_service_at({}, monkeypatch)
    inline = read(
        acme,
        ok(acme.post("/evaluate", body)).json()["eval_results_id"],
        all_scores=True,
    )
    assert_same_statistics(done, inline)
    assert done["score_not_applicable"] == inline["score_not_applicable"]
    assert done["score_clustered"] == inline["score_clustered"]
