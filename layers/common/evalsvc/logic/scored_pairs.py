"""Scoring pairs and summarising the scores: shared by evaluations scored inside a request and
by the workers of queued ones, so both give the same numbers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from evalsvc.core.deadlines import Deadline
from evalsvc.models.datasets import Pair
from evalsvc.models.evaluations import (
    LOWEST_PER_METRIC,
    MAX_REASON_CHARS,
    EvaluationResult,
    LowScore,
    ScoredPair,
)
from evalsvc.models.metric_sets import is_judged, missing, not_applicable_reason
from evalsvc.scoring.checks import Score
from evalsvc.scoring.metric import Metrics, PendingScores, Verdicts
from evalsvc.statistics.error_bars import (
    ClusterSums,
    cluster_digest,
    judge_noise_from,
    noise_numerator,
)
from evalsvc.statistics.jury import JurySums
from evalsvc.statistics.scores import Summary, histogram, summarize_counts


def _reason(text: str) -> str:
    text = text.strip() or "no reason given"
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 3] + "..."


def _lowest(scored: Sequence[ScoredPair], metric: int) -> list[tuple[ScoredPair, float]]:
    """The LOWEST_PER_METRIC pairs lowest on a metric, with their score, lowest first, ties in
    dataset order; pairs the metric is not applicable to are not among them."""
    applicable = [(p, score) for p in scored if (score := p.scores[metric]) is not None]
    return sorted(applicable, key=lambda ps: (ps[1], ps[0].index))[:LOWEST_PER_METRIC]


def lowest_scoring(scored: Sequence[ScoredPair], metric: int) -> list[LowScore]:
    """The LOWEST_PER_METRIC lowest scores of a metric, lowest first, ties in dataset order."""
    return [LowScore(p.pair_id, score, p.reasons[metric]) for p, score in _lowest(scored, metric)]


def score_counts(
    scored: Iterable[Sequence[float | None]], metric_count: int
) -> list[Counter[float]]:
    """Per metric, how many times each score occurs among the pairs it applies to."""
    counts: list[Counter[float]] = [Counter() for _ in range(metric_count)]
    for scores in scored:
        for m, score in enumerate(scores):
            if score is not None:
                counts[m][score] += 1
    return counts


def not_applicable_counts(scored: Iterable[Sequence[float | None]], metric_count: int) -> list[int]:
    """Per metric, how many pairs it is not applicable to (E10)."""
    counts = [0] * metric_count
    for scores in scored:
        for m, score in enumerate(scores):
            if score is None:
                counts[m] += 1
    return counts


def summary_of(counts: Counter[float]) -> Summary | None:
    """The statistics of a metric's scores; None when the metric applied to no pair."""
    return summarize_counts(counts) if counts else None


def summarize_result(result: EvaluationResult, scored: Sequence[ScoredPair]) -> None:
    """Fill the statistics, score histograms, lowest pairs, not-applicable counts and error bars
    (E6) of `result` from its scored pairs (dataset order)."""
    count = len(result.definitions)
    counts = score_counts((p.scores for p in scored), count)
    result.summaries = [summary_of(c) for c in counts]
    result.histograms = [histogram(c) for c in counts]
    result.lowest = [lowest_scoring(scored, m) for m in range(count)]
    result.not_applicable = not_applicable_counts((p.scores for p in scored), count)
    errors = ErrorBarTotals(count)
    errors.add(_error_bar_totals(scored, count, result.cluster_by))
    errors.fill(result)
    if result.judges:
        juries = JuryTotals(result)
        juries.add(_jury_totals(scored, count, len(result.judges)))
        juries.fill(result)


def totals(
    scored: Sequence[ScoredPair],
    metric_count: int,
    cluster_by: str | None = None,
    judges: int = 0,
) -> dict[str, Any]:
    """What a chunk of scored pairs contributes to its result's statistics, small whatever the
    reasons: per metric, how many times each score occurs (enough for the exact mean, spread
    and median) and its LOWEST_PER_METRIC lowest pairs (id, score, position); with
    `cluster_by`, each cluster's size and score sums, and with repeated judging the judge's
    noise (_error_bar_totals); per metric the pairs it is not applicable to (E10); and with a
    jury of `judges` judges, per metric the sums of its judges' scores (E13, _jury_totals)."""
    counts = score_counts((p.scores for p in scored), metric_count)
    lowest = [_lowest(scored, m) for m in range(metric_count)]
    part: dict[str, Any] = {
        "counts": [sorted(c.items()) for c in counts],
        "lowest": [[[p.pair_id, score, p.index] for p, score in metric] for metric in lowest],
        **_error_bar_totals(scored, metric_count, cluster_by),
    }
    not_applicable = not_applicable_counts((p.scores for p in scored), metric_count)
    if any(not_applicable):
        part["not_applicable"] = not_applicable
    if judges:
        part.update(_jury_totals(scored, metric_count, judges))
    return part


def _jury_totals(scored: Sequence[ScoredPair], metric_count: int, judges: int) -> dict[str, Any]:
    """E13's share of a chunk's totals: per metric the jury's sums (statistics.jury) over the
    pairs its judges scored, None for a metric they did not."""
    sums: list[JurySums | None] = [None] * metric_count
    for pair in scored:
        if pair.judge_scores is None:
            continue
        for m, scores in enumerate(pair.judge_scores):
            if scores and pair.scores[m] is not None:
                found = sums[m]
                if found is None:
                    found = sums[m] = JurySums(judges)
                found.add(scores)
    return {"jury": [None if s is None else s.as_json() for s in sums]}


class JuryTotals:
    """A jury's figures from its chunks' totals, added up one chunk at a time."""

    def __init__(self, result: EvaluationResult) -> None:
        self.judges = len(result.judges or [])
        self.sums = [JurySums(self.judges) for _ in result.definitions]

    def add(self, part: dict[str, Any]) -> None:
        for m, value in enumerate(part.get("jury") or ()):
            if value is not None:
                self.sums[m].merge(JurySums.from_json(self.judges, value))

    def fill(self, result: EvaluationResult) -> None:
        """result.juries: per judged metric its judges' alpha and means; None for the rest."""
        names = list(result.judges or [])
        result.juries = [
            self.sums[m].figures(names, result.jury) if is_judged(definition) else None
            for m, definition in enumerate(result.definitions)
        ]


def _cluster_of(pair: ScoredPair, cluster_by: str) -> str | None:
    """The pair's cluster, None when it is a cluster of its own (unlabelled, or without a
    conversation_id, or stored before clusters were kept)."""
    if cluster_by == "label":
        return pair.label_cluster
    if cluster_by == "conversation":
        return pair.conversation_cluster
    return pair.input_cluster


def _error_bar_totals(
    scored: Sequence[ScoredPair], metric_count: int, cluster_by: str | None
) -> dict[str, Any]:
    """E6's share of a chunk's totals. `clusters` (with cluster_by): `sums`, per cluster met
    [name, n_c, [S_c per metric]], and `singles`, per metric the score counts of the pairs
    that are clusters of their own (no name to share), which need no entry each. `noise`
    (with judge samples): per metric [Σ noise_numerator, pairs]. Clusters met in several
    chunks are added up at the finish (ErrorBarTotals)."""
    out: dict[str, Any] = {}
    if cluster_by is not None:
        clusters = ClusterSums(metric_count)
        for pair in scored:
            clusters.add(_cluster_of(pair, cluster_by), pair.scores)
        out["clusters"] = clusters.as_json()
    sampled = [p.samples for p in scored if p.samples is not None]
    if sampled:
        noise = [[0, 0] for _ in range(metric_count)]
        for samples in sampled:
            for m, values in enumerate(samples):
                if len(values) > 1:
                    noise[m][0] += noise_numerator(values)
                    noise[m][1] += 1
        out["noise"] = noise
    return out


class ErrorBarTotals:
    """The error bars of a result from its chunks' totals, added up one chunk at a time: memory
    bounded by the clusters (G) and the metrics, whatever the number of pairs or chunks."""

    def __init__(self, metric_count: int) -> None:
        self.metric_count = metric_count
        self.clusters = ClusterSums(metric_count)
        self.noise = [[0, 0] for _ in range(metric_count)]
        self.clustered = False
        self.sampled = False
        self.not_applicable = [0] * metric_count

    def add(self, part: dict[str, Any]) -> None:
        clusters = part.get("clusters")
        if clusters is not None:
            self.clustered = True
            self.clusters.merge(clusters)
        for m, times in enumerate(part.get("not_applicable", ())):
            self.not_applicable[m] += int(times)
        noise = part.get("noise")
        if noise is not None:
            self.sampled = True
            for m, (numerator, pairs) in enumerate(noise):
                self.noise[m][0] += int(numerator)
                self.noise[m][1] += int(pairs)

    def fill(self, result: EvaluationResult) -> None:
        """result.clustered (with cluster_by), around each metric's exact mean (None for a
        metric no pair applies to), result.judge_noise (judge_samples > 1, None for a metric the
        judge does not score)."""
        if result.cluster_by is not None:
            result.clustered = [
                None if summary is None else self.clusters.clustered(m, summary.mean)
                for m, summary in enumerate(result.summaries)
            ]
        if result.judge_samples > 1:
            result.judge_noise = [
                None
                if not is_judged(definition)
                else judge_noise_from(numerator, pairs, result.judge_samples)
                for definition, (numerator, pairs) in zip(
                    result.definitions, self.noise, strict=True
                )
            ]


def summarize_totals(result: EvaluationResult, parts: Iterable[dict[str, Any]]) -> None:
    """Fill the statistics, score histograms, lowest pairs and error bars of `result` from the
    totals of all its chunks, read one at a time: exactly what summarize_result gives for the
    same pairs (the clustered figures up to float rounding of the cluster sums)."""
    count = len(result.definitions)
    counts: list[Counter[float]] = [Counter() for _ in range(count)]
    candidates: list[list[tuple[float, int, str]]] = [[] for _ in range(count)]
    errors = ErrorBarTotals(count)
    juries = JuryTotals(result) if result.judges else None
    for part in parts:
        if juries is not None:
            juries.add(part)
        for m in range(count):
            for value, times in part["counts"][m]:
                counts[m][float(value)] += int(times)
            candidates[m].extend(
                (float(score), int(index), str(pid)) for pid, score, index in part["lowest"][m]
            )
            candidates[m].sort(key=lambda c: (c[0], c[1]))
            del candidates[m][LOWEST_PER_METRIC:]
        errors.add(part)
    result.summaries = [summary_of(c) for c in counts]
    result.histograms = [histogram(c) for c in counts]
    result.lowest = [
        [LowScore(pid, score) for score, _, pid in metric[:LOWEST_PER_METRIC]]
        for metric in candidates
    ]
    result.not_applicable = list(errors.not_applicable)
    errors.fill(result)
    if juries is not None:
        juries.fill(result)


@dataclass(slots=True)
class Scoring:
    """The pairs scored on every metric, in order; `complete` unless the deadline came first
    (then `scored` holds the pairs finished by then)."""

    scored: list[ScoredPair]
    complete: bool


def score_pairs(
    metrics: Metrics,
    pairs: Sequence[Pair],
    system_prompt: str,
    positions: Sequence[int] | None = None,
    deadline: Deadline | None = None,
) -> Scoring:
    """Every pair scored on every metric; `positions` are the pairs' positions in the dataset
    (0, 1, 2… by default). The judge's and the embeddings model's calls are in flight while the
    checks are scored here; checks stop at `deadline`, the models' calls at the deadline their
    clients were given. A metric a pair lacks what it needs for (models.metric_sets.missing)
    is not applicable to it: its score is None, with a reason that says so, and no scorer is
    asked."""
    if positions is None:
        positions = range(len(pairs))
    definitions = metrics.definitions
    judging = None
    similarities: PendingScores | None = None
    embedded: list[int] = []
    try:
        if metrics.questions:
            assert metrics.judge is not None
            questions = [question for _, question in metrics.questions]
            judging = metrics.judge.begin(questions, pairs, system_prompt, metrics.judge_samples)
        if metrics.embedded:
            assert metrics.embeddings is not None
            embedded = [i for i, pair in enumerate(pairs) if pair.reference is not None]
            similarities = metrics.embeddings.begin(
                [(pairs[i].output, pairs[i].reference or "") for i in embedded]
            )
        checked: list[dict[int, Score | None]] = []
        for pair in pairs:
            if deadline is not None and deadline.passed():
                break
            checked.append(
                {
                    m: None if missing(definitions[m], pair) else score(pair)
                    for m, score in metrics.checks
                }
            )
        verdicts = judging.result() if judging else Verdicts({}, complete=True)
        similar = similarities.result() if similarities else {}
    finally:
        if judging:
            judging.close()
        if similarities:
            similarities.close()
    by_pair = {i: similar[k] for k, i in enumerate(embedded) if k in similar}
    scored = []
    for offset, by_metric in enumerate(checked):
        pair = pairs[offset]
        for q, (m, definition) in enumerate(metrics.questions):
            if missing(definition, pair):
                by_metric[m] = None
            elif (verdict := verdicts.scores.get((q, offset))) is not None:
                by_metric[m] = verdict
        for m in metrics.embedded:
            if pair.reference is None:
                by_metric[m] = None
            elif offset in by_pair:
                by_metric[m] = by_pair[offset]
        if len(by_metric) < metrics.count:
            continue  # a verdict is missing: the deadline came first
        scored.append(_scored(metrics, pair, positions[offset], offset, by_metric, verdicts))
    return Scoring(scored, complete=len(scored) == len(pairs))


def _scored(
    metrics: Metrics,
    pair: Pair,
    position: int,
    offset: int,
    by_metric: dict[int, Score | None],
    verdicts: Verdicts,
) -> ScoredPair:
    """The scored pair of `by_metric` (a Score per metric, None where not applicable)."""
    samples = None
    if metrics.judge_samples > 1:
        by_question = {
            m: verdicts.samples.get((q, offset), []) for q, (m, _) in enumerate(metrics.questions)
        }
        samples = [by_question.get(m, []) for m in range(metrics.count)]
    judge_scores = None
    if verdicts.by_judge:
        judged = {
            m: verdicts.by_judge.get((q, offset), []) for q, (m, _) in enumerate(metrics.questions)
        }
        judge_scores = [judged.get(m, []) for m in range(metrics.count)]
    scores: list[float | None] = []
    reasons: list[str] = []
    for m in range(metrics.count):
        score = by_metric[m]
        if score is None:
            need = missing(metrics.definitions[m], pair)
            scores.append(None)
            reasons.append(not_applicable_reason(metrics.definitions[m], need or "reference"))
        else:
            scores.append(score.value)
            reasons.append(_reason(score.reason))
    return ScoredPair(
        pair_id=pair.id,
        index=position,
        scores=scores,
        reasons=reasons,
        label_cluster=cluster_digest(pair.labels[0]) if pair.labels else None,
        input_cluster=cluster_digest(pair.input),
        samples=samples,
        conversation_cluster=(
            None if pair.conversation_id is None else cluster_digest(pair.conversation_id)
        ),
        judge_scores=judge_scores,
    )
