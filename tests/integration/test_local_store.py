"""The embedded store: moto's answers unchanged by its speed-ups, every kind of write kept across
a restart, and a journal that cannot be written refusing writes without losing any."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from evalsvc_tools.local import journal as journal_module
from evalsvc_tools.local.store import EmbeddedDynamoDB

# ---- the store keeps every kind of write ----------------------------------------------------


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


def scan_all(store: EmbeddedDynamoDB) -> dict[str, list[str]]:
    client = store.client()
    return {
        var: sorted(repr(item) for item in client.scan(TableName=name)["Items"])
        for var, name in store.tables.items()
    }


def test_every_kind_of_write_is_there_after_a_restart(data_dir: Path) -> None:
    with EmbeddedDynamoDB(data_dir, port=0) as store:
        client, table = store.client(), store.tables["EVALSVC_DATASETS_TABLE"]
        key = {"pk": {"S": "p"}, "sk": {"S": "a"}}
        client.put_item(TableName=table, Item={**key, "ord": {"S": "1"}, "b": {"B": b"\x00\x01"}})
        client.update_item(
            TableName=table,
            Key=key,
            UpdateExpression="SET m = :m ADD n :one",
            ExpressionAttributeValues={":m": {"M": {"x": {"L": [{"S": "y"}]}}}, ":one": {"N": "1"}},
        )
        client.batch_write_item(
            RequestItems={
                table: [
                    {"PutRequest": {"Item": {"pk": {"S": "p"}, "sk": {"S": f"b{k}"}}}}
                    for k in range(30 // 2)
                ]
            }
        )
        client.delete_item(TableName=table, Key={"pk": {"S": "p"}, "sk": {"S": "b3"}})
        client.transact_write_items(
            TransactItems=[
                {"Put": {"TableName": table, "Item": {"pk": {"S": "t"}, "sk": {"S": "1"}}}},
                {"Delete": {"TableName": table, "Key": {"pk": {"S": "p"}, "sk": {"S": "b4"}}}},
            ]
        )
        with pytest.raises(ClientError, match="TransactionCanceled"):
            client.transact_write_items(
                TransactItems=[
                    {"Put": {"TableName": table, "Item": {"pk": {"S": "t"}, "sk": {"S": "2"}}}},
                    {
                        "Put": {
                            "TableName": table,
                            "Item": {"pk": {"S": "t"}, "sk": {"S": "1"}},
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                ]
            )
        before = scan_all(store)

    with EmbeddedDynamoDB(data_dir, port=0) as store:
        assert scan_all(store) == before
        item = store.client().get_item(TableName=store.tables["EVALSVC_DATASETS_TABLE"], Key=key)[
            "Item"
        ]
        assert item["b"] == {"B": b"\x00\x01"} and item["n"] == {"N": "1"}
        assert "t" in repr(before) and "'sk': {'S': '2'}" not in repr(
            before["EVALSVC_DATASETS_TABLE"]
        )


def test_a_journal_that_cannot_be_written_refuses_the_write_and_keeps_reads(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with EmbeddedDynamoDB(data_dir, port=0) as store:
        client, table = store.client(), store.tables["EVALSVC_DATASETS_TABLE"]
        kept = {"pk": {"S": "p"}, "sk": {"S": "kept"}}
        client.put_item(TableName=table, Item=kept)

        def full(fd: int, data: Any) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        monkeypatch.setattr(journal_module.os, "write", full)
        refused = {"pk": {"S": "p"}, "sk": {"S": "refused"}}
        with pytest.raises(ClientError) as failure:
            client.put_item(TableName=table, Item=refused)
        with pytest.raises(ClientError):
            client.update_item(
                TableName=table,
                Key=kept,
                UpdateExpression="SET x = :x",
                ExpressionAttributeValues={":x": {"S": "refused"}},
            )

        error = failure.value.response["Error"]
        assert error["Code"] == "ServiceUnavailable"
        assert str(data_dir) in error["Message"] and "No space left" in error["Message"]
        assert "Item" not in client.get_item(TableName=table, Key=refused)
        assert client.get_item(TableName=table, Key=kept)["Item"] == kept  # the update undone

        monkeypatch.undo()
        client.put_item(TableName=table, Item={"pk": {"S": "p"}, "sk": {"S": "later"}})

    with EmbeddedDynamoDB(data_dir, port=0) as store:
        client = store.client()
        found = client.query(
            TableName=store.tables["EVALSVC_DATASETS_TABLE"],
            KeyConditionExpression="pk = :p",
            ExpressionAttributeValues={":p": {"S": "p"}},
        )["Items"]
        assert [item["sk"]["S"] for item in found] == ["kept", "later"]
        assert "x" not in found[0]


def test_a_data_directory_that_cannot_be_created_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")

    with pytest.raises(
        journal_module.StoreFileError, match=f"cannot use the data directory {blocker}/data"
    ):
        EmbeddedDynamoDB(blocker / "data", port=0).start()


def without_metadata(value: Any) -> Any:
    return {k: v for k, v in value.items() if k != "ResponseMetadata"}


def test_calls_made_in_process_answer_as_calls_over_http(data_dir: Path) -> None:
    with EmbeddedDynamoDB(data_dir, port=0) as store:
        over_http = store.client()  # made before the hook: it goes over HTTP
        store.attach_in_process()
        try:
            direct = boto3.client(
                "dynamodb",
                endpoint_url=store.endpoint,
                region_name="us-east-1",
                aws_access_key_id="local",
                aws_secret_access_key="local",
            )
            table = store.tables["EVALSVC_DATASETS_TABLE"]
            for k in range(30):
                direct.put_item(
                    TableName=table,
                    Item={
                        "pk": {"S": "p"},
                        "sk": {"S": f"{k:02d}"},
                        "ord": {"S": f"{30 - k:02d}"},
                        "b": {"B": bytes([k, 0, 255])},
                        "bs": {"BS": [b"\x01", bytes([k + 2])]},
                        "m": {"M": {"B": {"S": "not binary"}, "n": {"N": str(k)}}},
                    },
                )
            key = {"pk": {"S": "p"}, "sk": {"S": "03"}}
            calls: list[tuple[str, dict[str, Any]]] = [
                ("get_item", {"TableName": table, "Key": key}),
                ("get_item", {"TableName": table, "Key": {**key, "sk": {"S": "missing"}}}),
                (
                    "query",
                    {
                        "TableName": table,
                        "IndexName": "by_order",
                        "KeyConditionExpression": "pk = :p",
                        "ExpressionAttributeValues": {":p": {"S": "p"}},
                        "Limit": 7,
                    },
                ),
                ("batch_get_item", {"RequestItems": {table: {"Keys": [key]}}}),
            ]
            for operation, kwargs in calls:
                mine = getattr(direct, operation)(**kwargs)
                assert "date" not in mine["ResponseMetadata"]["HTTPHeaders"]  # not over HTTP
                assert without_metadata(mine) == without_metadata(
                    getattr(over_http, operation)(**kwargs)
                )
            conditional = {
                "TableName": table,
                "Item": {**key, "x": {"S": "y"}},
                "ConditionExpression": "attribute_not_exists(pk)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
            }
            cancelled = {
                "TransactItems": [
                    {"Put": conditional},
                    {"Delete": {"TableName": table, "Key": {**key, "sk": {"S": "04"}}}},
                ]
            }
            for operation, kwargs in [
                ("put_item", conditional),
                ("transact_write_items", cancelled),
            ]:
                errors = []
                for client in (direct, over_http):
                    with pytest.raises(ClientError) as raised:
                        getattr(client, operation)(**kwargs)
                    errors.append(without_metadata(raised.value.response))
                assert errors[0] == errors[1]
        finally:
            store.detach_in_process()


def test_a_table_made_through_the_store_and_its_binary_keys_survive_a_restart(
    data_dir: Path,
) -> None:
    with EmbeddedDynamoDB(data_dir, port=0) as store:
        client = store.client()
        client.create_table(
            TableName="extra",
            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "B"}],
            KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
        )
        for key in (b"\x00kept", b"\xffgone"):
            client.put_item(TableName="extra", Item={"k": {"B": key}, "v": {"S": "x"}})
        client.delete_item(TableName="extra", Key={"k": {"B": b"\xffgone"}})

    with EmbeddedDynamoDB(data_dir, port=0) as store:
        items = store.client().scan(TableName="extra")["Items"]
        assert items == [{"k": {"B": b"\x00kept"}, "v": {"S": "x"}}]


def test_a_journal_that_outgrows_its_snapshot_is_compacted_while_writes_go_on(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc_tools.local import store as store_module
    from evalsvc_tools.local.journal import SNAPSHOT, segments

    monkeypatch.setattr(store_module, "COMPACT_MIN_BYTES", 20_000)
    with EmbeddedDynamoDB(data_dir, port=0) as store:
        client, table = store.client(), store.tables["EVALSVC_DATASETS_TABLE"]

        def put(k: int) -> None:
            item = {"pk": {"S": "p"}, "sk": {"S": f"{k:04d}"}, "v": {"S": "v" * 200}}
            client.put_item(TableName=table, Item=item)

        for k in range(150):  # about 40 KB of journal: past the threshold
            put(k)
        deadline = time.monotonic() + 60
        while not (data_dir / SNAPSHOT).exists() and time.monotonic() < deadline:
            put(1000)  # a flush is when the journal looks at its size
            time.sleep(0.05)
        assert (data_dir / SNAPSHOT).exists()
        client.delete_item(TableName=table, Key={"pk": {"S": "p"}, "sk": {"S": "0000"}})
        for k in range(150, 160):
            put(k)
        while len(segments(data_dir)) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)  # the compacted segments are removed once the snapshot is in place
        before = scan_all(store)

    assert len(segments(data_dir)) == 1  # the one written after the snapshot
    with EmbeddedDynamoDB(data_dir, port=0) as store:
        assert scan_all(store) == before
        assert 0 < store.replay.items < len(before["EVALSVC_DATASETS_TABLE"]) + 1
        keys = [k for k in before["EVALSVC_DATASETS_TABLE"] if "'0000'" in k]
        assert keys == []


def test_4_byte_text_is_kept_and_a_put_moto_refuses_leaves_nothing_behind(
    data_dir: Path,
) -> None:
    item = {"pk": {"S": "p"}, "sk": {"S": "\U0001f600"}, "v": {"S": "\U0001f600" * 90_000}}
    refused = {"pk": {"S": "p"}, "sk": {"S": "lone \ud800"}}  # not UTF-8: moto cannot store it
    with EmbeddedDynamoDB(data_dir, port=0) as store:
        client, table = store.client(), store.tables["EVALSVC_DATASETS_TABLE"]
        client.put_item(TableName=table, Item=item)
        with pytest.raises(ClientError):
            client.put_item(TableName=table, Item=refused)
        before = scan_all(store)

    with EmbeddedDynamoDB(data_dir, port=0) as store:
        assert scan_all(store) == before
        assert before["EVALSVC_DATASETS_TABLE"] == [repr(item)]
