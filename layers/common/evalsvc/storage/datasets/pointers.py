"""The pointers that find a tenant's latest dataset of a kind and the seed dataset of a system
prompt."""

from __future__ import annotations

from evalsvc.models.datasets import (
    DatasetKind,
)
from evalsvc.storage import dynamo
from evalsvc.storage.datasets.keys import POINTER_SK, latest_pk, prompt_pk, table
from evalsvc.storage.dynamo import Item, get_s, n, s


def latest_dataset_id(tenant: str, kind: DatasetKind) -> str | None:
    item = dynamo.get_item(table(), {"pk": s(latest_pk(tenant, kind)), "sk": s(POINTER_SK)})
    return get_s(item, "dataset_id") if item else None


def dataset_id_for_prompt(tenant: str, system_prompt: str) -> str | None:
    key = {"pk": s(prompt_pk(tenant, system_prompt)), "sk": s(POINTER_SK)}
    item = dynamo.get_item(table(), key)
    return get_s(item, "dataset_id") if item else None


def latest_pointer(tenant: str, kind: DatasetKind, dataset_id: str, ms: int) -> Item:
    item = {"pk": s(latest_pk(tenant, kind)), "sk": s(POINTER_SK), "dataset_id": s(dataset_id)}
    return {"TableName": table(), "Item": {**item, "created_ms": n(ms)}}


def prompt_pointer(
    tenant: str,
    system_prompt: str,
    dataset_id: str,
    *,
    replacing: str | None = None,
    claim: bool = False,
) -> Item:
    put: Item = {
        "TableName": table(),
        "Item": {
            "pk": s(prompt_pk(tenant, system_prompt)),
            "sk": s(POINTER_SK),
            "dataset_id": s(dataset_id),
        },
    }
    if claim:
        if replacing is None:
            put["ConditionExpression"] = "attribute_not_exists(pk)"
        else:
            put["ConditionExpression"] = "attribute_not_exists(pk) OR dataset_id = :stale"
            put["ExpressionAttributeValues"] = {":stale": s(replacing)}
    return put
