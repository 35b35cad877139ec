"""Queued augmentations, one kind of work of the job engine (logic.jobs): POST /augment
(logic.augment) when its LLM work is too large for one request.

    queued    the request: a job for a new synthetic dataset, one chunk of seed pairs per
              message
    run       a worker: variants of the chunk's seeds, written under the dataset's version
    complete  whoever counts the last chunk: install the version (the dataset now exists, and
              is the tenant's latest synthetic dataset), with the job's end
    discard   a failed job: the version's pairs are removed
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import DomainError, Failure, OutOfTime, Unrecoverable
from evalsvc.core.identifiers import new_id, now_ms
from evalsvc.core.observability import metrics
from evalsvc.core.settings import get_settings
from evalsvc.logic import chunks, jobs
from evalsvc.logic.dispatch import Subject
from evalsvc.logic.variants import llm_variants, perturbed_variants
from evalsvc.models.datasets import DatasetHeader, DatasetKind, Pair, pair_bytes
from evalsvc.models.jobs import Chunk, Job, Status, Tally
from evalsvc.scoring.llm import LLMOutOfTime, configured_llm
from evalsvc.spending.meter import Usage
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage.writes import NONE, Writes

# The kind's name (job id: the synthetic dataset's).
AUGMENTATION = "augmentation"


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


def queued(
    tenant: str,
    dataset_id: str,
    seed_header: DatasetHeader,
    seed_ords: Sequence[str],
    labels: Sequence[str],
    multiple: int,
    target: str | None,
) -> Job:
    """Start the job of generating synthetic dataset `dataset_id` and queue its chunks. A job
    for that dataset already started (a retry of the same request) is returned as it is."""
    with_llm = configured_llm() is not None
    seeds = datasets_store.stored_as_read(seed_header)
    pairs_total = len(seed_ords) * multiple
    pieces = jobs.cut(
        AUGMENTATION,
        tenant,
        dataset_id,
        seed_ords,
        seeds_per_chunk(multiple, with_llm, seed_header.bytes_per_pair),
    )
    job = Job(
        kind=AUGMENTATION,
        tenant=tenant,
        job_id=dataset_id,
        chunk_count=len(pieces),
        pairs_total=pairs_total,
        created_ms=now_ms(),
        params={
            "seed_id": seed_header.dataset_id,
            "seed_version": seeds.version,
            "seed_shards": seeds.shards,
            "seed_append_shards": seeds.append_shards,
            "seed_count": len(seed_ords),
            "labels": list(labels),
            "multiple": multiple,
            "target": target or "",
            "system_prompt": seed_header.system_prompt,
            "version": new_id(),
            "shards": synthetic_shards(pairs_total, seed_header.bytes_per_pair),
        },
    )
    return jobs.start(job, pieces, NONE, "augment again")


def synthetic_shards(pairs: int, bytes_per_pair: float | None) -> int:
    """The shards the synthetic version spreads its `pairs` over, fixed before they are
    written: as many as a write of that many pairs the size of their seeds needs (variants,
    by rules or by an LLM, are about their seeds' size; with no known size, 1 KB)."""
    size = 1024 if bytes_per_pair is None else math.ceil(bytes_per_pair)
    return datasets_store.shards_for(pairs, pairs * datasets_store.write_units(size))


def seed_count(job: Job) -> int:
    return int(job.params["seed_count"])


# What a caller is told of a synthetic dataset not made inside the request (logic.dispatch), and
# a reader of one not made yet (`unfinished`).
SUBJECT = Subject(
    location="data/synthetic/{id}",
    still_running="synthetic dataset {id!r} is still being generated ({done} of {total} pairs "
    "written) and goes on in the background: GET /data/synthetic/{id} answers once it is complete",
    handed_over="synthetic dataset {id!r} goes on in the background because {why}: GET "
    "/data/synthetic/{id} answers once it is complete",
    failed="generating synthetic dataset {id!r} failed: {failure}",
    out_of_time="the LLM could not write the variants within the request's time limit; nothing "
    "was stored: retry, or narrow pair_query or lower multiple",
)


def unfinished(job: Job) -> DomainError | None:
    """What a reader of a synthetic dataset not made (yet) is told: its failure, or its
    progress (StillRunning); None once the job is complete."""
    if job.status is Status.FAILED:
        return SUBJECT.failure(job)
    if job.status is Status.RUNNING:
        return SUBJECT.running(job, located=False)
    return None


class Augmentations:
    """Queued augmentations as the job engine runs them."""

    name = AUGMENTATION
    completed_metric = "SyntheticDatasets"

    def run(self, job: Job, chunk: Chunk, attempt: int, deadline: Deadline) -> Tally | None:
        params = job.params
        pairs = _variants(chunk, job, deadline)
        # LLM variants differ from one delivery to the next: a copy of this chunk that another
        # delivery counted while this one was generating must not overwrite what was counted.
        if jobs_store.is_counted(chunk):
            return None
        multiple = int(params["multiple"])
        datasets_store.put_version_pairs(
            chunk.tenant,
            DatasetKind.SYNTHETIC,
            chunk.job_id,
            str(params["version"]),
            _shards(job),
            pairs,
            job.created_ms,
            chunk.start * multiple,
        )
        metrics.add_metric(name="SyntheticPairs", unit="Count", value=len(pairs))
        return Tally(chunk.index, len(pairs), sum(pair_bytes(pair) for pair in pairs))

    def complete(self, job: Job, tallies: Iterable[Tally], spent: Usage) -> Writes:
        written = written_bytes = 0
        for tally in tallies:  # one pass: they are read as they are iterated
            written += tally.pairs
            written_bytes += tally.bytes
        if written != job.pairs_total:
            raise Unrecoverable(
                f"{written} synthetic pairs were written for {job.pairs_total} wanted; "
                "augment again"
            )
        # The dataset appears (and becomes the latest) in the same transaction that completes
        # the job, so a job is complete exactly when its dataset exists.
        return datasets_store.installing(
            job.tenant,
            DatasetKind.SYNTHETIC,
            job.job_id,
            (str(job.params["version"]), _shards(job)),
            written,
            written_bytes,
            str(job.params["system_prompt"]),
            job.created_ms,
        )

    def failed(self, job: Job, failure: Failure) -> Writes:
        return NONE

    def discard(self, job: Job) -> None:
        datasets_store.discard_version(
            job.tenant, DatasetKind.SYNTHETIC, job.job_id, str(job.params["version"]), _shards(job)
        )


AUGMENTATIONS = jobs.register(Augmentations())


def _shards(job: Job) -> int:
    """The partition keys the synthetic version spreads over, fixed when the job started (a job
    started before versions were spread has one)."""
    return int(job.params.get("shards", 1))


def _variants(chunk: Chunk, job: Job, deadline: Deadline) -> list[Pair]:
    params = job.params
    seeds = datasets_store.read_range(
        chunk.tenant,
        DatasetKind.SEED,
        str(params["seed_id"]),
        datasets_store.Stored(
            str(params["seed_version"]),
            int(params.get("seed_shards", 1)),
            int(params.get("seed_append_shards", 0)),
        ),
        chunk.first_ord,
        chunk.last_ord,
        chunk.member_set(),
        [str(label) for label in params.get("labels", [])],
    )
    if len(seeds) != chunk.count:
        raise Unrecoverable(
            f"the version of seed dataset {params['seed_id']!r} being augmented is no longer "
            "kept: its retention ended while variants of it were being generated; augment again"
        )
    multiple = int(params["multiple"])
    llm = configured_llm(deadline)
    if llm is None:
        return [v for seed in seeds for v in perturbed_variants(seed, multiple)]
    try:
        return llm_variants(
            llm, seeds, multiple, str(params["system_prompt"]), str(params["target"]) or None
        )
    except LLMOutOfTime as exc:
        raise OutOfTime(
            f"{chunks.describe(chunk)}: the worker's time ran out while the LLM wrote variants "
            f"({exc.problem})"
        ) from exc
