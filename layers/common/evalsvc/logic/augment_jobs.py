"""Queued augmentations: the same machinery as queued evaluations (logic.chunks), for
POST /augment when its LLM work is too large for one request.

    start      the request: a generation job for a new synthetic dataset, one chunk of seed
               pairs per message
    wait       the request, for a plain POST
    run_chunk  a worker: variants of the chunk's seeds, written under the dataset's version
    finish     the worker that counts the last chunk: install the version (the dataset now
               exists, and is the tenant's latest synthetic dataset), job complete
    give_up    the dead-letter worker: the job fails, the version's pairs are removed
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from evalsvc.errors import StillRunning
from evalsvc.identifiers import new_id, now_ms
from evalsvc.logic import chunks
from evalsvc.logic.variants import llm_variants, perturbed_variants
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetHeader, DatasetKind, Pair
from evalsvc.models.evaluations import Chunk, JobKind, Status
from evalsvc.observability import logger, metrics
from evalsvc.scoring.llm import configured_llm
from evalsvc.settings import get_settings
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import generation_jobs, work_queue
from evalsvc.storage.generation_jobs import GenerationJob


def seeds_per_chunk(multiple: int, with_llm: bool) -> int:
    """One generation call per seed with an LLM; without one, as many seeds as make a chunk of
    EVALSVC_CHUNK_CHECKS pairs."""
    settings = get_settings()
    if with_llm:
        return settings.chunk_generation_calls
    return max(1, settings.chunk_checks // multiple)


def start(
    identity: Identity,
    dataset_id: str,
    seed_header: DatasetHeader,
    seed_ords: Sequence[str],
    labels: Sequence[str],
    multiple: int,
    target: str | None,
) -> GenerationJob:
    """Record the job of generating synthetic dataset `dataset_id` and queue its chunks."""
    with_llm = configured_llm() is not None
    pieces = chunks.cut(
        JobKind.AUGMENTATION,
        identity.tenant,
        dataset_id,
        seed_ords,
        seeds_per_chunk(multiple, with_llm),
    )
    job = GenerationJob(
        tenant=identity.tenant,
        dataset_id=dataset_id,
        seed_id=seed_header.dataset_id,
        seed_version=seed_header.version,
        labels=list(labels),
        multiple=multiple,
        target=target or "",
        system_prompt=seed_header.system_prompt,
        version=new_id(),
        created_ms=now_ms(),
        seed_count=len(seed_ords),
        chunk_count=len(pieces),
    )
    generation_jobs.start(job)
    try:
        work_queue.send(pieces)
    except BaseException:
        generation_jobs.fail(
            identity.tenant,
            dataset_id,
            "the work could not be queued; nothing was generated: augment again",
            503,
        )
        raise
    metrics.add_metric(name="AugmentationsQueued", unit="Count", value=1)
    logger.info(
        "augmentation queued",
        extra={
            "seed": seed_header.dataset_id,
            "synthetic": dataset_id,
            "seeds": len(seed_ords),
            "chunks": len(pieces),
        },
    )
    return job


def progress_message(job: GenerationJob) -> str:
    return (
        f"synthetic dataset {job.dataset_id!r} is still being generated ({job.pairs_done} of "
        f"{job.pairs_total} pairs written) and goes on in the background: GET "
        f"/data/synthetic/{job.dataset_id} answers once it is complete"
    )


def failure_message(job: GenerationJob) -> str:
    return f"generating synthetic dataset {job.dataset_id!r} failed: {job.failure}"


def wait(
    identity: Identity,
    job: GenerationJob,
    seconds: float,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> GenerationJob:
    """The job once complete; its failure raised, or StillRunning after `seconds`."""
    current = chunks.poll(
        lambda: generation_jobs.get(identity.tenant, job.dataset_id) or job,
        lambda j: j.status is not Status.RUNNING,
        seconds,
        sleep=sleep,
    )
    check_ended(current)
    return current


def check_ended(job: GenerationJob) -> None:
    """Raise what a reader of an unfinished synthetic dataset is told."""
    if job.status is Status.FAILED:
        raise chunks.failure(failure_message(job), job.failure_status)
    if job.status is Status.RUNNING:
        raise StillRunning(progress_message(job), retry_after_seconds=10)


# ---- workers -----------------------------------------------------------------------------------


class _GenerationRecord:
    def fail(self, chunk: Chunk, reason: str, http_status: int) -> None:
        _fail(chunk.tenant, chunk.job_id, reason, http_status)

    def note_error(self, chunk: Chunk, text: str, http_status: int) -> None:
        generation_jobs.note_error(chunk.tenant, chunk.job_id, text, http_status)


_GENERATIONS = _GenerationRecord()


def _fail(tenant: str, dataset_id: str, reason: str, http_status: int) -> None:
    job = generation_jobs.get(tenant, dataset_id)
    if job is not None and generation_jobs.fail(tenant, dataset_id, reason, http_status):
        datasets_store.discard_version(tenant, DatasetKind.SYNTHETIC, dataset_id, job.version)
        metrics.add_metric(name="AugmentationsFailed", unit="Count", value=1)
        logger.warning("augmentation failed", extra={"synthetic": dataset_id, "why": reason})


def run_chunk(chunk: Chunk, attempt: int) -> None:
    """Generate the variants of one chunk of seeds and count it; finish the job when it is the
    last. Raises RetryChunk when another attempt may succeed."""
    job = generation_jobs.get(chunk.tenant, chunk.job_id)
    if job is None or job.status is not Status.RUNNING:
        logger.info("chunk of an ended or unknown augmentation skipped")
        return
    chunks.run(chunk, attempt, lambda: _run(chunk, job), _GENERATIONS)


def _variants(chunk: Chunk, job: GenerationJob) -> list[Pair]:
    seeds = datasets_store.read_range(
        chunk.tenant,
        DatasetKind.SEED,
        job.seed_id,
        job.seed_version,
        chunk.first_ord,
        chunk.last_ord,
        job.labels,
    )
    if len(seeds) != chunk.count:
        raise chunks.Unrecoverable(
            f"seed dataset {job.seed_id!r} was overwritten while variants of it were being "
            "generated; augment again"
        )
    llm = configured_llm()
    if llm is not None:
        return llm_variants(llm, seeds, job.multiple, job.system_prompt, job.target or None)
    return [v for seed in seeds for v in perturbed_variants(seed, job.multiple)]


def _run(chunk: Chunk, job: GenerationJob) -> None:
    pairs = _variants(chunk, job)
    datasets_store.put_version_pairs(
        chunk.tenant,
        DatasetKind.SYNTHETIC,
        chunk.job_id,
        job.version,
        pairs,
        job.created_ms,
        chunk.start * job.multiple,
    )
    counted = generation_jobs.count_chunk(chunk.tenant, chunk.job_id, chunk.index, len(pairs))
    metrics.add_metric(name="SyntheticPairs", unit="Count", value=len(pairs))
    if counted is None:
        again = generation_jobs.get(chunk.tenant, chunk.job_id)
        if again is None or again.status is not Status.RUNNING:
            return
        counted = again.chunks_done, again.chunk_count
    done, total = counted
    if done >= total:
        finish(chunk.tenant, chunk.job_id)


def finish(tenant: str, dataset_id: str) -> None:
    """Install the synthetic dataset and mark the job complete (a no-op if done already)."""
    job = generation_jobs.get(tenant, dataset_id)
    if job is None or job.status is not Status.RUNNING:
        return
    if job.pairs_done != job.pairs_total:
        _fail(
            tenant,
            dataset_id,
            f"{job.pairs_done} synthetic pairs were written for {job.pairs_total} wanted; "
            "augment again",
            chunks.INTERNAL,
        )
        return
    datasets_store.install_version(
        tenant,
        DatasetKind.SYNTHETIC,
        dataset_id,
        job.version,
        job.pairs_total,
        job.system_prompt,
        job.created_ms,
    )
    if generation_jobs.complete(tenant, dataset_id):
        logger.info(
            "queued augmentation complete",
            extra={"synthetic": dataset_id, "pairs": job.pairs_total},
        )


def give_up(chunk: Chunk) -> None:
    """A chunk that kept failing reached the dead-letter queue: the job fails, saying why."""
    job = generation_jobs.get(chunk.tenant, chunk.job_id)
    if job is None:
        return
    reason = job.last_error or (
        f"{chunks.describe(chunk)}: the worker stopped without reporting an error (out of time "
        "or memory)"
    )
    _fail(
        chunk.tenant,
        chunk.job_id,
        f"a chunk kept failing and was set aside; last error: {reason}",
        job.last_error_status or chunks.INTERNAL,
    )


def fail_abandoned(reason: str) -> int:
    """Fail every running generation (the local server, at start). Returns how many."""
    count = 0
    for tenant, dataset_id in generation_jobs.running():
        job = generation_jobs.get(tenant, dataset_id)
        if job is not None and job.status is Status.RUNNING:
            _fail(tenant, dataset_id, reason, chunks.INTERNAL)
            count += 1
    return count
