"""Queued augmentations: one job item per synthetic dataset being generated, in the datasets
table beside the dataset it will become.

    pk                                      sk    what
    T#<tenant>#synthetic#<dataset_id>#job   job   seed, variants wanted, progress, status…

The synthetic pairs are written under a version of the dataset that is installed (the header
written) only when the last chunk is counted, so until then the dataset does not exist for
readers; this item says how far the generation got, or why it failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evalsvc.identifiers import now_ms
from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import Status
from evalsvc.settings import get_settings
from evalsvc.storage import dynamo, job_state, texts
from evalsvc.storage.dynamo import Item, get_list, get_n, get_s, n, s

JOB_SK = "job"


@dataclass(slots=True)
class GenerationJob:
    tenant: str
    dataset_id: str
    seed_id: str
    seed_version: str
    labels: list[str]
    multiple: int
    target: str
    system_prompt: str
    version: str  # the synthetic dataset's version being filled
    created_ms: int
    seed_count: int
    chunk_count: int
    status: Status = Status.RUNNING
    pairs_done: int = 0
    bytes_done: int = 0  # pair_bytes of the pairs written
    chunks_done: int = 0
    failure: str = ""
    failure_status: int = 0
    last_error: str = ""
    last_error_status: int = 0
    done: set[int] = field(default_factory=set)

    @property
    def pairs_total(self) -> int:
        return self.seed_count * self.multiple


def _table() -> str:
    return get_settings().datasets_table


def _key(tenant: str, dataset_id: str) -> Item:
    return {"pk": s(f"T#{tenant}#{DatasetKind.SYNTHETIC.value}#{dataset_id}#job"), "sk": s(JOB_SK)}


def start(job: GenerationJob) -> bool:
    """Record the job; False when a job for that dataset exists already."""
    item = {
        **_key(job.tenant, job.dataset_id),
        **job_state.running_fields(job.chunk_count),
        "dataset_id": s(job.dataset_id),
        "seed_id": s(job.seed_id),
        "seed_version": s(job.seed_version),
        "labels": dynamo.ss_list(job.labels),
        "multiple": n(job.multiple),
        "target": s(job.target),
        **texts.text_field(_table(), job.tenant, "system_prompt", job.system_prompt),
        "version": s(job.version),
        "created_ms": n(job.created_ms),
        "seed_count": n(job.seed_count),
    }
    return job_state.create(_table(), item)


def get(tenant: str, dataset_id: str) -> GenerationJob | None:
    item = dynamo.get_item(_table(), _key(tenant, dataset_id))
    if item is None:
        return None
    return GenerationJob(
        tenant=tenant,
        dataset_id=dataset_id,
        seed_id=get_s(item, "seed_id") or "",
        seed_version=get_s(item, "seed_version") or "",
        labels=get_list(item, "labels"),
        multiple=get_n(item, "multiple"),
        target=get_s(item, "target", "") or "",
        system_prompt=texts.read_text(_table(), tenant, item, "system_prompt"),
        version=get_s(item, "version") or "",
        created_ms=get_n(item, "created_ms"),
        seed_count=get_n(item, "seed_count"),
        chunk_count=get_n(item, "chunk_count"),
        status=Status(get_s(item, "status") or Status.RUNNING.value),
        pairs_done=get_n(item, "pairs_done"),
        bytes_done=get_n(item, "bytes_done"),
        chunks_done=get_n(item, "chunks_done"),
        failure=get_s(item, "failure", "") or "",
        failure_status=get_n(item, "failure_status"),
        last_error=get_s(item, "last_error", "") or "",
        last_error_status=get_n(item, "last_error_status"),
        done=job_state.done_chunks(item),
    )


def count_chunk(
    tenant: str, dataset_id: str, chunk: int, pairs: int, size: int
) -> tuple[int, int] | None:
    """Count a chunk of `pairs` synthetic pairs (`size` pair bytes) written, once."""
    return job_state.count_chunk(_table(), _key(tenant, dataset_id), chunk, pairs, size)


def complete_action(tenant: str, dataset_id: str) -> Item:
    """The transaction action marking a running job complete (with the dataset's install)."""
    return job_state.complete_update(
        _table(), _key(tenant, dataset_id), "completed_ms = :now", {":now": n(now_ms())}
    )


def fail(tenant: str, dataset_id: str, reason: str, http_status: int) -> bool:
    return job_state.fail(_table(), _key(tenant, dataset_id), reason, http_status)


def note_error(tenant: str, dataset_id: str, message: str, http_status: int) -> None:
    job_state.note_error(_table(), _key(tenant, dataset_id), message, http_status)


def running() -> list[tuple[str, str]]:
    """(tenant, dataset id) of every running generation (the local server only: a table
    scan)."""
    return [
        (item["pk"]["S"][2:].split("#", 1)[0], get_s(item, "dataset_id") or "")
        for item in job_state.running_items(_table(), JOB_SK)
    ]
