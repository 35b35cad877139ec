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

from collections.abc import Sequence
from functools import partial

from evalsvc.deadlines import Deadline
from evalsvc.errors import OutOfTime, StillRunning
from evalsvc.identifiers import new_id, now_ms
from evalsvc.logic import chunks
from evalsvc.logic.variants import llm_variants, perturbed_variants
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetHeader, DatasetKind, Pair, pair_bytes
from evalsvc.models.evaluations import Chunk, JobKind, Status
from evalsvc.observability import logger, metrics
from evalsvc.scoring.llm import LLMOutOfTime, configured_llm
from evalsvc.settings import get_settings
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import generation_jobs
from evalsvc.storage.generation_jobs import GenerationJob


def seeds_per_chunk(multiple: int, with_llm: bool, bytes_per_seed: float | None) -> int:
    """One generation call per seed with an LLM; without one, as many seeds as make a chunk of
    at most EVALSVC_CHUNK_CHECKS pairs and EVALSVC_CHUNK_MAX_BYTES written."""
    settings = get_settings()
    if with_llm:
        return settings.chunk_generation_calls
    limits = [settings.chunk_checks // multiple]
    if bytes_per_seed:
        limits.append(int(settings.chunk_max_bytes // (bytes_per_seed * multiple)))
    return max(1, min(limits))


def start(
    identity: Identity,
    dataset_id: str,
    seed_header: DatasetHeader,
    seed_ords: Sequence[str],
    labels: Sequence[str],
    multiple: int,
    target: str | None,
) -> GenerationJob:
    """Record the job of generating synthetic dataset `dataset_id` and queue its chunks. A job
    for that dataset already started (a retry of the same request) is returned as it is."""
    with_llm = configured_llm() is not None
    pieces = chunks.cut(
        JobKind.AUGMENTATION,
        identity.tenant,
        dataset_id,
        seed_ords,
        seeds_per_chunk(multiple, with_llm, seed_header.bytes_per_pair),
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
    if not generation_jobs.start(job):
        existing = generation_jobs.get(identity.tenant, dataset_id)
        if existing is None:
            raise chunks.failure("the augmentation changed while it was started; retry", 503)
        return existing
    chunks.queue(pieces, partial(fail, identity.tenant, dataset_id), "augment again")
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
) -> GenerationJob:
    """The job once complete; its failure raised, or StillRunning after `seconds`."""
    current = chunks.poll(
        lambda: generation_jobs.get(identity.tenant, job.dataset_id) or job,
        lambda j: j.status is not Status.RUNNING,
        seconds,
    )
    check_ended(current, location=f"data/synthetic/{job.dataset_id}")
    return current


def check_ended(job: GenerationJob, location: str | None = None) -> None:
    """Raise what a reader of an unfinished synthetic dataset is told."""
    if job.status is Status.FAILED:
        raise chunks.failure(failure_message(job), job.failure_status)
    if job.status is Status.RUNNING:
        raise StillRunning(progress_message(job), retry_after_seconds=10, location=location)


# ---- workers -----------------------------------------------------------------------------------


class _GenerationRecord:
    def fail(self, chunk: Chunk, reason: str, http_status: int) -> None:
        fail(chunk.tenant, chunk.job_id, reason, http_status)

    def note_error(self, chunk: Chunk, text: str, http_status: int) -> None:
        generation_jobs.note_error(chunk.tenant, chunk.job_id, text, http_status)


_GENERATIONS = _GenerationRecord()


def fail(tenant: str, dataset_id: str, reason: str, http_status: int) -> None:
    """Fail a running generation and remove what it wrote."""
    job = generation_jobs.get(tenant, dataset_id)
    if job is not None and generation_jobs.fail(tenant, dataset_id, reason, http_status):
        datasets_store.discard_version(tenant, DatasetKind.SYNTHETIC, dataset_id, job.version)
        metrics.add_metric(name="AugmentationsFailed", unit="Count", value=1)
        logger.warning("augmentation failed", extra={"synthetic": dataset_id, "why": reason})


def run_chunk(chunk: Chunk, attempt: int, deadline: Deadline) -> None:
    """Generate the variants of one chunk of seeds before `deadline` and count it; finish the
    job when it is the last. Raises RetryChunk when another attempt may succeed."""
    job = generation_jobs.get(chunk.tenant, chunk.job_id)
    if job is None or job.status is not Status.RUNNING:
        logger.info("chunk of an ended or unknown augmentation skipped")
        return
    if chunk.index in job.done:
        # Counted by an earlier delivery, which may have died before finishing the job.
        work = partial(_finish_if_all_counted, chunk.tenant, chunk.job_id, job)
    else:
        work = partial(_run, chunk, job, deadline)
    chunks.run(chunk, attempt, work, _GENERATIONS)


def _finish_if_all_counted(tenant: str, dataset_id: str, job: GenerationJob) -> None:
    if job.chunks_done >= job.chunk_count:
        finish(tenant, dataset_id)


def _variants(chunk: Chunk, job: GenerationJob, deadline: Deadline) -> list[Pair]:
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
    llm = configured_llm(deadline)
    if llm is None:
        return [v for seed in seeds for v in perturbed_variants(seed, job.multiple)]
    try:
        return llm_variants(llm, seeds, job.multiple, job.system_prompt, job.target or None)
    except LLMOutOfTime as exc:
        raise OutOfTime(
            f"{chunks.describe(chunk)}: the worker's time ran out while the LLM wrote variants "
            f"({exc.problem})"
        ) from exc


def _run(chunk: Chunk, job: GenerationJob, deadline: Deadline) -> None:
    pairs = _variants(chunk, job, deadline)
    # LLM variants differ from one delivery to the next: a copy of this chunk that another
    # delivery counted while this one was generating must not overwrite what was counted.
    current = generation_jobs.get(chunk.tenant, chunk.job_id)
    if current is None or current.status is not Status.RUNNING or chunk.index in current.done:
        return
    datasets_store.put_version_pairs(
        chunk.tenant,
        DatasetKind.SYNTHETIC,
        chunk.job_id,
        job.version,
        pairs,
        job.created_ms,
        chunk.start * job.multiple,
    )
    size = sum(pair_bytes(pair) for pair in pairs)
    counted = generation_jobs.count_chunk(chunk.tenant, chunk.job_id, chunk.index, len(pairs), size)
    metrics.add_metric(name="SyntheticPairs", unit="Count", value=len(pairs))
    if counted is None:
        # Counted meanwhile by another delivery, or the job ended: if it failed, what this
        # delivery just wrote is removed with the rest of the version.
        again = generation_jobs.get(chunk.tenant, chunk.job_id)
        if again is not None and again.status is Status.FAILED:
            datasets_store.discard_version(
                chunk.tenant, DatasetKind.SYNTHETIC, chunk.job_id, again.version
            )
        elif again is not None and again.status is Status.RUNNING:
            _finish_if_all_counted(chunk.tenant, chunk.job_id, again)
        return
    job.chunks_done, job.chunk_count = counted
    _finish_if_all_counted(chunk.tenant, chunk.job_id, job)


def finish(tenant: str, dataset_id: str) -> None:
    """Install the synthetic dataset and mark the job complete (a no-op if done already)."""
    job = generation_jobs.get(tenant, dataset_id)
    if job is None or job.status is not Status.RUNNING:
        return
    if job.pairs_done != job.pairs_total:
        fail(
            tenant,
            dataset_id,
            f"{job.pairs_done} synthetic pairs were written for {job.pairs_total} wanted; "
            "augment again",
            chunks.INTERNAL,
        )
        return
    # The dataset appears (and becomes the latest) in the same transaction that completes the
    # job, so a job is complete exactly when its dataset exists.
    installed = datasets_store.install_version(
        tenant,
        DatasetKind.SYNTHETIC,
        dataset_id,
        job.version,
        job.pairs_total,
        job.bytes_done,
        job.system_prompt,
        job.created_ms,
        also=[generation_jobs.complete_action(tenant, dataset_id)],
    )
    if installed:
        logger.info(
            "queued augmentation complete",
            extra={"synthetic": dataset_id, "pairs": job.pairs_total},
        )


def give_up(chunk: Chunk) -> None:
    """A chunk that kept failing reached the dead-letter queue: the job fails, saying why."""
    job = generation_jobs.get(chunk.tenant, chunk.job_id)
    if job is None:
        return
    if chunk.index in job.done and job.chunks_done < job.chunk_count:
        return  # a copy of a chunk already counted: the job goes on without it
    fail(
        chunk.tenant,
        chunk.job_id,
        *chunks.give_up_reason(chunk, job.last_error, job.last_error_status),
    )


def fail_abandoned(reason: str) -> int:
    """Fail every running generation (the local server, at start). Returns how many."""
    count = 0
    for tenant, dataset_id in generation_jobs.running():
        job = generation_jobs.get(tenant, dataset_id)
        if job is not None and job.status is Status.RUNNING:
            fail(tenant, dataset_id, reason, chunks.INTERNAL)
            count += 1
    return count
