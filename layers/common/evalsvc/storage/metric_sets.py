"""The metrics table: one item per metrics set, and a pointer to the tenant's newest set.

pk            sk                what
T#<tenant>    m#<metrics_id>    definitions, system prompt, created time
T#<tenant>    latest            the newest metrics set's id; `sets` and `sets_bytes`: how many
                                sets the tenant has and their text (known before listing them)

Long definitions or a long system prompt (fifty 2,000-character definitions are 400 KB in
4-byte UTF-8 on their own) are kept apart, in storage.texts, so every item stays small.
"""

from __future__ import annotations

from typing import Any

from evalsvc.core.settings import get_settings
from evalsvc.models.datasets import text_bytes
from evalsvc.models.metric_sets import MetricsSet
from evalsvc.storage import dynamo, texts
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
        definitions=texts.read_list(_table(), tenant, item, "definitions"),
        system_prompt=texts.read_text(_table(), tenant, item, "system_prompt"),
        created_ms=get_n(item, "created_ms"),
        judges=get_list(item, "judges") if "judges" in item else None,
        jury="median" if get_s(item, "jury") == "median" else "mean",
    )


def set_bytes(metrics: MetricsSet) -> int:
    """The text a set adds to a list of sets: its id, definitions and system prompt."""
    values = [metrics.metrics_id, metrics.system_prompt, *metrics.definitions]
    return sum(text_bytes(t) for t in values)


def put(metrics: MetricsSet) -> None:
    """Store a new set and make it the tenant's latest (adding its size to the tenant's), in
    one transaction."""
    item = {
        "pk": s(_pk(metrics.tenant)),
        "sk": s(f"m#{metrics.metrics_id}"),
        "metrics_id": s(metrics.metrics_id),
        **texts.list_field(_table(), metrics.tenant, "definitions", metrics.definitions),
        **texts.text_field(_table(), metrics.tenant, "system_prompt", metrics.system_prompt),
        "created_ms": n(metrics.created_ms),
    }
    if metrics.judges:
        # E13: the jury (at most 5 names of 256 characters).
        item["judges"] = dynamo.ss_list(metrics.judges)
        item["jury"] = s(metrics.jury)
    pointer = {
        "TableName": _table(),
        "Key": {"pk": s(_pk(metrics.tenant)), "sk": s(LATEST_SK)},
        "UpdateExpression": (
            "SET metrics_id = :id, created_ms = :ms ADD sets_bytes :bytes, #sets :one"
        ),
        "ExpressionAttributeNames": {"#sets": "sets"},
        "ExpressionAttributeValues": {
            ":id": s(metrics.metrics_id),
            ":ms": n(metrics.created_ms),
            ":bytes": n(set_bytes(metrics)),
            ":one": n(1),
        },
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
            {"Update": pointer},
        ],
    )


def get(tenant: str, metrics_id: str) -> MetricsSet | None:
    item = dynamo.get_item(_table(), {"pk": s(_pk(tenant)), "sk": s(f"m#{metrics_id}")})
    return _from_item(tenant, item) if item else None


def latest_id(tenant: str) -> str | None:
    item = dynamo.get_item(_table(), {"pk": s(_pk(tenant)), "sk": s(LATEST_SK)})
    return get_s(item, "metrics_id") if item else None


# What listing a set adds to its texts: keys, quotes, its count and creation time.
LISTED_SET_BYTES = 120


def listed_bytes(tenant: str) -> int:
    """What listing every metrics set of the tenant takes (0 with none; sets stored before
    the count was kept are not in it)."""
    item = dynamo.get_item(_table(), {"pk": s(_pk(tenant)), "sk": s(LATEST_SK)})
    if item is None:
        return 0
    return get_n(item, "sets_bytes") + get_n(item, "sets") * LISTED_SET_BYTES


def _listed_set_bytes(item: Item) -> int:
    kept_apart = texts.list_bytes(item, "definitions") + texts.field_bytes(item, "system_prompt")
    return dynamo.item_size(item) + kept_apart + LISTED_SET_BYTES


def _query(tenant: str) -> dict[str, Any]:
    return {
        "TableName": _table(),
        "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
        "ExpressionAttributeValues": {":pk": s(_pk(tenant)), ":prefix": s("m#")},
        "ConsistentRead": True,
    }


def list_all(tenant: str, max_bytes: int) -> list[MetricsSet] | None:
    """Every metrics set of the tenant, oldest first; None as soon as they take more than
    `max_bytes` (the rest is not read)."""
    items, more = dynamo.query_bounded(
        max_items=None, max_bytes=max_bytes, size=_listed_set_bytes, **_query(tenant)
    )
    if more:
        return None
    sets = [_from_item(tenant, item) for item in items]
    return sorted(sets, key=lambda m: (m.created_ms, m.metrics_id))


def page(
    tenant: str, after: str, limit: int, max_bytes: int
) -> tuple[list[MetricsSet], str | None]:
    """Metrics sets in id order after id `after` ("" from the first), at most `limit` and no
    more than make `max_bytes` (at least one); and the id to go on after, None on the last."""
    query = _query(tenant)
    if after:
        query["ExclusiveStartKey"] = {"pk": s(_pk(tenant)), "sk": s(f"m#{after}")}
    items, more = dynamo.query_bounded(
        max_items=limit, max_bytes=max_bytes, size=_listed_set_bytes, **query
    )
    sets = [_from_item(tenant, item) for item in items]
    return sets, sets[-1].metrics_id if more and sets else None
