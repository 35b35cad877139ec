"""Synthetic data from seed pairs (POST /augment): `multiple` variants of each selected seed
pair (logic.variants), aimed at a target metric, stored as a new synthetic dataset. Inside the
request, or as a job of the augmentation kind (logic.kinds.augmentation) when the LLM work is
large; where it runs is logic.dispatch's decision."""

from __future__ import annotations

from dataclasses import dataclass, field

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import (
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    StorageUnavailable,
)
from evalsvc.core.identifiers import check_client_id, job_id
from evalsvc.core.observability import logger, metrics
from evalsvc.core.settings import get_settings
from evalsvc.logic import datasets as dataset_logic
from evalsvc.logic import dispatch, jobs, spending
from evalsvc.logic.datasets import Selection, new_dataset_id
from evalsvc.logic.dispatch import HandOver, storing_seconds
from evalsvc.logic.kinds import augmentation as augmentation_kind
from evalsvc.logic.results import ensure_complete
from evalsvc.logic.variants import (
    llm_variants,
    perturbed_variants,
    variants_bound,
    variants_bound_unread,
)
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import MAX_PAIRS, DatasetHeader, DatasetKind
from evalsvc.models.generation import AugmentIn
from evalsvc.models.jobs import Job, Status
from evalsvc.scoring.llm import LLMOutOfTime, configured_llm
from evalsvc.spending.meter import Usage
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import results as results_store


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
    # The lowest mean among the metrics that scored any pair (E10: one that applied to none
    # has no mean, and is not a target).
    means = {i: s.mean for i, s in enumerate(result.summaries) if s is not None}
    if not means:
        raise InvalidInput(
            f"result {results_id!r} has no metric that applied to any pair: give target_metric_idx"
        )
    return definitions[min(means, key=lambda i: (means[i], i))]


def _check_size(seed_count: int, multiple: int) -> None:
    total = seed_count * multiple
    if total > MAX_PAIRS:
        raise PayloadTooLarge(
            f"{seed_count} seed pairs x multiple {multiple} = {total} pairs, over the "
            f"{MAX_PAIRS} pairs a dataset may hold: lower multiple or narrow pair_query"
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
    """A new synthetic dataset of `body.multiple` variants of each selected seed pair, made
    inside the request (against `deadline`) or queued (logic.dispatch); the Augmentation
    carries the running job when the caller asked to be answered at once (`respond_async`).
    Its LLM work is held to the tenant's monthly limit before any call. A retry of the request
    (same Idempotency-Key `request_key` and body) finds the same queued job."""
    with spending.session(identity.tenant, "POST /augment", deadline.left()) as spend:
        # Made inside the session: the LLM it configures meters there.
        work = _Augmenting(identity, body, request_key)
        outcome = dispatch.submit(
            work, spend, deadline, respond_async=respond_async, wait_seconds=wait_seconds
        )
        return outcome.made(lambda job: work.of_job(job, spend))


# What a caller is told of an augmentation that did not end in the request, and where to follow it.
SUBJECT = augmentation_kind.SUBJECT


class _Augmenting:
    """One POST /augment as dispatch runs it."""

    subject = SUBJECT

    def __init__(self, identity: Identity, body: AugmentIn, key: str | None) -> None:
        self.identity = identity
        self.body = body
        self.key = key
        self.seed_id = dataset_logic.resolve_dataset_id(
            identity, DatasetKind.SEED, body.seed_data_id or "latest"
        )
        self.with_llm = configured_llm() is not None
        self._header: DatasetHeader | None = None
        self._target: tuple[str | None] | None = None

    def target(self) -> str | None:
        """The metric the variants aim at, found once."""
        if self._target is None:
            self._target = (target_metric(self.identity, self.body, self.seed_id),)
        return self._target[0]

    # ---- what dispatch reads -------------------------------------------------------------------

    def size(self) -> tuple[int, int | None]:
        self._header = dataset_logic.get_header(self.identity, DatasetKind.SEED, self.seed_id)
        return self._header.pair_count, self._header.bytes

    def fits_inline(self, pair_count: int, pair_bytes: int | None) -> bool:
        """With an LLM, at most so many generation calls (one per seed pair); without one, at
        most so many pairs and bytes written (perturbed variants are about as large as their
        seeds)."""
        settings = get_settings()
        multiple = self.body.multiple
        if self.with_llm:
            return pair_count <= settings.inline_max_generation_calls
        return (
            pair_count * multiple <= settings.inline_max_synthetic_pairs
            and (pair_bytes or 0) * multiple <= settings.inline_max_bytes
        )

    def select(self, *, keys_only: bool, keys: Selection | None = None) -> Selection:
        if keys is not None:
            return keys if keys_only else self._with_texts(keys)
        header, self._header = self._header, None
        selection = dataset_logic.select(
            self.identity,
            DatasetKind.SEED,
            self.seed_id,
            self.body.pair_query,
            "augment",
            keys_only=keys_only,
            header=header,
        )
        _check_size(len(selection.pairs), self.body.multiple)
        return selection

    def _with_texts(self, selection: Selection) -> Selection:
        return dataset_logic.with_texts(self.identity, selection, self.body.pair_query, "augment")

    # ---- inside the request --------------------------------------------------------------------

    def run_inline(
        self, selection: Selection, deadline: Deadline, spend: spending.Spending
    ) -> Augmentation:
        seeds, seed_header = selection.pairs, selection.header
        target = self.target()
        multiple = self.body.multiple
        llm = configured_llm(deadline.earlier(storing_seconds(len(seeds) * multiple)))
        if llm:
            try:
                pairs = llm_variants(llm, seeds, multiple, seed_header.system_prompt, target)
            except LLMOutOfTime:
                raise HandOver("the LLM did not write its variants within this request") from None
        else:
            pairs = [variant for seed in seeds for variant in perturbed_variants(seed, multiple)]
        header = datasets_store.write_dataset(
            self.identity.tenant,
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
                "seed": self.seed_id,
                "synthetic": header.dataset_id,
                "pairs": len(pairs),
                "by": "llm" if llm else "rules",
            },
        )
        return Augmentation(header, len(seeds), [target] if target else [], usage=spend.usage())

    # ---- queued --------------------------------------------------------------------------------

    def _check_bound(self, selection: Selection, spend: spending.Spending) -> None:
        """Before anything is queued: within what the month's limit leaves, as a queued
        evaluation is (each chunk reserves its own LLM work when it runs). The bound is the
        seeds' texts' when they are small enough to read here, else their sizes'."""
        llm = configured_llm()
        if llm is None or spend.limit() is None:
            return
        multiple, system_prompt = self.body.multiple, selection.header.system_prompt
        worth_reading = (selection.bytes or 0) <= get_settings().inline_max_bytes
        if selection.keys_only and selection.bytes is not None and worth_reading:
            selection = self._with_texts(selection)
        if selection.keys_only:
            bound = variants_bound_unread(
                llm, len(selection.ords), selection.bytes, multiple, system_prompt, self.target()
            )
        else:
            bound = variants_bound(llm, selection.pairs, multiple, system_prompt, self.target())
        spend.check_room(bound)

    def queue(self, selection: Selection, spend: spending.Spending, *, bounded: bool) -> Job:
        if bounded:
            self._check_bound(selection, spend)
        labels = (self.body.pair_query.pair_labels if self.body.pair_query else None) or []
        return augmentation_kind.queued(
            self.identity.tenant,
            job_id("ds_", self.identity.tenant, self.key),
            selection.header,
            selection.ords,
            labels,
            self.body.multiple,
            self.target(),
        )

    def of_job(self, job: Job, spend: spending.Spending) -> Augmentation:
        """The augmentation of the queued job: running, or the synthetic dataset it made."""
        target = self.target()
        done = Augmentation(
            header=None,
            seed_size=augmentation_kind.seed_count(job),
            target_metrics=[target] if target else [],
            job=job,
            usage=spend.usage(),
        )
        if job.status is Status.COMPLETE:
            tenant = self.identity.tenant
            header = datasets_store.get_header(tenant, DatasetKind.SYNTHETIC, job.job_id)
            if header is None:
                raise StorageUnavailable(
                    f"synthetic dataset {job.job_id!r} was made but is not readable yet"
                )
            done.header = header
            done.usage = done.usage + jobs.spent_of(job)
        return done
