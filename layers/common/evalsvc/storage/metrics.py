"""The metrics table: one item per metrics set, and a pointer to the tenant's newest set.

pk            sk                what
T#<tenant>    m#<metrics_id>    definitions, system prompt, created time
T#<tenant>    latest            the newest metrics set's id
"""

from __future__ import annotations

from evalsvc.models.metrics import MetricsSet
from evalsvc.settings import get_settings
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_list, get_n, get_s, n, s

LATEST_SK = "latest"


def _table() -> str:
    return get_settings().metrics_table


def _pk(tenant: str) -> str:
    return f"T#{tenant}"


def _from_item(tenant: str, item: Item) -> MetricsSet:
    return MetricsSet(
        tenant=tenant,
        metrics_id=get_s(item, "metrics_id") or "",
        definitions=get_list(item, "definitions"),
        system_prompt=get_s(item, "system_prompt", "") or "",
        created_ms=get_n(item, "created_ms"),
    )


def put(metrics: MetricsSet) -> None:
    """Store a new set and make it the tenant's latest, in one transaction."""
    item = {
        "pk": s(_pk(metrics.tenant)),
        "sk": s(f"m#{metrics.metrics_id}"),
        "metrics_id": s(metrics.metrics_id),
        "definitions": dynamo.ss_list(metrics.definitions),
        "system_prompt": s(metrics.system_prompt),
        "created_ms": n(metrics.created_ms),
    }
    pointer = {
        "pk": s(_pk(metrics.tenant)),
        "sk": s(LATEST_SK),
        "metrics_id": s(metrics.metrics_id),
        "created_ms": n(metrics.created_ms),
    }
    dynamo.call(
        "transact_write_items",
        TransactItems=[
            {
                "Put": {
                    "TableName": _table(),
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(sk)",
                }
            },
            {"Put": {"TableName": _table(), "Item": pointer}},
        ],
    )


def get(tenant: str, metrics_id: str) -> MetricsSet | None:
    item = dynamo.get_item(_table(), {"pk": s(_pk(tenant)), "sk": s(f"m#{metrics_id}")})
    return _from_item(tenant, item) if item else None


def latest_id(tenant: str) -> str | None:
    item = dynamo.get_item(_table(), {"pk": s(_pk(tenant)), "sk": s(LATEST_SK)})
    return get_s(item, "metrics_id") if item else None


def list_all(tenant: str) -> list[MetricsSet]:
    """Every metrics set of the tenant, oldest first."""
    sets = [
        _from_item(tenant, item)
        for item in dynamo.query_items(
            TableName=_table(),
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": s(_pk(tenant)), ":prefix": s("m#")},
            ConsistentRead=True,
        )
    ]
    return sorted(sets, key=lambda m: (m.created_ms, m.metrics_id))
