"""moto's answers are unchanged by the embedded store's speed-ups
(tools/evalsvc_tools/local/fastpath/): the same writes, queries (pages, both directions, the
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
from evalsvc_tools.local.item_images import load_item
from evalsvc_tools.local.journal import binary_values
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


# ---- global secondary indexes --------------------------------------------------------------

CRITIQUES = table_definitions()["CritiquesTable"]  # by_metrics_set: mpk, msk (S); INCLUDE
JOBS = table_definitions()["JobsTable"]  # stalled: sweep (S), progress_ms (N); KEYS_ONLY
maybe = st.one_of(st.none(), st.just(True))
index_items = st.lists(
    st.fixed_dictionaries(
        {
            "pk": st.sampled_from(["a", "b", "c"]).map(lambda s: {"S": s}),
            "sk": texts.map(lambda s: {"S": s}),
            # Either index key may be missing: such items are in no partition of the index.
            "mpk": st.sampled_from([None, "m", "m", "m", "n"]).map(lambda s: s and {"S": s}),
            "msk": st.one_of(
                st.none(), texts.map(lambda s: {"S": s}), texts.map(lambda s: {"S": s})
            ),
            "sweep": st.sampled_from([None, "due", "due"]).map(lambda s: s and {"S": s}),
            "progress_ms": st.one_of(
                st.none(), *[st.integers(-50, 50).map(lambda n: {"N": str(n)})] * 2
            ),
            "score": st.integers(1, 5).map(lambda n: {"N": str(n)}),
            "vote": st.integers(-1, 1).map(lambda n: {"N": str(n)}),
            "source": st.sampled_from(["audit", "review"]).map(lambda s: {"S": s}),
            "v": values,
        }
    ).map(lambda item: {k: v for k, v in item.items() if v is not None}),
    min_size=1,
    max_size=25,
    unique_by=lambda item: (item["pk"]["S"], item["sk"]["S"]),
)


def global_answers(
    batch: list[dict[str, Any]], limit: int, pivot: str, writes: list[dict[str, Any]]
) -> list[Any]:
    """What moto answers to paged queries of the two global indexes of the template (votes by
    metrics set, stalled jobs) over `batch`, with `writes` made between the pages of some."""
    client = boto3.client("dynamodb", region_name="us-east-1")
    name = f"fast-{next(tables_made)}"
    jobs_keys = [a for a in JOBS["AttributeDefinitions"] if a["AttributeName"] not in ("pk", "sk")]
    definition = {
        **CRITIQUES,
        "AttributeDefinitions": CRITIQUES["AttributeDefinitions"] + jobs_keys,
        "GlobalSecondaryIndexes": [
            *CRITIQUES["GlobalSecondaryIndexes"],
            *JOBS["GlobalSecondaryIndexes"],
        ],
    }
    client.create_table(TableName=name, **definition)
    model = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].get_table(name)
    fastpath.track(model)
    seen: list[Any] = []
    for item in batch:
        seen.append(strip(client.put_item(TableName=name, Item=item)))
        fastpath.changed(model)
    pending = list(writes)

    def write_between_pages() -> None:
        if pending:
            write = pending.pop(0)
            if "Key" in write:
                client.delete_item(TableName=name, **write)
            else:
                client.put_item(TableName=name, **write)
            fastpath.changed(model)

    def pages(between: bool, **kwargs: Any) -> list[dict[str, Any]]:
        found = []
        while True:
            page = client.query(TableName=name, **kwargs)
            found.append(strip(page))
            if "LastEvaluatedKey" not in page:
                return found
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            if between:
                write_between_pages()

    for mpk in ("m", "n", "absent"):
        key = {
            "IndexName": "by_metrics_set",
            "ExpressionAttributeValues": {":p": {"S": mpk}},
            "KeyConditionExpression": "mpk = :p",
        }
        for forward in (True, False):
            seen.append(pages(False, Limit=limit, ScanIndexForward=forward, **key))
        seen.append(pages(True, Limit=limit, **key))  # writes between the pages
        for condition, forward in [
            ("msk >= :o", True),
            ("msk < :o", False),
            ("msk = :o", True),
            ("msk BETWEEN :o AND :z", False),
            ("begins_with(msk, :o)", True),
        ]:
            seen.append(
                pages(
                    False,
                    IndexName="by_metrics_set",
                    Limit=limit,
                    ScanIndexForward=forward,
                    KeyConditionExpression=f"mpk = :p AND {condition}",
                    ExpressionAttributeValues={
                        ":p": {"S": mpk},
                        ":o": {"S": pivot},
                        **({":z": {"S": pivot + "~"}} if ":z" in condition else {}),
                    },
                )
            )
        seen.append(
            pages(
                False,
                IndexName="by_metrics_set",
                Limit=limit,
                KeyConditionExpression="mpk = :p",
                FilterExpression="#s = :audit",
                ProjectionExpression="msk, score, #s",
                ExpressionAttributeNames={"#s": "source"},
                ExpressionAttributeValues={":p": {"S": mpk}, ":audit": {"S": "audit"}},
            )
        )
        seen.append(
            pages(
                True,
                IndexName="by_metrics_set",
                ScanIndexForward=False,
                KeyConditionExpression="mpk = :p",
                FilterExpression="vote > :zero",
                ExpressionAttributeValues={":p": {"S": mpk}, ":zero": {"N": "0"}},
            )
        )
    for condition, forward in [("", True), (" AND progress_ms < :t", False)]:
        for between in (False, True):
            seen.append(
                pages(
                    between,
                    IndexName="stalled",
                    Limit=limit,
                    ScanIndexForward=forward,
                    KeyConditionExpression="sweep = :due" + condition,
                    ExpressionAttributeValues={
                        ":due": {"S": "due"},
                        **({":t": {"N": str(len(pivot) * 7 - 20)}} if condition else {}),
                    },
                )
            )
    seen.append(sorted(map(repr, client.scan(TableName=name)["Items"])))
    return seen


index_writes = st.lists(
    st.one_of(
        # A put: a new vote, or one replacing a stored one (it may move in the index, or leave it)
        index_items.filter(bool).map(lambda items: {"Item": items[0]}),
        st.fixed_dictionaries(
            {
                "Key": st.fixed_dictionaries(
                    {
                        "pk": st.sampled_from(["a", "b", "c"]).map(lambda s: {"S": s}),
                        "sk": texts.map(lambda s: {"S": s}),
                    }
                )
            }
        ),
    ),
    max_size=6,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    batch=index_items,
    limit=st.integers(1, 4),
    pivot=texts,
    page_bytes=st.sampled_from([table_module.RESULT_SIZE_LIMIT, 450, 900]),
    writes=index_writes,
    data=st.data(),
)
def test_global_index_queries_answer_as_moto_does(
    moto_as_is: None,
    batch: list[dict[str, Any]],
    limit: int,
    pivot: str,
    page_bytes: int,
    writes: list[dict[str, Any]],
    data: st.DataObject,
) -> None:
    # Some deletes name stored items (others name none).
    for k, write in enumerate(writes):
        if "Key" in write and batch and data.draw(st.booleans()):
            stored = data.draw(st.sampled_from(batch))
            writes[k] = {"Key": {"pk": stored["pk"], "sk": stored["sk"]}}
    usual = table_module.RESULT_SIZE_LIMIT
    table_module.RESULT_SIZE_LIMIT = page_bytes
    try:
        expected = global_answers(batch, limit, pivot, writes)
        assert fastpath.install()
        try:
            assert global_answers(batch, limit, pivot, writes) == expected
        finally:
            fastpath.uninstall()
    finally:
        table_module.RESULT_SIZE_LIMIT = usual


# ---- loading at start ----------------------------------------------------------------------


def moto_state(table: Any) -> list[Any]:
    """Everything moto holds of a table's items: keys as it indexes them, attributes as
    typed values, in its order."""
    return [
        (hash_key, range_key, item.hash_key, item.range_key, dict(item.attrs), type(item.attrs))
        for hash_key, partition in table.items.items()
        for range_key, item in partition.items()
    ]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=items, again=items)
def test_an_image_loaded_at_start_is_what_a_put_leaves(
    moto_as_is: None, batch: list[dict[str, Any]], again: list[dict[str, Any]]
) -> None:
    client = boto3.client("dynamodb", region_name="us-east-1")
    backend = dynamodb_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
    made = []
    for _ in range(2):
        name = f"fast-{next(tables_made)}"
        client.create_table(TableName=name, **DATASETS)
        made.append(backend.get_table(name))
    put, loaded = made
    for item in batch + again:  # `again` replaces some of `batch`
        put.put_item(binary_values(item), overwrite=True)
        load_item(loaded, binary_values(item))
    assert moto_state(loaded) == moto_state(put)
    assert sorted(map(repr, client.scan(TableName=loaded.name)["Items"])) == sorted(
        map(repr, client.scan(TableName=put.name)["Items"])
    )
