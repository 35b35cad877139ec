"""moto's answers are unchanged by the embedded store's speed-ups
(tools/evalsvc_tools/local/fastpath.py): the same writes, queries (pages, both directions, the
local index, projections, filters) and transactions, answered with and without them."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from evalsvc_tools.local import fastpath
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.tables import table_definitions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto.core import DEFAULT_ACCOUNT_ID
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models import table as table_module

texts = st.text(min_size=1, max_size=8)
values = st.recursive(
    st.one_of(
        texts.map(lambda s: {"S": s}),
        st.integers(-1000, 1000).map(lambda n: {"N": str(n)}),
        st.binary(min_size=1, max_size=6).map(lambda b: {"B": b}),
        st.booleans().map(lambda b: {"BOOL": b}),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda v: {"L": v}),
        st.dictionaries(texts, inner, max_size=3).map(lambda v: {"M": v}),
    ),
    max_leaves=6,
)
items = st.lists(
    st.fixed_dictionaries(
        {
            "pk": st.sampled_from(["a", "b", "c"]).map(lambda s: {"S": s}),
            "sk": texts.map(lambda s: {"S": s}),
            "ord": texts.map(lambda s: {"S": s}),
            "v": values,
            "n": st.integers(0, 9).map(lambda n: {"N": str(n)}),
        }
    ),
    max_size=25,
    unique_by=lambda item: (item["pk"]["S"], item["sk"]["S"]),
)


def strip(response: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


def every_page(client: Any, **kwargs: Any) -> list[dict[str, Any]]:
    pages = []
    while True:
        page = client.query(**kwargs)
        pages.append(strip(page))
        if "LastEvaluatedKey" not in page:
            if len(pages) > 1 and not pages[-1]["Items"]:
                # moto checks a page's size before its key condition, so a page can end at an
                # item the condition would not take, and the last page be empty; DynamoDB reads
                # only the key range. Either way the same items come in the same pages.
                pages.pop()
                del pages[-1]["LastEvaluatedKey"]
            return pages
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


DATASETS = table_definitions()["DatasetsTable"]
tables_made = itertools.count()


def answers(batch: list[dict[str, Any]], limit: int, pivot: str) -> list[Any]:
    """What moto answers to writes, queries and transactions on `batch` (in a new table of the
    template's datasets table's shape)."""
    client = boto3.client("dynamodb", region_name="us-east-1")
    table = f"fast-{next(tables_made)}"
    client.create_table(TableName=table, **DATASETS)
    # The store tracks its tables: page orders are kept between writes.
    model = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_table(table)
    fastpath.track(model)
    seen: list[Any] = []
    for item in batch:
        seen.append(strip(client.put_item(TableName=table, Item=item)))
        fastpath.changed(model)

    def queries() -> None:
        for pk in ("a", "b", "c"):
            key = {
                "KeyConditionExpression": "pk = :p",
                "ExpressionAttributeValues": {":p": {"S": pk}},
            }
            seen.append(every_page(client, TableName=table, Limit=limit, **key))
            seen.append(
                every_page(client, TableName=table, Limit=limit, ScanIndexForward=False, **key)
            )
            for condition, forward in [
                ("#o >= :o", True),
                ("#o < :o", False),
                ("#o = :o", True),
                ("#o BETWEEN :o AND :z", True),
                ("begins_with(#o, :o)", False),
            ]:
                seen.append(
                    every_page(
                        client,
                        TableName=table,
                        IndexName="by_order",
                        Limit=limit,
                        ScanIndexForward=forward,
                        KeyConditionExpression=f"pk = :p AND {condition}",
                        ExpressionAttributeNames={"#o": "ord"},
                        ExpressionAttributeValues={
                            ":p": {"S": pk},
                            ":o": {"S": pivot},
                            **({":z": {"S": pivot + "~"}} if ":z" in condition else {}),
                        },
                    )
                )
            seen.append(
                every_page(
                    client,
                    TableName=table,
                    Limit=limit,
                    KeyConditionExpression="pk = :p AND sk > :s",
                    ProjectionExpression="ord, n, m.x, v",
                    ExpressionAttributeValues={":p": {"S": pk}, ":s": {"S": pivot}},
                )
            )
            for condition, forward in [("begins_with(sk, :s)", False), ("sk <= :s", True)]:
                seen.append(
                    every_page(
                        client,
                        TableName=table,
                        ScanIndexForward=forward,
                        KeyConditionExpression=f"pk = :p AND {condition}",
                        ProjectionExpression="sk, n",
                        ExpressionAttributeValues={":p": {"S": pk}, ":s": {"S": pivot[:1]}},
                    )
                )
            seen.append(
                every_page(
                    client,
                    TableName=table,
                    ProjectionExpression="sk, v",
                    FilterExpression="n > :n",
                    ExpressionAttributeValues={":p": {"S": pk}, ":n": {"N": "4"}},
                    KeyConditionExpression="pk = :p",
                )
            )

    queries()
    for item in batch[:3]:
        key = {"pk": item["pk"], "sk": item["sk"]}
        seen.append(strip(client.get_item(TableName=table, Key=key)))
        try:
            client.transact_write_items(
                TransactItems=[
                    {
                        "Update": {
                            "TableName": table,
                            "Key": key,
                            "UpdateExpression": "SET n = :z",
                            "ExpressionAttributeValues": {":z": {"N": "0"}},
                        }
                    },
                    {
                        "Put": {
                            "TableName": table,
                            "Item": {**key, "sk": {"S": "new" + item["sk"]["S"]}},
                            "ConditionExpression": "attribute_not_exists(pk)",
                        }
                    },
                    {
                        "ConditionCheck": {
                            "TableName": table,
                            "Key": key,
                            "ConditionExpression": "n = :big",
                            "ExpressionAttributeValues": {":big": {"N": "99"}},
                        }
                    },
                ]
            )
            seen.append("committed")
        except ClientError as exc:
            seen.append(exc.response["Error"]["Code"])
        fastpath.changed(model)
    queries()  # after the transactions: the pages see what they changed
    seen.append(sorted(map(repr, client.scan(TableName=table)["Items"])))
    return seen


@pytest.fixture(scope="module")
def moto_as_is() -> Iterator[None]:
    """moto in this process, unpatched (each test installs the speed-ups for its second run)."""
    assert not fastpath.installed()
    with moto_in_process():
        yield
    assert not fastpath.installed()


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batch=items,
    limit=st.integers(1, 7),
    pivot=texts,
    page_bytes=st.sampled_from([table_module.RESULT_SIZE_LIMIT, 450, 900]),
)
def test_the_speed_ups_answer_as_moto_does(
    moto_as_is: None, batch: list[dict[str, Any]], limit: int, pivot: str, page_bytes: int
) -> None:
    # Small page sizes make pages end at their size, not only at their Limit (still larger than
    # any one item here: moto fails on an item larger than a page, as DynamoDB's 400 KB never is).
    usual = table_module.RESULT_SIZE_LIMIT
    table_module.RESULT_SIZE_LIMIT = page_bytes
    try:
        expected = answers(batch, limit, pivot)
        assert fastpath.install()
        try:
            assert answers(batch, limit, pivot) == expected
        finally:
            fastpath.uninstall()
    finally:
        table_module.RESULT_SIZE_LIMIT = usual


def item_size_answers() -> list[str]:
    """What moto answers to items around its 400 KB limit, built of several attributes."""
    client = boto3.client("dynamodb", region_name="us-east-1")
    table = f"fast-{next(tables_made)}"
    client.create_table(TableName=table, **DATASETS)
    seen = []
    for total in (404_000, 404_990, 405_010, 420_000):
        item: dict[str, Any] = {"pk": {"S": "p"}, "sk": {"S": str(total)}}
        filler = total - 2 * len("pk") - len("p") - len("sk") - len(str(total))
        for k in range(4):  # four attributes "a0".."a3" sharing what is left
            item[f"a{k}"] = {"S": "x" * (filler // 4 - 2)}
        try:
            client.put_item(TableName=table, Item=item)
            seen.append("stored")
        except ClientError as exc:
            seen.append(exc.response["Error"]["Message"])
    return seen


def test_the_item_size_limit_is_checked_as_moto_checks_it(moto_as_is: None) -> None:
    expected = item_size_answers()
    assert fastpath.install()
    try:
        assert item_size_answers() == expected
    finally:
        fastpath.uninstall()
    assert "stored" in expected and len(set(expected)) == 2  # both sides of the limit were tried
