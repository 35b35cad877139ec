"""Synthetic data from seed pairs (POST /augment): `multiple` variants of each selected seed
pair (logic.variants), aimed at a target metric, stored as a new synthetic dataset. Inside the
request, or on the work queue when the LLM work is large (logic.augment_jobs)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from evalsvc.deadlines import Deadline
from evalsvc.errors import (
    DomainError,
    InvalidInput,
    NotFound,
    OutOfTime,
    PayloadTooLarge,
    StillRunning,
)
from evalsvc.identifiers import check_client_id, job_id
from evalsvc.logic import augment_jobs, jobs, spending
from evalsvc.logic.datasets import (
    get_header,
    new_dataset_id,
    resolve_dataset_id,
    select_pair_refs,
)
from evalsvc.logic.evaluations import ensure_complete, storing_seconds
from evalsvc.logic.variants import llm_variants, perturbed_variants
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import MAX_PAIRS, DatasetHeader, DatasetKind
from evalsvc.models.generation import AugmentIn
from evalsvc.models.jobs import Job, Status
from evalsvc.observability import logger, metrics
from evalsvc.scoring.llm import LLMOutOfTime, configured_llm
from evalsvc.settings import get_settings
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import results as results_store
from evalsvc.usage import Usage


@dataclass(slots=True)
class Augmentation:
    """The synthetic dataset made (None while its queued job runs), and the queued job."""

    header: DatasetHeader | None
    seed_size: int
    target_metrics: list[str]
    job: Job | None = None
    # The LLM work done for it: in the request, and by the chunks of a job that completed.
    usage: Usage = field(default_factory=Usage)


def target_metric(identity: Identity, body: AugmentIn, seed_id: str) -> str | None:
    """The metric the variants aim at: `target_metric`, else definition `target_metric_idx` of
    the evaluation result, else that result's lowest-scoring metric. The result is
    `eval_results_id`, else the newest evaluation of the seed dataset (None if there is none)."""
    results_id = body.eval_results_id
    if results_id is not None:
        check_client_id(results_id, "result id")
    else:
        results_id = results_store.latest_for_dataset(identity.tenant, DatasetKind.SEED, seed_id)
    if body.target_metric is not None:
        return body.target_metric
    if results_id is None:
        if body.target_metric_idx is not None:
            raise InvalidInput(
                f"target_metric_idx needs an evaluation of seed dataset {seed_id!r}: evaluate it "
                "first, or give eval_results_id or target_metric"
            )
        return None
    result = results_store.get(identity.tenant, results_id)
    if result is None:
        raise NotFound(f"no evaluation result with id {results_id!r}")
    ensure_complete(result)
    definitions = result.definitions
    if body.target_metric_idx is not None:
        if body.target_metric_idx >= len(definitions):
            raise InvalidInput(
                f"target_metric_idx {body.target_metric_idx} is out of range: result "
                f"{results_id!r} has {len(definitions)} metrics"
            )
        return definitions[body.target_metric_idx]
    means = [s.mean for s in result.summaries]
    return definitions[min(range(len(means)), key=lambda i: (means[i], i))]


def _check_size(seed_count: int, multiple: int) -> None:
    total = seed_count * multiple
    if total > MAX_PAIRS:
        raise PayloadTooLarge(
            f"{seed_count} seed pairs x multiple {multiple} = {total} pairs, over the "
            f"{MAX_PAIRS} pairs a dataset may hold: lower multiple or narrow pair_query"
        )


def _fits_inline(
    seed_count: int, multiple: int, bytes_per_seed: float | None, with_llm: bool
) -> bool:
    """Whether generating runs inside the request: with an LLM, at most so many calls (one per
    seed pair); without one, at most so many pairs and bytes written (the perturbed variants
    are about as large as their seeds)."""
    settings = get_settings()
    if with_llm:
        return seed_count <= settings.inline_max_generation_calls
    written = seed_count * multiple * (bytes_per_seed or 0)
    return (
        seed_count * multiple <= settings.inline_max_synthetic_pairs
        and written <= settings.inline_max_bytes
    )


def augment(
    identity: Identity,
    body: AugmentIn,
    deadline: Deadline,
    *,
    respond_async: bool = False,
    wait_seconds: float = 0.0,
    request_key: str | None = None,
) -> Augmentation:
    """A new synthetic dataset of `body.multiple` variants of each selected seed pair. Large
    work is queued (augment_jobs) and, unless `respond_async`, waited for up to
    `wait_seconds`; the Augmentation then carries the running job. LLM work done here that does
    not fit `deadline` (the request's) is handed to the queue. Its LLM work is held to the
    tenant's monthly limit before any call (logic.spending)."""
    with spending.session(identity.tenant, "POST /augment", deadline.left()) as spend:
        done = _augment(identity, body, deadline, respond_async, wait_seconds, request_key)
    done.usage = spend.usage()
    if done.job is not None and done.job.status is Status.COMPLETE:
        done.usage = done.usage + jobs.spent_of(done.job)
    return done


def _augment(
    identity: Identity,
    body: AugmentIn,
    deadline: Deadline,
    respond_async: bool,
    wait_seconds: float,
    request_key: str | None,
) -> Augmentation:
    seed_id = resolve_dataset_id(identity, DatasetKind.SEED, body.seed_data_id or "latest")
    queue = _Queueing(identity, body, request_key)
    with_llm = configured_llm() is not None
    # The seed dataset's size bounds the selection's: small, it is read whole at once; large,
    # by keys first, to cut it into chunks (unless its selection turns out small).
    queued = get_settings().work_queue_url is not None
    whole = get_header(identity, DatasetKind.SEED, seed_id) if queued else None
    per_seed = whole.bytes_per_pair if whole else None
    if whole is not None and (
        respond_async or not _fits_inline(whole.pair_count, body.multiple, per_seed, with_llm)
    ):
        seed_header, refs, ords = select_pair_refs(
            identity, DatasetKind.SEED, seed_id, body.pair_query, "augment", keys_only=True
        )
        _check_size(len(refs), body.multiple)
        if respond_async or not _fits_inline(len(refs), body.multiple, per_seed, with_llm):
            target = target_metric(identity, body, seed_id)
            job = queue.start(seed_header, ords, target)
            if not respond_async:
                job = augment_jobs.wait(job, wait_seconds)
            return Augmentation(
                header=datasets_store.get_header(identity.tenant, DatasetKind.SYNTHETIC, job.job_id)
                if job.status is Status.COMPLETE
                else None,
                seed_size=augment_jobs.seed_count(job),
                target_metrics=[target] if target else [],
                job=job,
            )
    seed_header, seeds, ords = select_pair_refs(
        identity, DatasetKind.SEED, seed_id, body.pair_query, "augment"
    )
    _check_size(len(seeds), body.multiple)
    target = target_metric(identity, body, seed_id)
    count = len(seeds) * body.multiple
    llm = configured_llm(deadline.earlier(storing_seconds(count)))
    if llm:
        try:
            pairs = llm_variants(llm, seeds, body.multiple, seed_header.system_prompt, target)
        except LLMOutOfTime:
            raise queue.hand_over(seed_header, ords, target) from None
    else:
        pairs = [variant for seed in seeds for variant in perturbed_variants(seed, body.multiple)]
    header = datasets_store.write_dataset(
        identity.tenant,
        DatasetKind.SYNTHETIC,
        new_dataset_id(),
        pairs,
        seed_header.system_prompt,
        is_new=True,
    )
    metrics.add_metric(name="SyntheticPairs", unit="Count", value=len(pairs))
    logger.info(
        "synthetic dataset made",
        extra={
            "seed": seed_id,
            "synthetic": header.dataset_id,
            "pairs": len(pairs),
            "by": "llm" if llm else "rules",
        },
    )
    return Augmentation(header, len(seeds), [target] if target else [])


class _Queueing:
    """How an augmentation goes onto the work queue: at once when it is large, or handed over
    when its LLM work does not fit the request. A retry of the request (same Idempotency-Key
    and body) finds the same job."""

    def __init__(self, identity: Identity, body: AugmentIn, key: str | None) -> None:
        self.identity = identity
        self.multiple = body.multiple
        self.labels = (body.pair_query.pair_labels if body.pair_query else None) or []
        self.key = key

    def start(self, seed_header: DatasetHeader, ords: Sequence[str], target: str | None) -> Job:
        dataset_id = job_id("ds_", self.identity.tenant, self.key)
        return augment_jobs.start(
            self.identity, dataset_id, seed_header, ords, self.labels, self.multiple, target
        )

    def hand_over(
        self, seed_header: DatasetHeader, ords: Sequence[str], target: str | None
    ) -> DomainError:
        """The error to answer with once the work is queued (StillRunning, naming the dataset
        to poll), or, with no queue, OutOfTime."""
        if get_settings().work_queue_url is None:
            return OutOfTime(
                "the LLM could not write the variants within the request's time limit; nothing "
                "was stored: retry, or narrow pair_query or lower multiple",
                retry_after_seconds=1,
            )
        job = self.start(seed_header, ords, target)
        return StillRunning(
            f"synthetic dataset {job.job_id!r} goes on in the background because the LLM "
            f"did not write its variants within this request: GET /data/synthetic/"
            f"{job.job_id} answers once it is complete",
            retry_after_seconds=10,
            location=f"data/synthetic/{job.job_id}",
        )
