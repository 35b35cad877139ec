"""Lists of a tenant's results, newest first: the sparse indexes by_tenant and by_dataset."""

from __future__ import annotations

from typing import Any

from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import ListedResult
from evalsvc.models.jobs import Status
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_n, get_s, s
from evalsvc.storage.results.keys import (
    DATASET_INDEX,
    TENANT_INDEX,
    dataset_list_pk,
    header_key,
    list_pk,
    list_sk,
    table,
)

# What the list indexes project (template.yaml), besides their keys: what a list shows.
LISTED_ATTRIBUTES = (
    "results_id",
    "dataset_id",
    "dataset_kind",
    "metrics_id",
    "status",
    "pair_count",
    "created_ms",
)

# What a listed result adds to GET /evaluations besides its three ids: keys, quotes, the status,
# the pair count and the time.
LISTED_RESULT_BYTES = 160


def _listed_bytes(item: Item) -> int:
    ids = (get_s(item, name) or "" for name in ("results_id", "dataset_id", "metrics_id"))
    return sum(len(value.encode()) for value in ids) + LISTED_RESULT_BYTES


def _listed_from_item(item: Item) -> ListedResult:
    return ListedResult(
        results_id=get_s(item, "results_id") or "",
        created_ms=get_n(item, "created_ms"),
        dataset_id=get_s(item, "dataset_id") or "",
        dataset_kind=DatasetKind(get_s(item, "dataset_kind") or ""),
        metrics_id=get_s(item, "metrics_id") or "",
        status=Status(get_s(item, "status") or Status.COMPLETE.value),
        pair_count=get_n(item, "pair_count"),
    )


def listed_page(
    tenant: str,
    dataset_id: str | None,
    after: tuple[int, str] | None,
    limit: int,
    max_bytes: int,
) -> tuple[list[ListedResult], bool]:
    """The tenant's results newest first (those of `dataset_id` only, when given, whatever its
    kind), after the one created at (created_ms, results_id) `after` (None: from the newest);
    at most `limit` and no more than make `max_bytes` (at least one); and whether more follow.
    One Query of an index (limit + 1 items, to know whether more follow). Every key comes from
    `tenant`: `after` only says where to start within the tenant's own entries."""
    if dataset_id is None:
        index, key, value = TENANT_INDEX, "list_pk", list_pk(tenant)
    else:
        index, key, value = DATASET_INDEX, "list_dpk", dataset_list_pk(tenant, dataset_id)
    query: dict[str, Any] = {
        "TableName": table(),
        "IndexName": index,
        "KeyConditionExpression": f"{key} = :pk",
        "ExpressionAttributeValues": {":pk": s(value)},
        "ScanIndexForward": False,
    }
    if after is not None:
        created_ms, results_id = after
        query["ExclusiveStartKey"] = {
            key: s(value),
            "list_sk": s(list_sk(created_ms, results_id)),
            **header_key(tenant, results_id),
        }
    items, more = dynamo.query_bounded(
        max_items=limit, max_bytes=max_bytes, size=_listed_bytes, **query
    )
    return [_listed_from_item(item) for item in items], more
