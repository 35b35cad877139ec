"""Sizes in bytes, not counts: what a request reads or writes, and every response that can
grow, is decided from byte counts kept on headers, before anything large is loaded. An answer
too large for one response is a 413 naming the paging parameters, and pages always fit."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

import pytest
from evalsvc.logic import results
from evalsvc.models.datasets import DatasetKind
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import metric_sets
from evalsvc.storage import results as results_store

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, service_env
from tests.integration.conftest import Tenant
from tests.work_queue import Work

PLAIN = {"Accept-Encoding": "identity"}
REASON_LIMIT_TEXT = "\U0001f600" * 990  # a 4-byte reason near the 1,000-character cut


def evaluate(tenant: Tenant, dataset: str, metrics: list[str]) -> str:
    assert tenant.post("/specify_questions", {"metrics": metrics}).status_code == 200
    response = tenant.post("/evaluate", {"seed_data_id": dataset})
    assert response.status_code == 200, response.text
    results_id: str = response.json()["eval_results_id"]
    return results_id


def seed(tenant: Tenant, dataset: str, count: int, output: str = "out") -> None:
    data = [{"id": f"p{i:04d}", "input": f"in {i}", "output": output} for i in range(count)]
    assert tenant.post(f"/data/seed/{dataset}", {"data": data}).status_code == 200


def pages(tenant: Tenant, path: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Every page of a paged read, each checked to fit one response."""
    from evalsvc.api.responses import MAX_RESPONSE_BYTES

    found, cursor = [], None
    while True:
        query = {**params, **({"cursor": cursor} if cursor else {})}
        response = tenant.http.get(f"/v1{path}", headers={**tenant.headers, **PLAIN}, params=query)
        assert response.status_code == 200, response.text[:300]
        assert len(response.content) < MAX_RESPONSE_BYTES
        body: dict[str, Any] = response.json()
        found.append(body)
        cursor = body["next_cursor"]
        if cursor is None:
            return found


@pytest.fixture
def long_reasons(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    """A judge whose every reason is 990 four-byte characters."""
    verdict = json.dumps({"reason": REASON_LIMIT_TEXT, "score": 3})
    fake = FakeJudge(answer=lambda request: (200, verdict))
    with fake.running():
        point_service_at(
            {**service_env(fake), "EVALSVC_INLINE_MAX_JUDGE_CALLS": "10000"}, monkeypatch
        )
        yield fake


def test_every_scored_pair_too_large_for_one_response_is_refused_before_reading(
    acme: Tenant, long_reasons: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 800 pairs x 2 questions judged with 4 KB reasons: 6.4 MB of reasons
    seed(acme, "ds", 800)
    results_id = evaluate(acme, "ds", ["Is it right?", "Is it kind?"])

    def not_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("the scored pairs were read")

    monkeypatch.setattr(results_store, "list_scored", not_read)

    # When they are asked for in one response without compression
    response = acme.http.get(
        f"/v1/evaluation/{results_id}",
        headers={**acme.headers, **PLAIN},
        params={"includeAllScores": "true"},
    )

    # Then the result's size said no before any scored pair was read, naming the paging
    assert response.status_code == 413
    error = response.json()["error"]
    assert error.startswith(f"evaluation result {results_id!r} has 800 scored pairs (6.4 MB")
    assert "?includeAllScores=true&limit=1000, then add &cursor=<next_cursor>" in error
    monkeypatch.undo()
    # And the pages hold every scored pair once, each page fitting one response
    found = pages(acme, f"/evaluation/{results_id}", {"includeAllScores": "true", "limit": 1000})
    assert len(found) > 1
    ids = [p["pair_id"] for page in found for p in page["all_scored_pairs"][0]]
    assert sorted(ids) == [f"p{i:04d}" for i in range(800)]
    assert all(len(page["all_scored_pairs"]) == 2 for page in found)
    assert {p["reason"] for page in found for p in page["all_scored_pairs"][1]} == {
        REASON_LIMIT_TEXT
    }


def test_critiques_too_many_for_one_response_are_a_413_and_read_in_pages(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme, "ds", 40)
    results_id = evaluate(acme, "ds", ["check:non_empty", "check:max_chars:1"])
    comment = "\u4e2d" * 4000  # 12 KB of 3-byte text, the comment limit
    for i in range(40):
        for metric in (0, 1):
            vote = {"pair_id": f"p{i:04d}", "metric_idx": metric, "vote": -1, "comment": comment}
            assert acme.put(f"/vote_eval_pair/{results_id}", vote).status_code == 200
    # 80 critiques of 12 KB (960 KB): more than a smaller response budget holds
    monkeypatch.setattr("evalsvc.api.routes.get_evaluation.readable_bytes", lambda request: 600_000)

    response = acme.get(f"/evaluation/{results_id}")

    assert response.status_code == 413
    assert "has more human critiques than one response holds" in response.json()["error"]
    found = pages(acme, f"/evaluation/{results_id}", {"limit": 1000})
    critiques = [c for page in found for c in page["human_critique"]]
    assert len(critiques) == 80 and len({c["id"] for c in critiques}) == 80
    assert all("all_scored_pairs" not in page for page in found)


def test_improve_prompt_reads_a_bounded_sample_of_critiques(acme: Tenant) -> None:
    # Given 80 comments of 4,000 characters (320 KB), more than improve_prompt takes
    seed(acme, "ds", 40)
    results_id = evaluate(acme, "ds", ["check:max_chars:1", "check:non_empty"])
    for i in range(40):
        for metric in (0, 1):
            comment = f"{i % 10}" * 4000
            vote = {"pair_id": f"p{i:04d}", "metric_idx": metric, "vote": -1, "comment": comment}
            assert acme.put(f"/vote_eval_pair/{results_id}", vote).status_code == 200

    stored = results.read_evaluation(
        _identity(), results_id, include_all=False, critique_sample=True
    )

    assert 0 < len(stored.critiques) < 80
    taken = sum(len(c.comment) for c in stored.critiques)
    assert taken <= results.IMPROVEMENT_CRITIQUE_BYTES


def _identity() -> Any:
    from evalsvc.models.api_keys import Identity

    return Identity("acme", "ann", "ann@acme.test", "k")


def test_metrics_sets_too_large_to_list_are_refused_from_their_total_and_paged(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    long_question = "Is the answer " + "\U0001f600" * 1900 + "?"  # ~7.6 KB each
    created = []
    for _ in range(17):
        body = {"metrics": [long_question] * 50}  # ~380 KB a set, 6.5 MB in all
        response = acme.post("/specify_questions", body)
        assert response.status_code == 200
        created.append(response.json()["metrics_id"])
    assert metric_sets.listed_bytes("acme") > 17 * 50 * 7_600

    def not_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("the sets were read")

    monkeypatch.setattr(metric_sets, "list_all", not_read)

    response = acme.http.get("/v1/list_questions", headers={**acme.headers, **PLAIN})

    assert response.status_code == 413
    assert "list them in pages with GET /list_questions?limit=1000" in response.json()["error"]
    monkeypatch.undo()
    found = pages(acme, "/list_questions", {"limit": 1000})
    assert len(found) > 1
    assert sorted(m for page in found for m in page["metrics"]) == sorted(created)
    # With gzip (what plum-sdk sends) the whole list still fits one response
    assert acme.get("/list_questions").json()["total_count"] == 17


def test_an_evaluation_reading_more_text_than_a_request_holds_is_queued(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 20 pairs of 50 KB each (1 MB) where a request may read 400 KB and a chunk 300 KB
    point_service_at(
        {"EVALSVC_INLINE_MAX_BYTES": "400000", "EVALSVC_CHUNK_MAX_BYTES": "300000"}, monkeypatch
    )
    seed(acme, "big", 20, output="x" * 50_000)
    assert acme.post("/specify_questions", {"metrics": ["check:non_empty"]}).status_code == 200

    response = acme.post("/evaluate", {"seed_data_id": "big"})

    # Then it went to the queue though it is 20 check scorings, in chunks of at most 300 KB
    assert response.status_code == 503, response.text
    assert work.waiting() == math.ceil(20 / (300_000 // 50_012))
    work.drain()
    results_id = response.headers["Location"].removeprefix("evaluation/")
    assert acme.get(f"/evaluation/{results_id}").json()["status"] == "complete"


def test_an_augmentation_without_a_model_that_writes_much_is_queued(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at(
        {"EVALSVC_INLINE_MAX_SYNTHETIC_PAIRS": "100", "EVALSVC_INLINE_MAX_BYTES": "10000000"},
        monkeypatch,
    )
    seed(acme, "seeds", 30)

    response = acme.post("/augment", {"seed_data_id": "seeds", "multiple": 4})

    assert response.status_code == 503, response.text
    dataset_id = response.headers["Location"].removeprefix("data/synthetic/")
    work.drain()
    made = acme.get(f"/data/synthetic/{dataset_id}").json()
    assert len(made["data"]) == 120
    header = datasets_store.get_header("acme", DatasetKind.SYNTHETIC, dataset_id)
    assert header is not None and header.bytes is not None
    read, pairs = datasets_store.read_dataset("acme", DatasetKind.SYNTHETIC, dataset_id, 10**7)
    from evalsvc.models.datasets import pair_bytes

    assert header.bytes == sum(pair_bytes(p) for p in pairs) and read.pair_count == 120


def test_a_cursor_is_checked(acme: Tenant) -> None:
    seed(acme, "ds", 2)
    results_id = evaluate(acme, "ds", ["check:non_empty"])
    for bad in ("%%%", "W1tbW1tbW1tbW1s", "WzEsMl0", "bm90IGpzb24"):
        response = acme.get(f"/evaluation/{results_id}", params={"cursor": bad})
        assert response.status_code == 400, (bad, response.text)
        assert response.json()["error"].startswith("cursor is not valid")
    assert critiques_store.page("acme", results_id, "", 10, 10**6) == ([], None)
