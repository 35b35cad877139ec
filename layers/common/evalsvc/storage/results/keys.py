"""Keys of the results table, the names of its two list indexes, and the item of a dataset's
pointer to its newest result."""

from __future__ import annotations

from evalsvc.core.settings import get_settings
from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.storage.dynamo import Item, s

HEADER_SK = "result"
POINTER_SK = "pointer"
TENANT_INDEX = "by_tenant"
DATASET_INDEX = "by_dataset"
# The width of created_ms in `list_sk`: milliseconds up to the year 33658.
_LIST_MS_DIGITS = 15


def table() -> str:
    return get_settings().results_table


def result_pk(tenant: str, results_id: str) -> str:
    return f"T#{tenant}#R#{results_id}"


def latest_pk(tenant: str, kind: DatasetKind, dataset_id: str) -> str:
    return f"T#{tenant}#latest#{kind.value}#{dataset_id}"


def list_pk(tenant: str) -> str:
    return f"T#{tenant}"


def dataset_list_pk(tenant: str, dataset_id: str) -> str:
    return f"T#{tenant}#D#{dataset_id}"


def list_sk(created_ms: int, results_id: str) -> str:
    return f"{created_ms:0{_LIST_MS_DIGITS}d}#{results_id}"


def header_key(tenant: str, results_id: str) -> Item:
    return {"pk": s(result_pk(tenant, results_id)), "sk": s(HEADER_SK)}


def latest_pointer(result: EvaluationResult) -> Item:
    """The item that makes `result` its dataset's newest."""
    return {
        "pk": s(latest_pk(result.tenant, result.dataset_kind, result.dataset_id)),
        "sk": s(POINTER_SK),
        "results_id": s(result.results_id),
    }
