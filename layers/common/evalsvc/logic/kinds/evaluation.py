"""Queued evaluations, one kind of work of the job engine (logic.jobs): an evaluation too large
for one request (logic.evaluations) is cut into chunks of pairs, scored by workers, and
completed from the totals its chunks left.

    queued    the request: the result (running) and its job in one transaction, then chunks
    run       a worker: score one chunk's pairs and store them; its totals (score counts and
              lowest pairs per metric) are counted with the chunk
    complete  whoever counts the last chunk: statistics from the chunks' totals, result
              complete and the dataset's newest, with the job's end
    failed    the result failed, saying why (its scored pairs stay: they explain it)
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import Failure, OutOfTime, Unrecoverable
from evalsvc.core.observability import metrics
from evalsvc.core.settings import get_settings
from evalsvc.logic import chunks, jobs, reproduce
from evalsvc.logic.pairs_digest import pair_digest, pairs_digest
from evalsvc.logic.scored_pairs import score_pairs, summarize_totals, totals
from evalsvc.models.datasets import DatasetHeader, Pair
from evalsvc.models.evaluations import EVALUATION_JOBS, EvaluationResult, ScoredPair
from evalsvc.models.jobs import Chunk, Job, Status, Tally
from evalsvc.models.metric_sets import embedding_metrics, is_judged, judge_calls
from evalsvc.scoring import checks
from evalsvc.scoring.embeddings import configured_embeddings
from evalsvc.scoring.jury import judge_of
from evalsvc.scoring.metric import scorers_for
from evalsvc.spending.meter import Usage
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import judge_cache
from evalsvc.storage import results as results_store
from evalsvc.storage.writes import Writes

# The kind's name (job id: the evaluation result's).
EVALUATION = EVALUATION_JOBS
# A chunk's totals: its pairs' digests (reproducibility.pair_digest), sorted, in base64.
DIGESTS = "digests"


def pairs_per_chunk(
    definitions: Sequence[str], bytes_per_pair: float | None, judge_samples: int = 1
) -> int:
    """As many pairs as keep a chunk within every chunk limit: check scorings, judge calls (k a
    judged pair and metric with judge_samples k), and the text its worker reads
    (EVALSVC_CHUNK_MAX_BYTES, from the dataset's mean pair size)."""
    settings = get_settings()
    checks_count = sum(1 for d in definitions if checks.is_check(d))
    calls_per_pair = judge_calls(definitions, 1, judge_samples)
    limits = []
    if checks_count:
        limits.append(settings.chunk_checks // checks_count)
    if calls_per_pair:
        limits.append(settings.chunk_judge_calls // calls_per_pair)
    if bytes_per_pair:
        limits.append(int(settings.chunk_max_bytes // bytes_per_pair))
    return max(1, min(limits, default=1))


def queued(
    result: EvaluationResult,
    header: DatasetHeader,
    ords: Sequence[str],
    labels: Sequence[str],
    max_cost: Decimal | None = None,
) -> Job:
    """Start the job of scoring `result` (running, stored with its job) over the selection
    whose ords are `ords`; the job as started, or as it stands when a retry of the same request
    started it before. With `max_cost` (the request's max_cost_usd), every chunk is held to
    what is left of it."""
    pieces = jobs.cut(
        EVALUATION,
        result.tenant,
        result.results_id,
        ords,
        pairs_per_chunk(result.definitions, header.bytes_per_pair, result.judge_samples),
    )
    result.status, result.pairs_done = Status.RUNNING, 0
    # The shards the selection was read from: its chunks read their ranges there.
    stored = datasets_store.stored_as_read(header)
    job = Job(
        kind=EVALUATION,
        tenant=result.tenant,
        job_id=result.results_id,
        chunk_count=len(pieces),
        pairs_total=len(ords),
        created_ms=result.created_ms,
        params={
            "dataset_version": stored.version,
            "dataset_shards": stored.shards,
            "dataset_append_shards": stored.append_shards,
            "labels": list(labels),
            **jobs.cap_params(max_cost),
        },
    )
    also = results_store.running(result, reproduce.cut_pieces(ords))
    return jobs.start(job, pieces, also, "evaluate again")


class Evaluations:
    """Queued evaluations as the job engine runs them."""

    name = EVALUATION
    completed_metric = "Evaluations"  # as an evaluation scored inside its request counts

    def run(self, job: Job, chunk: Chunk, attempt: int, deadline: Deadline) -> Tally | None:
        result = results_store.get(chunk.tenant, chunk.job_id)
        if result is None:
            raise Unrecoverable(f"evaluation result {chunk.job_id!r} is missing")
        pairs = _read(chunk, result, job)
        # What the chunk scored, for the result's pairs_digest: its pairs' digests, sorted.
        digests = b"".join(sorted(pair_digest(pair) for pair in pairs))
        positions: Sequence[int] = range(chunk.start, chunk.start + len(pairs))
        stored: dict[str, ScoredPair] = {}
        if chunk.requeues or attempt > 1:
            # An earlier delivery may have stored part of the chunk before its deadline.
            stored = results_store.get_scored(chunk.tenant, chunk.job_id, [p.id for p in pairs])
            todo = [k for k, pair in enumerate(pairs) if pair.id not in stored]
            pairs, positions = [pairs[k] for k in todo], [positions[k] for k in todo]
        needs_judge = any(is_judged(d) for d in result.definitions)
        judge = (
            judge_of(result.judges, result.jury, chunk.tenant, judge_cache, deadline)
            if needs_judge
            else None
        )
        embeddings = (
            configured_embeddings(chunk.tenant, judge_cache, deadline)
            if embedding_metrics(result.definitions)
            else None
        )
        metrics_of_set = scorers_for(result.definitions, judge, result.judge_samples, embeddings)
        scoring = score_pairs(metrics_of_set, pairs, result.system_prompt, positions, deadline)
        results_store.put_scored(chunk.tenant, chunk.job_id, scoring.scored)
        metrics.add_metric(name="PairsScored", unit="Count", value=len(scoring.scored))
        if not scoring.complete:
            raise OutOfTime(
                f"{chunks.describe(chunk)}: {len(pairs) - len(scoring.scored)} pairs were left "
                "when the worker's time ran out; the scored ones and the judge's verdicts are "
                "kept"
            )
        everything = [*stored.values(), *scoring.scored]
        return Tally(
            index=chunk.index,
            pairs=len(everything),
            bytes=sum(pair.listed_bytes for pair in everything),
            totals={
                **totals(
                    everything, len(result.definitions), result.cluster_by, len(result.judges or [])
                ),
                DIGESTS: base64.b64encode(digests).decode(),
            },
        )

    def complete(self, job: Job, tallies: Iterable[Tally], spent: Usage) -> Writes:
        result = results_store.get(job.tenant, job.job_id)
        if result is None:
            raise Unrecoverable(f"evaluation result {job.job_id!r} is missing")
        counted = [0, 0]  # pairs, bytes
        digests: list[bytes] = []  # 32 bytes a pair: 3.2 MB for 100,000

        def parts() -> Iterator[dict[str, Any]]:
            for tally in tallies:
                counted[0] += tally.pairs
                counted[1] += tally.bytes
                chunk_digests = base64.b64decode(tally.totals.pop(DIGESTS, ""))
                digests.extend(chunk_digests[k : k + 32] for k in range(0, len(chunk_digests), 32))
                yield tally.totals

        # One pass over the tallies, a page at a time: what is held is bounded by the metrics
        # and the clusters, not by the pairs or the chunks.
        summarize_totals(result, parts())
        scored = counted[0]
        if scored != job.pairs_total:
            raise Unrecoverable(
                f"{scored} scored pairs were counted for {job.pairs_total} selected; evaluate again"
            )
        result.pairs_done = scored
        result.scored_bytes = counted[1]
        if result.inputs is not None:
            # Every chunk's digests, or none from a chunk counted before they were kept.
            known = len(digests) == scored
            result.inputs.pairs_digest = pairs_digest(digests) if known else None
        # What the request used before it queued the rest, and every delivery of every chunk.
        result.usage = result.usage + spent
        return results_store.completing(result)

    def failed(self, job: Job, failure: Failure) -> Writes:
        return results_store.failing(job.tenant, job.job_id, failure)

    def discard(self, job: Job) -> None:
        """The scored pairs of a failed result stay: they cost nothing to keep and explain it."""


EVALUATIONS = jobs.register(Evaluations())


def _read(chunk: Chunk, result: EvaluationResult, job: Job) -> list[Pair]:
    pairs = datasets_store.read_range(
        chunk.tenant,
        result.dataset_kind,
        result.dataset_id,
        # A job started before versions were sized has no append shards (its appended pairs
        # are in its written shards), one before they were spread no shards either.
        datasets_store.Stored(
            str(job.params["dataset_version"]),
            int(job.params.get("dataset_shards", 1)),
            int(job.params.get("dataset_append_shards", 0)),
        ),
        chunk.first_ord,
        chunk.last_ord,
        chunk.member_set(),
        [str(label) for label in job.params.get("labels", [])],
    )
    if len(pairs) != chunk.count:
        raise Unrecoverable(
            f"the version of {result.dataset_kind.value} dataset {result.dataset_id!r} this "
            "evaluation read is no longer kept: its retention ended while it was being "
            "evaluated; evaluate the dataset again"
        )
    return pairs
