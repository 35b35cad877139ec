"""Estimates: what an evaluation's LLM work would use and cost, at most and as expected, before
it runs (POST /evaluate/estimate). No LLM call and no write: the dataset, the metrics set and
the judge cache are read.

A dataset small enough to read inside a request (EVALSVC_INLINE_MAX_BYTES, and at most
EXACT_MAX_KEYS judge cache lookups) is read: its calls are bounded from the very texts they
would send, and the verdicts the judge cache holds are counted as cached (no call, no cost). A
larger one is bounded without its texts: every selected pair is taken to be at most as large
as all the dataset's pairs together, and none is taken to be cached.
"""

from __future__ import annotations

from evalsvc.logic import datasets as dataset_logic
from evalsvc.logic import metrics as metrics_logic
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import MAX_TEXT_CHARS, DatasetHeader, DatasetKind
from evalsvc.models.evaluations import EvaluateIn, PairQuery
from evalsvc.scoring import checks
from evalsvc.scoring.judges import CachedJudge, configured_judge
from evalsvc.scoring.metric import Metrics, scorers_for
from evalsvc.settings import get_settings
from evalsvc.usage import Bound

# The most judge cache keys an estimate looks up (100 a call): more are bounded unread.
EXACT_MAX_KEYS = 20_000


def bound_unread(
    judge: CachedJudge, metrics: Metrics, header: DatasetHeader, pair_count: int
) -> Bound:
    """The bound of judging `pair_count` pairs of the dataset of `header`, texts unread."""
    questions = [question for _, question in metrics.questions]
    # A dataset stored before its size was kept: its pairs may be as large as pairs can be.
    largest = pair_count * 2 * MAX_TEXT_CHARS * 4
    pair_bytes = largest if header.bytes is None else header.bytes
    return judge.bound_unread(questions, header.system_prompt, pair_count, pair_bytes)


def estimate(identity: Identity, body: EvaluateIn) -> tuple[int, Bound]:
    """(pairs selected, bound of their judge calls) of POST /evaluate with `body`. A question
    with no judge configured is a 400, as it is for the evaluation."""
    kind, reference = body.dataset
    dataset_id = dataset_logic.resolve_dataset_id(identity, kind, reference)
    definitions = metrics_logic.get_metrics_set(identity, body.metrics_id).definitions
    needs_judge = any(not checks.is_check(d) for d in definitions)
    judge = configured_judge(identity.tenant) if needs_judge else None
    metrics = scorers_for(definitions, judge)
    if judge is None:
        _, refs, _ = dataset_logic.select_pair_refs(
            identity, kind, dataset_id, body.pair_query, "evaluate", keys_only=True
        )
        return len(refs), Bound()
    return selection_bound(identity, kind, dataset_id, body.pair_query, judge, metrics)


def selection_bound(
    identity: Identity,
    kind: DatasetKind,
    dataset_id: str,
    query: PairQuery | None,
    judge: CachedJudge,
    metrics: Metrics,
) -> tuple[int, Bound]:
    """(pairs selected, bound of judging them): from their texts and the judge cache when the
    dataset can be read inside a request, else from its header."""
    whole = dataset_logic.get_header(identity, kind, dataset_id)
    too_large = whole.bytes is None or whole.bytes > get_settings().inline_max_bytes
    if too_large or whole.pair_count * len(metrics.questions) > EXACT_MAX_KEYS:
        header, refs, _ = dataset_logic.select_pair_refs(
            identity, kind, dataset_id, query, "evaluate", keys_only=True
        )
        return len(refs), bound_unread(judge, metrics, header, len(refs))
    header, pairs, _ = dataset_logic.select_pair_refs(identity, kind, dataset_id, query, "evaluate")
    questions = [question for _, question in metrics.questions]
    return len(pairs), judge.plan(questions, pairs, header.system_prompt).bound
