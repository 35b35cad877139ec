"""Estimates: what an evaluation's LLM work would use and cost, at most and as expected, before
it runs (POST /evaluate/estimate). No LLM call and no write: the dataset, the metrics set and
the judge cache are read.

A dataset small enough to read inside a request (EVALSVC_INLINE_MAX_BYTES, and at most
EXACT_MAX_KEYS judge cache lookups) is read: its calls are bounded from the very texts they
would send, and the verdicts the judge cache holds are counted as cached (no call, no cost). A
larger one is bounded without its texts, from the sizes the selection's keys carry (each pair's
bytes), and none is taken to be cached.

With judge_samples k, every judged (pair, metric) is k calls, each its own cache entry: the
bounds, the calls and the cache lookups are k times those of one sample.
"""

from __future__ import annotations

from evalsvc.core.settings import get_settings
from evalsvc.logic import datasets as dataset_logic
from evalsvc.logic import metric_sets
from evalsvc.logic.datasets import Selection
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import MAX_PAIR_TEXT_BYTES
from evalsvc.models.evaluations import EvaluateIn
from evalsvc.models.metric_sets import calls_per_pair, embedding_metrics, is_judged
from evalsvc.scoring.embeddings import CachedEmbeddings, configured_embeddings
from evalsvc.scoring.jury import AnyJudge, judge_of
from evalsvc.scoring.metric import Metrics, scorers_for
from evalsvc.spending.meter import Bound
from evalsvc.storage import judge_cache

# The most judge cache keys an estimate looks up (100 a call): more are bounded unread.
EXACT_MAX_KEYS = 20_000


def texts_worth_reading(metrics: Metrics, pair_count: int, pair_bytes: int | None) -> bool:
    """Whether a selection of that many pairs (and bytes: None, unknown) is bounded from its
    texts and the judge cache: small enough to read inside a request, and to look up (k cache
    keys a judged (pair, metric) with judge_samples k; a rag: metric reads two: its answer, then
    its claims; with a jury, each judge's)."""
    judges = len(metrics.judge.names) if metrics.judge is not None else 1
    judge_keys = judges * sum(calls_per_pair(question) for _, question in metrics.questions)
    return (
        pair_bytes is not None
        and pair_bytes <= get_settings().inline_max_bytes
        and pair_count * judge_keys * metrics.judge_samples <= EXACT_MAX_KEYS
    )


def selection_bound(
    judge: AnyJudge | None,
    metrics: Metrics,
    selection: Selection,
    embeddings: CachedEmbeddings | None = None,
) -> Bound:
    """The bound of scoring the selection with the models: the judge's calls from its texts and
    the judge cache when it holds them, else from its size (every call counted; a dataset
    stored before sizes were kept bounded as if each pair were as large as pairs can be), every
    judged (pair, metric) asked metrics.judge_samples times; and with an embed: metric, the
    embeddings of its outputs and references (E10) the same way."""
    questions = [question for _, question in metrics.questions]
    header, count = selection.header, len(selection.pairs)
    pair_bytes = selection.bytes
    if pair_bytes is None:
        pair_bytes = count * MAX_PAIR_TEXT_BYTES
    bound = Bound()
    if judge is not None and questions:
        if selection.keys_only:
            bound += judge.bound_unread(
                questions,
                header.system_prompt,
                count,
                pair_bytes,
                metrics.judge_samples,
                documented=selection.documented,
            )
        else:
            bound += judge.plan(
                questions, selection.pairs, header.system_prompt, metrics.judge_samples
            ).bound
    if embeddings is not None and metrics.embedded:
        if selection.keys_only:
            bound += embeddings.bound_unread(count, pair_bytes)
        else:
            bound += embeddings.bound(
                [(p.output, p.reference) for p in selection.pairs if p.reference is not None]
            )
    return bound


def estimate(identity: Identity, body: EvaluateIn) -> tuple[int, Bound]:
    """(pairs selected, bound of their model calls) of POST /evaluate with `body`. A metric
    with no model configured to score it is a 400, as it is for the evaluation. The dataset's
    header is read once, and its selection once (keys only when its texts are not worth
    reading)."""
    kind, reference = body.dataset
    dataset_id = dataset_logic.resolve_dataset_id(identity, kind, reference)
    metrics_set = metric_sets.get_metrics_set(identity, body.metrics_id)
    definitions = metrics_set.definitions
    needs_judge = any(is_judged(d) for d in definitions)
    judge = (
        judge_of(metrics_set.judges, metrics_set.jury, identity.tenant, judge_cache)
        if needs_judge
        else None
    )
    embeddings = (
        configured_embeddings(identity.tenant, judge_cache)
        if embedding_metrics(definitions)
        else None
    )
    metrics = scorers_for(definitions, judge, body.judge_samples, embeddings)
    header = dataset_logic.get_header(identity, kind, dataset_id)
    models = judge is not None or embeddings is not None
    keys_only = not models or not texts_worth_reading(metrics, header.pair_count, header.bytes)
    selection = dataset_logic.select(
        identity, kind, dataset_id, body.pair_query, "evaluate", keys_only=keys_only, header=header
    )
    if not models:
        return len(selection.pairs), Bound()
    return len(selection.pairs), selection_bound(judge, metrics, selection, embeddings)
