"""What happens to the dataset version a result pinned (E7), made to happen in tests: a write on
a Lambda whose clock runs behind the evaluation's, the version's retention ending (its record
expired, or removed by TTL and purged, leaving its tombstone), and a result as stored before
results kept their `inputs`.

Records and headers are changed through a client of its own, as dataset_stream.py does; the
purge is the service's own (storage.datasets.versions.purge_version)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from evalsvc.core.settings import get_settings
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.storage import results as results_store
from evalsvc.storage.datasets import appends, history, keys, versions

# 2021-03-04T05:06:07Z: the day a version made to expire expired.
EXPIRED_MS = 1_614_834_367_000
EXPIRED_DAY = "2021-03-04"


def _client() -> Any:
    return boto3.client("dynamodb", region_name="us-east-1")


@contextmanager
def clock_at(ms: int) -> Iterator[None]:
    """Dataset writes (overwrites and appends) inside are stamped `ms`, as on a Lambda whose
    clock reads that."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(versions, "now_ms", lambda: ms)
        patch.setattr(appends, "now_ms", lambda: ms)
        yield


def stored(tenant: str, results_id: str) -> EvaluationResult:
    result = results_store.get(tenant, results_id)
    assert result is not None
    return result


def _record_key(tenant: str, result: EvaluationResult) -> dict[str, Any]:
    inputs = result.inputs
    assert inputs is not None
    return {
        "pk": {"S": keys.dataset_pk(tenant, result.dataset_kind, result.dataset_id)},
        "sk": {"S": history.record_sk(inputs.version_ms, inputs.dataset_version)},
    }


def expire(tenant: str, results_id: str, *, purged: bool) -> None:
    """End the retention of the (replaced) version result `results_id` pinned, on EXPIRED_DAY:
    its record's expiry moved there, or (`purged`) the record removed, as TTL removes it, and
    the version purged, leaving its tombstone."""
    result = stored(tenant, results_id)
    key = _record_key(tenant, result)
    table = keys.table()
    item = _client().get_item(TableName=table, Key=key, ConsistentRead=True).get("Item")
    assert item is not None, "the version is not replaced: only a replaced version expires"
    if not purged:
        _client().update_item(
            TableName=table,
            Key=key,
            UpdateExpression="SET expires_ms = :ms, expires_at = :s",
            ExpressionAttributeValues={
                ":ms": {"N": str(EXPIRED_MS)},
                ":s": {"N": str(EXPIRED_MS // 1000)},
            },
        )
        return
    record = dataclasses.replace(history.record_from_item(item), expires_ms=EXPIRED_MS)
    _client().delete_item(TableName=table, Key=key)
    assert versions.purge_version(tenant, result.dataset_kind, result.dataset_id, record) > 0


def forget_inputs(tenant: str, results_id: str) -> None:
    """The result's header as a result stored before `inputs` were kept has it."""
    _client().update_item(
        TableName=get_settings().results_table,
        Key={"pk": {"S": results_store.result_pk(tenant, results_id)}, "sk": {"S": "result"}},
        UpdateExpression="REMOVE inputs",
    )
    assert stored(tenant, results_id).inputs is None
