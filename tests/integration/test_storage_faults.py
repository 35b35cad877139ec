"""DynamoDB faults injected at the client boundary: throttling, unprocessed batch items,
cancelled transactions. The outcome is the correct final state, or the old state intact."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError
from evalsvc.core.settings import get_settings
from evalsvc.models.datasets import DatasetKind
from evalsvc.storage import datasets as store
from evalsvc.storage import dynamo
from evalsvc.storage.datasets import history

from tests import dataset_stream
from tests.integration.conftest import Tenant, ok

SEED = DatasetKind.SEED


def client_error(code: str, operation: str, **extra: Any) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": code}, **extra}, operation)


class FaultyClient:
    """The real client, except that `faults[operation]` decides, call by call, whether to fail
    (return an exception to raise) or to change the response (return a callable)."""

    def __init__(self, real: Any, faults: dict[str, Callable[[int, dict[str, Any]], Any]]) -> None:
        self.real = real
        self.faults = faults
        self.calls: dict[str, int] = {}

    def __getattr__(self, operation: str) -> Any:
        method = getattr(self.real, operation)
        fault = self.faults.get(operation)
        if fault is None:
            return method

        def call(**kwargs: Any) -> Any:
            count = self.calls[operation] = self.calls.get(operation, 0) + 1
            outcome = fault(count, kwargs)
            if isinstance(outcome, Exception):
                raise outcome
            response = method(**kwargs)
            return outcome(response, kwargs) if callable(outcome) else response

        return call


@pytest.fixture
def inject(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FaultyClient]:
    def install(**faults: Callable[[int, dict[str, Any]], Any]) -> FaultyClient:
        faulty = FaultyClient(dynamo.client(), faults)
        monkeypatch.setattr(dynamo, "client", lambda: faulty)
        return faulty

    return install


def pairs(n: int, tag: str) -> dict[str, Any]:
    return {
        "data": [{"id": f"{tag}{i}", "input": tag, "output": tag} for i in range(n)],
        "system_prompt": tag,
    }


@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "ThrottlingException"])
def test_throttling_that_persists_is_503_and_changes_nothing(
    acme: Tenant, inject: Callable[..., FaultyClient], code: str
) -> None:
    ok(acme.post("/data/seed/ds", pairs(3, "old")))
    inject(batch_write_item=lambda n, kw: client_error(code, "BatchWriteItem"))

    response = acme.post("/data/seed/ds", pairs(30, "new"))

    assert response.status_code == 503
    assert "nothing was changed" in response.json()["error"]
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["old0", "old1", "old2"]


def test_unprocessed_batch_items_are_retried_until_written(
    acme: Tenant, inject: Callable[..., FaultyClient]
) -> None:
    def leave_half_unprocessed(n: int, kwargs: dict[str, Any]) -> Any:
        if n > 3:
            return None
        ((table, requests),) = kwargs["RequestItems"].items()
        kept, left = requests[: len(requests) // 2], requests[len(requests) // 2 :]
        kwargs["RequestItems"] = {table: kept}

        def unprocessed(response: dict[str, Any], _: Any) -> dict[str, Any]:
            return {**response, "UnprocessedItems": {table: left}}

        return unprocessed

    faulty = inject(batch_write_item=leave_half_unprocessed)

    response = acme.post("/data/seed/ds", pairs(60, "p"))

    assert response.status_code == 200
    assert faulty.calls["batch_write_item"] > 3
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == [
        f"p{i}" for i in range(60)
    ]


def test_a_cancelled_commit_is_retried(acme: Tenant, inject: Callable[..., FaultyClient]) -> None:
    ok(acme.post("/data/seed/ds", pairs(2, "old")))
    cancelled = client_error(
        "TransactionCanceledException",
        "TransactWriteItems",
        CancellationReasons=[{"Code": "ConditionalCheckFailed"}, {"Code": "None"}],
    )
    faulty = inject(transact_write_items=lambda n, kw: cancelled if n == 1 else None)

    response = acme.post("/data/seed/ds", pairs(2, "new"))

    assert response.status_code == 200
    assert faulty.calls["transact_write_items"] == 2
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["new0", "new1"]


def test_a_pair_addition_meeting_a_committing_overwrite_is_retried(
    acme: Tenant, inject: Callable[..., FaultyClient]
) -> None:
    # The first append of a version marks its header; an overwrite's transaction holding the
    # header makes that mark conflict, twice
    ok(acme.post("/data/seed/ds", {"data": []}))
    conflict = client_error("TransactionConflictException", "UpdateItem")
    faulty = inject(update_item=lambda n, kw: conflict if n <= 2 else None)

    response = acme.post("/data/seed/ds/pair", {"id": "x", "input": "i", "output": "o"})

    assert response.status_code == 200
    assert faulty.calls["update_item"] >= 3
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["x"]


def test_throttled_reads_are_503_not_500(acme: Tenant, inject: Callable[..., FaultyClient]) -> None:
    ok(acme.post("/data/seed/ds", pairs(2, "p")))
    inject(query=lambda n, kw: client_error("ThrottlingException", "Query"))

    response = acme.get("/data/seed/ds")

    assert response.status_code == 503
    assert set(response.json()) == {"error"}


def test_an_unexpected_storage_error_is_500_with_no_detail(
    acme: Tenant, inject: Callable[..., FaultyClient]
) -> None:
    inject(get_item=lambda n, kw: client_error("InternalFailure", "GetItem") if n > 1 else None)

    response = acme.get("/data/seed/ds")

    assert response.status_code == 500
    assert response.json()["error"].startswith("internal error (request id")
    assert "InternalFailure" not in response.text


def _lost_answer(code: str, operation: str) -> Callable[[int, dict[str, Any]], Any]:
    """The first call goes through, then its answer is lost: the caller sees `code`."""

    def fault(n: int, kwargs: dict[str, Any]) -> Any:
        if n > 1:
            return None

        def lose(response: Any, _: Any) -> Any:
            raise client_error(code, operation)

        return lose

    return fault


@pytest.mark.parametrize("code", ["InternalServerError", "InternalFailure"])
def test_an_overwrite_whose_commit_succeeded_unanswered_keeps_the_new_dataset(
    acme: Tenant, inject: Callable[..., FaultyClient], tables: dict[str, str], code: str
) -> None:
    import boto3

    # Given a dataset, and a storage that commits the overwrite but loses the answer
    ok(acme.post("/data/seed/ds", pairs(3, "old")))
    faulty = inject(transact_write_items=_lost_answer(code, "TransactWriteItems"))

    # When the dataset is overwritten
    response = acme.post("/data/seed/ds", pairs(4, "new"))

    # Then the write stands: the new dataset reads whole, and the old version is kept,
    # recorded by the same transaction (with its append shards), not discarded
    assert faulty.calls["transact_write_items"] == 1
    assert response.status_code == 200, response.text
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == [
        f"new{i}" for i in range(4)
    ]

    def pair_keys() -> list[str]:
        items = boto3.client("dynamodb").scan(TableName=tables["EVALSVC_DATASETS_TABLE"])["Items"]
        return sorted(i["sk"]["S"] for i in items if i["sk"]["S"].startswith("p#"))

    assert pair_keys() == [f"p#new{i}" for i in range(4)] + [f"p#old{i}" for i in range(3)]
    (record,) = dataset_stream.records("acme", "ds")
    assert record.pairs == 3 and record.shards == 1
    assert record.append_shards == get_settings().dataset_shards
    kept = store.read_range("acme", SEED, "ds", history.stored(record), "0", "~", None)
    assert [p.id for p in kept] == [f"old{i}" for i in range(3)]

    # And when its retention ends, the purge removes it whole
    dataset_stream.expire_all("acme", "ds")
    assert pair_keys() == [f"p#new{i}" for i in range(4)]
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == [
        f"new{i}" for i in range(4)
    ]


def test_a_commit_that_failed_unanswered_still_keeps_the_old_dataset(
    acme: Tenant, inject: Callable[..., FaultyClient]
) -> None:
    # The answer is lost and the commit did not happen: the old dataset stays, nothing else
    ok(acme.post("/data/seed/ds", pairs(3, "old")))
    inject(transact_write_items=lambda n, kw: client_error("InternalFailure", "X"))

    response = acme.post("/data/seed/ds", pairs(4, "new"))

    assert response.status_code == 500
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["old0", "old1", "old2"]


def _pair_put(fault: Callable[[int, dict[str, Any]], Any]) -> Callable[[int, dict[str, Any]], Any]:
    """`fault`, applied only to the writes of pair items (numbered among themselves)."""
    seen = 0

    def on_pairs(n: int, kwargs: dict[str, Any]) -> Any:
        nonlocal seen
        if not kwargs.get("Item", {}).get("sk", {}).get("S", "").startswith("p#"):
            return None
        seen += 1
        return fault(seen, kwargs)

    return on_pairs


@pytest.mark.parametrize("code", ["InternalServerError", "InternalFailure"])
def test_a_pair_addition_that_succeeded_unanswered_is_a_success(
    acme: Tenant, inject: Callable[..., FaultyClient], code: str
) -> None:
    ok(acme.post("/data/seed/ds", pairs(1, "old")))
    inject(put_item=_pair_put(_lost_answer(code, "PutItem")))

    response = acme.post("/data/seed/ds/pair", {"id": "x", "input": "i", "output": "o"})

    assert response.status_code == 200, response.text
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["old0", "x"]
    # And the id is now taken: the same pair again is a 409, not a second copy
    again = acme.post("/data/seed/ds/pair", {"id": "x", "input": "i", "output": "o"})
    assert again.status_code == 409


def test_a_pair_addition_that_failed_unanswered_is_an_error_and_stores_nothing(
    acme: Tenant, inject: Callable[..., FaultyClient]
) -> None:
    ok(acme.post("/data/seed/ds", pairs(1, "old")))
    inject(put_item=_pair_put(lambda n, kw: client_error("InternalServerError", "PutItem")))

    response = acme.post("/data/seed/ds/pair", {"id": "x", "input": "i", "output": "o"})

    assert response.status_code == 503
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["old0"]


def test_a_pair_addition_racing_an_overwrite_ends_in_the_new_dataset(
    acme: Tenant, inject: Callable[..., FaultyClient]
) -> None:
    from evalsvc.models.datasets import DatasetKind, Pair
    from evalsvc.storage.datasets import get_header, write_dataset

    # Given an append whose pair is stored just as an overwrite installs a new version (and
    # discards the old one, with the pair in it)
    ok(acme.post("/data/seed/ds", pairs(2, "old")))

    def overwrite_after(n: int, kwargs: dict[str, Any]) -> Any:
        def overwrite(response: Any, _: Any) -> Any:
            if n == 1:
                new = [Pair(id=f"new{i}", input="i", output="o") for i in range(2)]
                write_dataset("acme", DatasetKind.SEED, "ds", new, "")
            return response

        return overwrite

    inject(put_item=_pair_put(overwrite_after))

    response = acme.post("/data/seed/ds/pair", {"id": "x", "input": "i", "output": "o"})

    # Then the append is not lost: it lands in the dataset as it now is
    assert response.status_code == 200, response.text
    assert [p["id"] for p in acme.get("/data/seed/ds").json()["data"]] == ["new0", "new1", "x"]
    header = get_header("acme", DatasetKind.SEED, "ds")
    assert header is not None and header.pair_count == 3


def test_an_evaluation_whose_commit_succeeded_unanswered_stays_readable(
    acme: Tenant, inject: Callable[..., FaultyClient]
) -> None:
    ok(acme.post("/data/seed/ds", pairs(3, "p")))
    ok(acme.post("/specify_questions", {"metrics": ["check:non_empty"]}))
    inject(transact_write_items=_lost_answer("InternalServerError", "TransactWriteItems"))

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    results_id = response.json()["eval_results_id"]
    stored = acme.get(f"/evaluation/{results_id}", params={"includeAllScores": "true"}).json()
    assert [p["pair_id"] for p in stored["all_scored_pairs"][0]] == ["p0", "p1", "p2"]
    assert stored["min_scoring_pairs"][0][0]["reason"] == "output is not empty"
