"""The datasets table's stream as the purge of expired versions sees it. moto has neither TTL
nor streams: a test removes a version record itself, as TTL would, and hands the purge's
handler the record the stream would send (events/purge_versions.json, its image replaced).

What stands for DynamoDB here reads and deletes through a client of its own, not the
service's, so tests that record the service's calls (test_granted_calls.py) see only the
purge's."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import boto3
from evalsvc.models.datasets import DatasetKind, VersionRecord
from evalsvc.storage.datasets import history, keys

from tests.lambda_support import LambdaContext, handler_of, load_event

SEED = DatasetKind.SEED


def _client() -> Any:
    return boto3.client("dynamodb", region_name="us-east-1")


def records(tenant: str, dataset_id: str, kind: DatasetKind = SEED) -> list[VersionRecord]:
    """The records of the dataset's kept versions, newest first."""
    response = _client().query(
        TableName=keys.table(),
        KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues={
            ":pk": {"S": keys.dataset_pk(tenant, kind, dataset_id)},
            ":prefix": {"S": history.RECORD_PREFIX},
        },
        ScanIndexForward=False,
        ConsistentRead=True,
    )
    assert "LastEvaluatedKey" not in response
    return [history.record_from_item(item) for item in response["Items"]]


def record_item(
    tenant: str, dataset_id: str, record: VersionRecord, kind: DatasetKind = SEED
) -> dict[str, Any]:
    """The item of `record`, as stored."""
    key = {
        "pk": {"S": keys.dataset_pk(tenant, kind, dataset_id)},
        "sk": {"S": history.record_sk(record.created_ms, record.version)},
    }
    item: dict[str, Any] = _client().get_item(TableName=keys.table(), Key=key)["Item"]
    return item


def version_items(
    tenant: str, dataset_id: str, version: str, kind: DatasetKind = SEED
) -> list[dict[str, Any]]:
    """Every item of a version: under its own key (one written shard) or its shards' keys."""
    key = keys.version_pk(tenant, kind, dataset_id, version)
    pages = _client().get_paginator("scan").paginate(TableName=keys.table())
    return [
        item
        for page in pages
        for item in page["Items"]
        if item["pk"]["S"] == key or item["pk"]["S"].startswith(key + "#")
    ]


@dataclass
class Stream:
    """Records of the datasets table's stream, numbered as the stream numbers them."""

    sequence: int = 4421584500000000017450439100

    def removal(self, item: dict[str, Any], *, by_ttl: bool = True) -> dict[str, Any]:
        """The stream's record of `item`'s removal (by TTL, or by a caller)."""
        record: dict[str, Any]
        (record,) = copy.deepcopy(load_event("purge_versions")["Records"])
        self.sequence += 1
        record["eventID"] = f"{self.sequence:032x}"
        record["dynamodb"]["SequenceNumber"] = str(self.sequence)
        record["dynamodb"]["Keys"] = {"pk": item["pk"], "sk": item["sk"]}
        record["dynamodb"]["OldImage"] = item
        if not by_ttl:
            del record["userIdentity"]
        return record

    def expire(
        self, tenant: str, dataset_id: str, record: VersionRecord, kind: DatasetKind = SEED
    ) -> dict[str, Any]:
        """What TTL does when `record` expires: the item goes, and the stream records that."""
        item = record_item(tenant, dataset_id, record, kind)
        key = {"pk": item["pk"], "sk": item["sk"]}
        _client().delete_item(TableName=keys.table(), Key=key)
        return self.removal(item)


@dataclass
class PurgeContext(LambdaContext):
    """An invocation of the purge (its timeout is 15 minutes), `left_ms` from its end."""

    left_ms: int = 900_000

    def get_remaining_time_in_millis(self) -> int:
        return self.left_ms


def purge(*removals: dict[str, Any], context: Any = None) -> list[str]:
    """Deliver a batch of stream records to the purge; the sequence numbers it failed."""
    event = {"Records": list(removals)}
    response = handler_of("purge_versions")(event, context or PurgeContext())
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]]


def sequence(removal: dict[str, Any]) -> str:
    return str(removal["dynamodb"]["SequenceNumber"])


def expire_all(tenant: str, dataset_id: str, kind: DatasetKind = SEED) -> list[VersionRecord]:
    """Every kept version of the dataset reaches the end of its retention and is purged (as
    one batch of the stream, none failing); their records."""
    stream = Stream()
    expired = records(tenant, dataset_id, kind)
    assert purge(*[stream.expire(tenant, dataset_id, r, kind) for r in expired]) == []
    return expired
