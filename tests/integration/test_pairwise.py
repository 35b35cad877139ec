"""POST /pairwise, POST /pairwise/estimate, GET /pairwise/{id}, PUT /pairwise/{id}/vote (E5)
through the routes: a fake judge with a first-position bias that judging both orders cancels,
byte-equal outputs tied without a call, queued runs, isolation and every bad parameter."""

from __future__ import annotations

from typing import Any

import pytest
from evalsvc.models.pairwise import OrderVerdict, PairwiseRun, Verdict
from evalsvc.scoring import preferences

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, schema_name_of, service_env
from tests.integration.conftest import Tenant, ok
from tests.pinned_versions import EXPIRED_DAY, clock_at, expire, forget_inputs, stored
from tests.work_queue import Work

QUESTION = "Which answer is more polite?"
PAIRS = 12


def outputs(version: str) -> list[str]:
    """v1 says please on every pair; v2 on the first four only; v3 = v1 on eight pairs (equal
    bytes) and curt on the rest."""
    if version == "v1":
        return [f"Please restart the router ({k})." for k in range(PAIRS)]
    if version == "v2":
        return [
            f"Please restart it ({k})." if k < 4 else f"Restart it ({k})." for k in range(PAIRS)
        ]
    return [f"Please restart the router ({k})." if k < 8 else "No." for k in range(PAIRS)]


@pytest.fixture
def judge(fake_judge: FakeJudge) -> FakeJudge:
    return fake_judge


def runs(tenant: Tenant, versions: tuple[str, ...] = ("v1", "v2")) -> list[str]:
    metrics_id = ok(tenant.post("/specify_questions", {"metrics": ["check:non_empty"]})).json()[
        "metrics_id"
    ]
    ids = []
    for version in versions:
        data = [
            {"id": f"p{k:02d}", "input": f"My router is down ({k}).", "output": text}
            for k, text in enumerate(outputs(version))
        ]
        ok(tenant.post(f"/data/seed/{version}", {"data": data}))
        body = {"seed_data_id": version, "metrics_id": metrics_id}
        ids.append(ok(tenant.post("/evaluate", body)).json()["eval_results_id"])
    return ids


def post(tenant: Tenant, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    response = tenant.post("/pairwise", body)
    assert response.status_code == status, response.text
    return dict(response.json())


def test_both_orders_cancel_a_first_position_bias(acme: Tenant, judge: FakeJudge) -> None:
    ids = runs(acme)

    body = post(acme, {"result_ids": ids, "question": QUESTION})

    assert body["status"] == "complete" and body["pairs_used"] == PAIRS
    assert len(judge.requests) == 2 * PAIRS  # one matchup, both orders
    assert {schema_name_of(r) for r in judge.requests} == {"record_preference"}
    (matchup,) = body["matchups"]
    # v1 wins the eight pairs where only it says please, in either position; the four where
    # both do go to the first shown each time: the orders disagree, a tie
    assert (matchup["a"], matchup["a_wins"], matchup["b_wins"], matchup["ties"]) == (
        ids[0],
        8,
        0,
        4,
    )
    assert matchup["verdict"] == "a_better"
    assert body["position"] == {
        "judgements": 24,
        "first_chosen": 16,
        "second_chosen": 8,
        "ties": 0,
        "consistency": 8 / 12,
    }
    assert [row["result_id"] for row in body["leaderboard"]] == ids
    assert body["leaderboard"][0]["strength"] > 0 > body["leaderboard"][1]["strength"]
    verdict = body["verdicts"][0]
    assert verdict["pair_id"] == "p00" and verdict["winner"] == "tie"
    assert verdict["first_order"]["winner"] == "first"
    assert verdict["second_order"]["winner"] == "first"
    assert body["judge_human"]["votes"] == 0

    # GET answers the same, in pages of verdicts
    first = ok(acme.get(f"/pairwise/{body['pairwise_id']}?limit=5")).json()
    assert [v["pair_id"] for v in first["verdicts"]] == [f"p{k:02d}" for k in range(5)]
    rest = ok(
        acme.get(f"/pairwise/{body['pairwise_id']}?limit=100&cursor={first['next_cursor']}")
    ).json()
    assert [v["pair_id"] for v in rest["verdicts"]] == [f"p{k:02d}" for k in range(5, PAIRS)]
    assert rest["next_cursor"] is None
    assert first["leaderboard"] == body["leaderboard"]


def test_equal_outputs_are_ties_without_a_call_and_a_rerun_is_cached(
    acme: Tenant, judge: FakeJudge
) -> None:
    ids = runs(acme, ("v1", "v3"))

    body = post(acme, {"result_ids": ids, "question": QUESTION})

    assert len(judge.requests) == 2 * 4  # only the four pairs whose outputs differ
    (matchup,) = body["matchups"]
    assert (matchup["a_wins"], matchup["b_wins"], matchup["ties"]) == (4, 0, 8)
    equal = body["verdicts"][0]
    assert (equal["winner"], equal["first_order"], equal["second_order"]) == ("tie", None, None)
    again = post(acme, {"result_ids": ids, "question": QUESTION})
    assert len(judge.requests) == 8 and again["usage"]["cache_hits"] == 8
    assert again["matchups"] == body["matchups"]


def test_one_order_and_three_runs(acme: Tenant, judge: FakeJudge) -> None:
    ids = runs(acme, ("v1", "v2", "v3"))

    body = post(acme, {"result_ids": ids, "question": QUESTION, "both_orders": False})

    assert [(m["a"], m["b"]) for m in body["matchups"]] == [
        (ids[0], ids[1]),
        (ids[0], ids[2]),
        (ids[1], ids[2]),
    ]
    assert body["position"]["consistency"] is None
    assert body["verdicts"][0]["second_order"] is None
    assert sorted(row["rank"] for row in body["leaderboard"]) == [1, 2, 3]


def test_votes_measure_the_judge(acme: Tenant, judge: FakeJudge) -> None:
    ids = runs(acme)
    pairwise_id = post(acme, {"result_ids": ids, "question": QUESTION})["pairwise_id"]

    # p05: the judge chose v1 (a); one person agrees, then changes their mind
    vote = {"pair_id": "p05", "a": ids[0], "b": ids[1], "winner": "a"}
    ok(acme.put(f"/pairwise/{pairwise_id}/vote", vote))
    human = ok(acme.get(f"/pairwise/{pairwise_id}")).json()["judge_human"]
    assert (human["votes"], human["agreement"]) == (1, 1.0)
    # the same comparison named the other way round replaces it
    swapped = {"pair_id": "p05", "a": ids[1], "b": ids[0], "winner": "a"}
    ok(acme.put(f"/pairwise/{pairwise_id}/vote", swapped))
    human = ok(acme.get(f"/pairwise/{pairwise_id}")).json()["judge_human"]
    assert (human["votes"], human["agreement"]) == (1, 0.0)

    for bad, status, says in [
        ({**vote, "a": "ev_nope"}, 400, "not one of this run"),
        ({**vote, "b": ids[0]}, 400, "two different runs"),
        ({**vote, "winner": "first"}, 400, "winner"),
        ({**vote, "pair_id": "p99"}, 404, "was not compared"),
    ]:
        response = acme.put(f"/pairwise/{pairwise_id}/vote", bad)
        assert response.status_code == status and says in response.json()["error"], response.text


def test_another_tenant_sees_nothing(acme: Tenant, globex: Tenant, judge: FakeJudge) -> None:
    ids = runs(acme)
    pairwise_id = post(acme, {"result_ids": ids, "question": QUESTION})["pairwise_id"]

    assert globex.get(f"/pairwise/{pairwise_id}").status_code == 404
    vote = {"pair_id": "p00", "a": ids[0], "b": ids[1], "winner": "a"}
    assert globex.put(f"/pairwise/{pairwise_id}/vote", vote).status_code == 404
    # acme's results are not globex's to compare
    assert globex.post("/pairwise", {"result_ids": ids, "question": QUESTION}).status_code == 404


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"result_ids": ["ev_x"]}, "result_ids"),
        ({"result_ids": ["ev_a"] * 2}, "distinct"),
        ({"result_ids": [f"ev_{k}" for k in range(9)]}, "at most 8"),
        ({"question": ""}, "question"),
        ({"question": "   "}, "blank"),
        ({"question": "q" * 2001}, "at most 2000"),
        ({"alpha": 0.5}, "alpha"),
        ({"alpha": 0}, "alpha"),
        ({"max_pairs": 0}, "max_pairs"),
        ({"max_pairs": 100_001}, "max_pairs"),
        ({"both_orders": 1}, "both_orders"),
        ({"max_cost_usd": -1}, "max_cost_usd"),
    ],
)
def test_every_bad_parameter_is_a_4xx(
    acme: Tenant, judge: FakeJudge, change: dict[str, Any], says: str
) -> None:
    # Too many runs or too long a question is a 413, as every field past its size limit is.
    response = acme.post(
        "/pairwise", {"result_ids": ["ev_a", "ev_b"], "question": QUESTION, **change}
    )
    assert response.status_code == (413 if "at most" in says else 400), response.text
    assert says in response.json()["error"]
    assert judge.requests == []


def test_unknown_unshared_and_unjudged_runs(
    acme: Tenant, judge: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = runs(acme)
    response = acme.post("/pairwise", {"result_ids": [ids[0], "ev_nope"], "question": QUESTION})
    assert response.status_code == 404 and "ev_nope" in response.json()["error"]

    other = [{"id": "zz", "input": "x", "output": "y"}]
    ok(acme.post("/data/seed/other", {"data": other}))
    lone = ok(acme.post("/evaluate", {"seed_data_id": "other"})).json()["eval_results_id"]
    response = acme.post("/pairwise", {"result_ids": [ids[0], lone], "question": QUESTION})
    assert response.status_code == 400 and "share no pair id" in response.json()["error"]

    point_service_at({"EVALSVC_LLM": ""}, monkeypatch)
    response = acme.post("/pairwise", {"result_ids": ids, "question": QUESTION})
    assert response.status_code == 400 and "judge" in response.json()["error"]
    assert judge.requests == []


def test_a_run_that_does_not_fit_is_queued_and_answered_202(
    acme: Tenant, judge: FakeJudge, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = runs(acme)
    point_service_at(
        {"EVALSVC_INLINE_MAX_JUDGE_CALLS": "4", "EVALSVC_CHUNK_JUDGE_CALLS": "6"}, monkeypatch
    )

    response = acme.post("/pairwise", {"result_ids": ids, "question": QUESTION})

    assert response.status_code == 202, response.text
    queued = response.json()
    assert queued["status"] == "running"
    assert response.headers["Location"] == f"pairwise/{queued['pairwise_id']}"
    running = ok(acme.get(f"/pairwise/{queued['pairwise_id']}")).json()
    assert running["status"] == "running" and running["progress"] == {"done": 0, "total": PAIRS}
    assert running["leaderboard"] == [] and running["position"] is None
    assert work.drain() == 4  # twelve pairs, three a chunk (six calls)
    done = ok(acme.get(f"/pairwise/{queued['pairwise_id']}")).json()
    assert done["status"] == "complete" and done["progress"] == {"done": PAIRS, "total": PAIRS}
    (matchup,) = done["matchups"]
    assert (matchup["a_wins"], matchup["b_wins"], matchup["ties"]) == (8, 0, 4)
    assert done["usage"]["llm_calls"] == 2 * PAIRS


def test_the_estimate_bounds_the_calls_and_counts_the_cached(
    acme: Tenant, judge: FakeJudge
) -> None:
    ids = runs(acme, ("v1", "v3"))
    body = {"result_ids": ids, "question": QUESTION}

    before = ok(acme.post("/pairwise/estimate", body)).json()
    assert (before["pairs"], before["llm_calls"], before["cached_calls"]) == (PAIRS, 8, 0)
    assert before["output_tokens_max"] == 8 * 4 * preferences.MAX_TOKENS
    assert judge.requests == []
    post(acme, body)
    after = ok(acme.post("/pairwise/estimate", body)).json()
    assert (after["llm_calls"], after["cached_calls"]) == (0, 8)


def test_the_report_shows_the_comparisons_whose_orders_disagreed(
    acme: Tenant, globex: Tenant, judge: FakeJudge
) -> None:
    ids = runs(acme)
    pairwise_id = post(acme, {"result_ids": ids, "question": QUESTION})["pairwise_id"]

    page = acme.get(f"/pairwise/{pairwise_id}/report")

    assert page.status_code == 200, page.text
    assert page.headers["Content-Type"].startswith("text/html")
    html = page.text
    # The four pairs where both say please: each order chose the output shown first
    for k in range(4):
        assert f"p{k:02d}" in html
    assert outputs("v2")[0] in html and outputs("v1")[0] in html
    assert "Both are alike; the first reads better." in html
    assert globex.get(f"/pairwise/{pairwise_id}/report").status_code == 404


def test_every_pairwise_item_stays_under_400_kb_at_the_field_limits(
    tables: dict[str, str],
) -> None:
    from evalsvc.logic.kinds.pairwise import MAX_CHUNK_PAIRS
    from evalsvc.models.evaluations import MAX_REASON_CHARS
    from evalsvc.models.pairwise import MAX_QUESTION_CHARS, MAX_RUNS
    from evalsvc.spending.meter import Usage
    from evalsvc.storage import dynamo
    from evalsvc.storage import pairwise as store
    from evalsvc.storage.dynamo import item_size

    from tests.integration.test_item_sizes import ITEM_LIMIT, PAIR_ID, wide

    run_ids = [f"ev_{k}" + "x" * 124 for k in range(MAX_RUNS)]
    run = PairwiseRun(
        tenant="acme",
        pairwise_id="pw_" + "y" * 125,
        created_ms=1,
        question=wide(MAX_QUESTION_CHARS),
        result_ids=run_ids,
        both_orders=True,
        alpha=0.05,
        max_pairs=100_000,
        pairs_used=100_000,
        counts={
            "outcomes": {f"{i}|{j}|{w}": 100_000 for i in range(8) for j in range(8) for w in "ab"}
        },
        usage=Usage(model="openai:" + "m" * 200),
        failure=wide(2_000),
    )
    store.put_complete(run, [])
    longest = [f"{k:04d}" + PAIR_ID[4:] for k in range(MAX_CHUNK_PAIRS)]
    store.put_chunks("acme", run.pairwise_id, [longest])
    reason = OrderVerdict("second", wide(MAX_REASON_CHARS))
    store.put_verdicts(
        "acme",
        run.pairwise_id,
        [
            Verdict(PAIR_ID, i, j, "tie", reason, reason)
            for i in range(MAX_RUNS)
            for j in range(i + 1, MAX_RUNS)
        ],
    )
    pk = store.run_pk("acme", run.pairwise_id)
    items = list(
        dynamo.query_pages(
            TableName=tables["EVALSVC_RESULTS_TABLE"],
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": pk}},
        )
    )
    sizes = {item["sk"]["S"][:2]: item_size(item) for page in items for item in page}
    assert set(sizes) == {"ru", "c#", "v#"}
    assert max(sizes.values()) < ITEM_LIMIT, sizes
    # The verdicts of 28 matchups, each order's reason at its limit in 4-byte characters
    assert sizes["v#"] > 200 * 1024
    assert len(store.verdicts_of("acme", run.pairwise_id, [PAIR_ID])[PAIR_ID]) == 28


def test_a_running_or_failed_result_is_a_409_and_so_is_a_vote_on_a_running_run(
    acme: Tenant, judge: FakeJudge, work: Work
) -> None:
    ids = runs(acme)
    asynchronous = {**acme.headers, "Prefer": "respond-async"}
    queued = acme.http.post("/v1/evaluate", json={"seed_data_id": "v1"}, headers=asynchronous)
    assert queued.status_code == 202, queued.text
    running = queued.json()["eval_results_id"]

    response = acme.post("/pairwise", {"result_ids": [ids[0], running], "question": QUESTION})
    assert response.status_code == 409 and "still running" in response.json()["error"]

    assert work.dead_letter_all()
    work.deliver_dead_letters()
    response = acme.post("/pairwise", {"result_ids": [running, ids[1]], "question": QUESTION})
    assert response.status_code == 409 and "failed" in response.json()["error"]

    later = acme.http.post(
        "/v1/pairwise", json={"result_ids": ids, "question": QUESTION}, headers=asynchronous
    )
    assert later.status_code == 202, later.text
    pairwise_id = later.json()["pairwise_id"]
    vote = {"pair_id": "p00", "a": ids[0], "b": ids[1], "winner": "a"}
    response = acme.put(f"/pairwise/{pairwise_id}/vote", vote)
    assert response.status_code == 409 and "running" in response.json()["error"]
    assert judge.requests == []  # nothing judged until a worker takes it


def test_a_retry_with_the_same_idempotency_key_answers_the_same_run(
    acme: Tenant, judge: FakeJudge
) -> None:
    ids = runs(acme)
    body = {"result_ids": ids, "question": QUESTION}
    headers = {**acme.headers, "Idempotency-Key": "pw-retry-1"}

    first = acme.http.post("/v1/pairwise", json=body, headers=headers)
    again = acme.http.post("/v1/pairwise", json=body, headers=headers)

    assert first.status_code == again.status_code == 200, (first.text, again.text)
    assert first.json()["pairwise_id"] == again.json()["pairwise_id"]
    assert len(judge.requests) == 2 * PAIRS


def test_a_judge_too_slow_for_the_request_hands_over_and_keeps_its_answers(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A judge at 1 s a call, 2 at a time: 24 calls do not fit a 6 s request (3 s kept back)
    fake = FakeJudge(latency=1.0)
    with fake.running():
        point_service_at(
            {**service_env(fake), "EVALSVC_JUDGE_CONCURRENCY": "2", "EVALSVC_REQUEST_SECONDS": "6"},
            monkeypatch,
        )
        ids = runs(acme)

        response = acme.post("/pairwise", {"result_ids": ids, "question": QUESTION})

        # Handed to the queue: 202 naming the run, the calls made so far in the judge cache
        assert response.status_code == 202, response.text
        pairwise_id = response.json()["pairwise_id"]
        made = len(fake.requests)
        assert 0 < made < 2 * PAIRS
        work.drain()
        done = ok(acme.get(f"/pairwise/{pairwise_id}")).json()
        assert done["status"] == "complete" and done["pairs_used"] == PAIRS
        # The worker found the request's answers cached: every comparison was asked once, but
        # for at most the two in flight when the request's time ran out
        assert 2 * PAIRS <= len(fake.requests) <= 2 * PAIRS + 2
        assert done["usage"]["cache_hits"] >= made - 2


# ---- the texts each run scored, from the version it pinned (E7) --------------------------------


def overwrite(tenant: Tenant, dataset_id: str, version: str) -> None:
    data = [
        {"id": f"p{k:02d}", "input": f"My router is down ({k}).", "output": text}
        for k, text in enumerate(outputs(version))
    ]
    ok(tenant.post(f"/data/seed/{dataset_id}", {"data": data}))


def test_each_run_is_judged_on_what_it_scored_though_a_skewed_clock_dates_an_overwrite_before(
    acme: Tenant, judge: FakeJudge
) -> None:
    # Given runs of v1 and v2, then dataset v2 overwritten with v1's outputs on a Lambda whose
    # clock runs a second behind the evaluations': its pairs carry a time before the run's
    ids = runs(acme)
    with clock_at(stored("acme", ids[1]).created_ms - 1_000):
        overwrite(acme, "v2", "v1")

    # When the runs are judged
    body = post(acme, {"result_ids": ids, "question": QUESTION})

    # Then v2's run is judged on the outputs it scored, as if nothing had been written (by the
    # dataset's texts now every pair would be a tie without a call)
    assert body["pairs_used"] == PAIRS
    assert len(judge.requests) == 2 * PAIRS
    (matchup,) = body["matchups"]
    assert (matchup["a_wins"], matchup["b_wins"], matchup["ties"]) == (8, 0, 4)


def test_a_run_whose_version_expired_is_a_410_naming_the_day(
    acme: Tenant, judge: FakeJudge
) -> None:
    ids = runs(acme)
    overwrite(acme, "v2", "v3")
    expire("acme", ids[1], purged=True)
    body = {"result_ids": ids, "question": QUESTION}

    for path in ("/pairwise", "/pairwise/estimate"):
        response = acme.post(path, body)
        assert response.status_code == 410, response.text
        said = response.json()["error"]
        assert f"expired on {EXPIRED_DAY}" in said and repr(ids[1]) in said
    assert judge.requests == []


def test_a_queued_run_whose_version_expires_fails_naming_the_day(
    acme: Tenant, judge: FakeJudge, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = runs(acme)
    overwrite(acme, "v2", "v3")
    point_service_at(
        {"EVALSVC_INLINE_MAX_JUDGE_CALLS": "4", "EVALSVC_CHUNK_JUDGE_CALLS": "6"}, monkeypatch
    )
    response = acme.post("/pairwise", {"result_ids": ids, "question": QUESTION})
    assert response.status_code == 202, response.text
    expire("acme", ids[1], purged=False)

    work.drain()

    done = ok(acme.get(f"/pairwise/{response.json()['pairwise_id']}")).json()
    assert done["status"] == "failed"
    assert f"expired on {EXPIRED_DAY}" in done["failure"]
    assert judge.requests == []


def test_a_run_stored_before_it_pinned_its_version_goes_by_times(
    acme: Tenant, judge: FakeJudge
) -> None:
    ids = runs(acme)
    for results_id in ids:
        forget_inputs("acme", results_id)
    overwrite(acme, "v2", "v3")  # every pair of v2 written after its run

    body = post(acme, {"result_ids": ids, "question": QUESTION})

    assert body["pairs_used"] == 0 and judge.requests == []
