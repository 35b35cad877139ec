"""moto in this process handles one request at a time (evalsvc_tools/local/inprocess.py): its
tables lose items put by threads that create one partition at once, so the `tables` fixture
and the benchmarks use it serialised; and the store's speed-ups to moto last as long as the
store that installed them."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import boto3
import pytest
from evalsvc_tools.local import fastpath
from evalsvc_tools.local.inprocess import is_serialised, moto_in_process, serialised
from evalsvc_tools.local.store import EmbeddedDynamoDB
from evalsvc_tools.local.tables import table_definitions
from moto import mock_aws
from moto.dynamodb.models.table import Table

THREADS = 8


def put_from_threads(mock: AbstractContextManager[Any], inside: Any) -> None:
    """PutItem from THREADS threads at once into a new table of `mock`, with `inside` run by
    moto for each put."""
    real = Table.put_item

    def watched(self: Table, *args: Any, **kwargs: Any) -> Any:
        inside()
        return real(self, *args, **kwargs)

    with mock, pytest.MonkeyPatch.context() as patch:
        patch.setattr(Table, "put_item", watched)
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(TableName="t", **table_definitions()["DatasetsTable"])
        statuses: list[int] = []

        def put(k: int) -> None:
            item = {"pk": {"S": "p"}, "sk": {"S": f"s{k}"}, "ord": {"S": f"{k}"}}
            answer = client.put_item(TableName="t", Item=item)
            statuses.append(answer["ResponseMetadata"]["HTTPStatusCode"])

        threads = [threading.Thread(target=put, args=(k,)) for k in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert statuses == [200] * THREADS
        assert len(client.scan(TableName="t")["Items"]) == THREADS


def test_plain_moto_lets_writers_in_at_once() -> None:
    # Two puts meet inside moto: nothing keeps a second writer out while one is in.
    met = threading.Barrier(2, timeout=30)
    first_two = iter(range(2))

    def meet() -> None:
        if next(first_two, None) is not None:
            met.wait()

    put_from_threads(mock_aws(), meet)


def test_serialised_moto_lets_one_request_in_at_a_time() -> None:
    inside = threading.Lock()
    overlaps: list[int] = []

    def alone() -> None:
        if not inside.acquire(blocking=False):
            overlaps.append(1)
            return
        try:
            # Let the other threads run now: any of them entering moto would find the lock held.
            for _ in range(100):
                threading.Event().wait(0.0001)
        finally:
            inside.release()

    put_from_threads(moto_in_process(), alone)
    assert overlaps == []
    assert not is_serialised()


def test_serialised_is_counted_and_undone() -> None:
    with serialised():
        with serialised():
            assert is_serialised()
        assert is_serialised()
    assert not is_serialised()


def test_the_tables_fixture_is_serialised_stock_moto(tables: dict[str, str]) -> None:
    assert is_serialised()
    assert not fastpath.installed()


@pytest.fixture
def stock_moto() -> Iterator[None]:
    assert not fastpath.installed()
    yield
    assert not fastpath.installed()


def test_a_store_patches_moto_while_it_runs(stock_moto: None, tmp_path: Path) -> None:
    with EmbeddedDynamoDB(tmp_path / "a", port=0):
        assert fastpath.installed()
        with EmbeddedDynamoDB(tmp_path / "b", port=0):
            assert fastpath.installed()
        # The second store's stop leaves the first one's speed-ups in place.
        assert fastpath.installed()
    assert not fastpath.installed()


def test_a_store_that_fails_to_start_leaves_moto_as_it_was(
    stock_moto: None, tmp_path: Path
) -> None:
    store = EmbeddedDynamoDB(tmp_path / "store", port=0)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store, "_load", lambda client: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            store.start()
    assert not fastpath.installed()


def test_install_and_uninstall_are_counted(stock_moto: None) -> None:
    assert fastpath.install()
    assert fastpath.install()
    fastpath.uninstall()
    assert fastpath.installed()
    fastpath.uninstall()
    assert not fastpath.installed()
    fastpath.uninstall()  # one too many does nothing
    assert not fastpath.installed()
