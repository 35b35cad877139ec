"""GET /evaluations: the caller's evaluation results newest first, in pages, by dataset; their
status as it stands; nothing of another tenant's, whatever cursor it sends; every bad
parameter a 400 saying what to fix."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from evalsvc.logic import evaluations
from evalsvc.storage import results as results_store

from tests.integration.conftest import Tenant, ok
from tests.lambda_support import invoke, load_event, with_body
from tests.work_queue import Work


class Clock:
    """The time evaluations are created at: set by the test, so that their order is known (and
    two can share a millisecond)."""

    def __init__(self) -> None:
        self.ms = 1_800_000_000_000

    def __call__(self) -> int:
        return self.ms


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(evaluations, "now_ms", clock)
    return clock


def seed(tenant: Tenant, dataset_id: str, pairs: int = 2) -> None:
    data = [{"id": f"p{i}", "input": f"question {i}", "output": "yes"} for i in range(pairs)]
    ok(tenant.post(f"/data/seed/{dataset_id}", {"data": data}))


def evaluate(tenant: Tenant, dataset_id: str, **headers: str) -> str:
    response = tenant.http.post(
        "/v1/evaluate", json={"seed_data_id": dataset_id}, headers={**tenant.headers, **headers}
    )
    assert response.status_code in (200, 202), response.text
    return str(response.json()["eval_results_id"])


def listed(tenant: Tenant, query: str = "") -> dict[str, Any]:
    body: dict[str, Any] = ok(tenant.get(f"/evaluations{query}")).json()
    return body


def every_page(tenant: Tenant, query: str) -> Iterator[dict[str, Any]]:
    """Each page of the list, following next_cursor from the first."""
    page = listed(tenant, f"?{query}")
    yield page
    while page["next_cursor"] is not None:
        page = listed(tenant, f"?{query}&cursor={page['next_cursor']}")
        yield page


def ids(page: dict[str, Any]) -> list[str]:
    return [entry["eval_results_id"] for entry in page["evaluations"]]


@pytest.fixture
def five(acme: Tenant, clock: Clock) -> list[str]:
    """Five evaluations of two datasets (ds-a: 2 pairs, ds-b: 3 pairs), one a millisecond,
    but the last two started in the same millisecond; newest first."""
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    seed(acme, "ds-a")
    seed(acme, "ds-b", pairs=3)
    made = []
    for k, dataset_id in enumerate(["ds-a", "ds-b", "ds-a", "ds-b", "ds-a"]):
        clock.ms += 1 if k < 4 else 0
        made.append(evaluate(acme, dataset_id))
    newest = sorted(made[3:], reverse=True)  # same millisecond: the greater id first
    return [*newest, *reversed(made[:3])]


def test_evaluations_are_listed_newest_first_across_pages(acme: Tenant, five: list[str]) -> None:
    pages = list(every_page(acme, "limit=2"))

    assert [len(page["evaluations"]) for page in pages] == [2, 2, 1]
    assert [i for page in pages for i in ids(page)] == five
    assert pages[-1]["next_cursor"] is None
    # every entry says what GET /evaluation/{id} says, in the same words
    for entry in (e for page in pages for e in page["evaluations"]):
        result = ok(acme.get(f"/evaluation/{entry['eval_results_id']}")).json()
        assert set(entry) == {
            "eval_results_id",
            "dataset_id",
            "metrics_id",
            "status",
            "pair_count",
            "created_at",
        }
        assert entry == {
            "eval_results_id": result["results_id"],
            "dataset_id": result["dataset_id"],
            "metrics_id": result["metrics_id"],
            "status": "complete",
            "pair_count": result["pair_count"],
            "created_at": result["created_at"],
        }


def test_the_default_page_is_20_and_a_page_of_all_has_no_cursor(
    acme: Tenant, five: list[str]
) -> None:
    assert listed(acme) == listed(acme, "?limit=20")
    assert ids(listed(acme)) == five and listed(acme)["next_cursor"] is None
    assert listed(acme, "?limit=5")["next_cursor"] is None
    assert listed(acme, "?limit=4")["next_cursor"] is not None


def test_seed_data_id_lists_only_that_datasets_evaluations(acme: Tenant, five: list[str]) -> None:
    of_a = [results_id for results_id in five if _dataset(acme, results_id) == "ds-a"]

    pages = list(every_page(acme, "seed_data_id=ds-a&limit=2"))

    assert [i for page in pages for i in ids(page)] == of_a and len(of_a) == 3
    assert {e["pair_count"] for page in pages for e in page["evaluations"]} == {2}
    assert ids(listed(acme, "?seed_data_id=ds-b")) == [i for i in five if i not in of_a]
    assert listed(acme, "?seed_data_id=nothing-here") == {"evaluations": [], "next_cursor": None}


def _dataset(tenant: Tenant, results_id: str) -> str:
    return str(ok(tenant.get(f"/evaluation/{results_id}")).json()["dataset_id"])


def test_seed_data_id_also_finds_a_synthetic_datasets_evaluations(acme: Tenant) -> None:
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    seed(acme, "ds")
    synthetic = ok(acme.post("/augment", {"seed_data_id": "ds"})).json()["synthetic_data_id"]
    response = ok(acme.post("/evaluate", {"synthetic_data_id": synthetic}))
    results_id = response.json()["eval_results_id"]
    evaluate(acme, "ds")

    body = listed(acme, f"?seed_data_id={synthetic}")

    assert ids(body) == [results_id]
    assert body["evaluations"][0]["dataset_id"] == synthetic


def test_a_queued_evaluation_is_listed_running_then_complete(acme: Tenant, work: Work) -> None:
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    seed(acme, "ds", pairs=3)
    results_id = evaluate(acme, "ds", Prefer="respond-async")

    (running,) = listed(acme)["evaluations"]
    assert (running["eval_results_id"], running["status"], running["pair_count"]) == (
        results_id,
        "running",
        3,
    )

    assert work.drain()
    (done,) = listed(acme, "?seed_data_id=ds")["evaluations"]
    assert (done["eval_results_id"], done["status"], done["pair_count"]) == (
        results_id,
        "complete",
        3,
    )
    assert done["created_at"] == running["created_at"]


def test_a_failed_evaluation_is_listed_failed(acme: Tenant, work: Work) -> None:
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    seed(acme, "ds")
    results_id = evaluate(acme, "ds", Prefer="respond-async")
    assert work.dead_letter_all()
    work.deliver_dead_letters()

    (failed,) = listed(acme)["evaluations"]

    assert (failed["eval_results_id"], failed["status"]) == (results_id, "failed")


def test_the_local_servers_store_lists_them_the_same(
    served_tables: dict[str, str], acme: Tenant, five: list[str]
) -> None:
    # The embedded DynamoDB of `make run` (moto with the store's speed-ups) builds the same
    # indexes from template.yaml and pages them the same way.
    pages = list(every_page(acme, "limit=2"))
    assert [i for page in pages for i in ids(page)] == five
    by_dataset = list(every_page(acme, "limit=1&seed_data_id=ds-b"))
    assert [i for page in by_dataset for i in ids(page)] == [
        i for i in five if _dataset(acme, i) == "ds-b"
    ]


def test_only_result_headers_are_in_the_list_indexes(acme: Tenant, five: list[str]) -> None:
    header = results_store.get("acme", five[0])
    assert header is not None
    for dataset_id in (None, "ds-a", "ds-b"):
        entries, more = results_store.listed_page("acme", dataset_id, None, 100, 10**6)
        assert not more
        assert {e.results_id for e in entries} <= set(five)
        assert len(entries) == (5 if dataset_id is None else 3 if dataset_id == "ds-a" else 2)


# ---- another tenant ----------------------------------------------------------------------------


def test_another_tenant_sees_none_of_them_whatever_cursor_it_sends(
    acme: Tenant, globex: Tenant, clock: Clock
) -> None:
    # Given globex's own evaluation, older than all of acme's
    ok(globex.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    seed(globex, "ds")
    clock.ms += 1
    theirs = evaluate(globex, "ds")
    # and acme's three, of a dataset with the same id
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    seed(acme, "ds")
    mine = []
    for _ in range(3):
        clock.ms += 1
        mine.append(evaluate(acme, "ds"))
    first = listed(acme, "?limit=1")
    assert ids(first) == [mine[-1]]
    cursor = first["next_cursor"]

    # When globex lists, with and without acme's cursor and dataset id
    seen = [
        listed(globex),
        listed(globex, "?seed_data_id=ds"),
        listed(globex, f"?cursor={cursor}"),
        listed(globex, f"?cursor={cursor}&seed_data_id=ds"),
        # a cursor forged to start past everything
        listed(globex, f"?cursor=999999999999999.{mine[0]}"),
    ]

    # Then it sees its own evaluation only, never one of acme's
    for page in seen:
        assert ids(page) == [theirs], page
        assert page["next_cursor"] is None
    assert ids(listed(acme, f"?cursor={cursor}")) == mine[1::-1]


def test_a_tenant_without_evaluations_gets_an_empty_list(acme: Tenant) -> None:
    assert listed(acme) == {"evaluations": [], "next_cursor": None}


# ---- bad parameters ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("limit=0", "limit: Input should be greater than or equal to 1"),
        ("limit=101", "limit: Input should be less than or equal to 100"),
        ("limit=-5", "limit: Input should be greater than or equal to 1"),
        ("limit=ten", "limit: Input should be a valid integer"),
        ("limit=2.5", "limit: Input should be a valid integer"),
        ("limit=", "limit: Input should be a valid integer"),
        ("cursor=", "pass the previous page's next_cursor as it is"),
        ("cursor=ev_abc", "is not one this list gave (<created_ms>.<eval_results_id>)"),
        ("cursor=1800000000001", "pass the previous page's next_cursor"),
        ("cursor=1800000000001.", "pass the previous page's next_cursor"),
        ("cursor=.ev_abc", "pass the previous page's next_cursor"),
        ("cursor=01800000000001.ev_abc", "pass the previous page's next_cursor"),
        ("cursor=1234567890123456.ev_abc", "pass the previous page's next_cursor"),
        ("cursor=-1.ev_abc", "pass the previous page's next_cursor"),
        ("cursor=1800000000001.ev%20abc", "pass the previous page's next_cursor"),
        ("cursor=1800000000001.ev_a%23R%23x", "pass the previous page's next_cursor"),
        ("cursor=1800000000001." + "x" * 129, "pass the previous page's next_cursor"),
        ("cursor=" + "9" * 5000, "or leave cursor out to start from the newest"),
        ("seed_data_id=", "seed_data_id '' is not valid: use 1-128 characters"),
        ("seed_data_id=a%20b", "seed_data_id 'a b' is not valid"),
        ("seed_data_id=a%23D%23b", "seed_data_id 'a#D#b' is not valid"),
        ("seed_data_id=" + "d" * 129, "is not valid: use 1-128 characters"),
        ("seed_data_id=latest", "seed_data_id 'latest' names no dataset: give the dataset's"),
        ("seed_data_id=pair", "seed_data_id 'pair' names no dataset"),
    ],
)
def test_a_bad_parameter_is_400_saying_what_to_fix(acme: Tenant, query: str, says: str) -> None:
    response = acme.get(f"/evaluations?{query}")

    assert response.status_code == 400, response.text
    assert says in response.json()["error"]


def test_the_function_takes_its_event_file(event_key: str) -> None:
    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    invoke(
        "specify_questions",
        with_body(load_event("specify_questions"), {"metrics": ["check:non_empty"]}),
    )
    results_id = invoke("evaluate", load_event("evaluate"))[1]["eval_results_id"]

    status, body = invoke("list_evaluations", load_event("list_evaluations"))

    assert status == 200, body
    assert [e["eval_results_id"] for e in body["evaluations"]] == [results_id]
    assert body["next_cursor"] is None
