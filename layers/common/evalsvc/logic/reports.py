"""What the HTML reports (E4) show, read within the request's time: an evaluation result with
its score distributions, lowest pairs, votes, agreement and what people would say of every pair
(E12, from the votes read: logic.anchored) (GET /evaluation/{id}/report), and a
comparison with the texts of the pairs that moved (GET /compare/report), and a monitor's runs
(GET /monitors/{id}/report).

A listed pair's texts are those the result scored, read from the dataset version it pinned
(logic.reproduce), whatever happened to the dataset since; a version past its retention is
said, with the day it expired. Reading is bounded whatever the result holds. The evaluation
page reads no scored pair beyond the listed ones: its statistics and score histograms are what
finishing the result counted and stored with it (a result stored before histograms were kept
has its scores counted here, only when it is small: LEGACY_HISTOGRAM_PAIRS). Pair texts are
read for the listed pairs alone, up to PAIR_TEXT_READ_BYTES; votes and comments up to
CRITIQUE_READ_BYTES. The comparison page reads each result's scores once, as POST /compare
does. What is not read in time or within those bounds is named on the page, never silently
dropped. The monitor page reads what GET /monitors/{id}/history reads for its largest page: the
newest MAX_HISTORY runs, and one result for each set of metric definitions they name. The pages
themselves are drawn by `evalsvc.reports`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeVar

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import Gone
from evalsvc.core.observability import LogContextPool
from evalsvc.logic import anchored, comparisons, judge_agreement, reproduce
from evalsvc.logic.results import existing_result, fill_lowest_reasons
from evalsvc.models.api_keys import Identity
from evalsvc.models.comparisons import CompareIn
from evalsvc.models.evaluations import Critique, EvaluationResult, VoteObservation
from evalsvc.models.jobs import Status
from evalsvc.models.metric_sets import NEEDS
from evalsvc.models.reports import (
    AnchoredSection,
    Calls,
    ChangeTexts,
    ComparisonReport,
    EvaluationReport,
    MetricSection,
    MonitorReport,
    PairText,
    ShownPair,
    VoteCounts,
)
from evalsvc.statistics.agreement import Agreement
from evalsvc.statistics.scores import histogram
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import results as results_store

if TYPE_CHECKING:
    pass
T = TypeVar("T")

# The most pair text (UTF-8 bytes, before cutting) one report reads for its listed pairs.
PAIR_TEXT_READ_BYTES = 16 * 1024 * 1024
# The most votes and comments one report reads (DynamoDB item bytes), and how many.
CRITIQUE_READ_BYTES = 2 * 1024 * 1024
CRITIQUE_READ_ITEMS = 5_000
# The time a comparison page keeps, after comparing, to read the moved pairs' texts and answer.
TEXT_READ_SECONDS = 4.0
# A result stored before its score histograms were kept has its scores counted for the page
# when it has at most this many scored pairs (a DynamoDB page or two); a larger one's page says
# the histograms were not stored, so that no view costs a read of every scored pair.
LEGACY_HISTOGRAM_PAIRS = 2_000
# The interval half-width (a share: 0.05 is ±5 points) the page says how many audited pairs
# would reach, beside what people would say of every pair (E12).
ANCHORED_HALF_WIDTH = 0.05


def _at(values: Sequence[T] | None, idx: int) -> T | None:
    """values[idx], None when there are none (or fewer)."""
    return values[idx] if values is not None and idx < len(values) else None


# ---- evaluation --------------------------------------------------------------------------------


def evaluation_report(identity: Identity, results_id: str, deadline: Deadline) -> EvaluationReport:
    result = existing_result(identity, results_id)
    critiques, more = critiques_store.page(
        identity.tenant, results_id, "", CRITIQUE_READ_ITEMS, CRITIQUE_READ_BYTES
    )
    shown = _lowest_pairs(identity.tenant, result)
    agreement: dict[int, Agreement] = {}
    people: dict[int, AnchoredSection] = {}
    if result.status is Status.COMPLETE and critiques and more is None:
        observed = [
            VoteObservation(
                c.metric_idx,
                c.pair_id,
                c.score,
                c.vote,
                c.source,
                voter=critiques_store.user_key(c.user),
            )
            for c in critiques
        ]
        observed = judge_agreement.with_scores(identity.tenant, result, observed)
        for metric in judge_agreement.per_metric(result.definitions, observed, "all"):
            if metric.figures.votes:
                agreement[metric.metric_idx] = metric.figures
        people = _anchored(result, observed)
    histograms, note = _histograms(identity.tenant, result, deadline)
    critiques.sort(key=_newest_first)  # and so each pair's, grouped below
    on_pair: dict[tuple[int, str], list[Critique]] = defaultdict(list)
    votes = [VoteCounts() for _ in result.definitions]
    for c in critiques:
        on_pair[(c.metric_idx, c.pair_id)].append(c)
        if 0 <= c.metric_idx < len(votes):
            counts = votes[c.metric_idx]
            if c.vote > 0:
                counts.up += 1
            elif c.vote < 0:
                counts.down += 1
            else:
                counts.neutral += 1
            counts.comments += bool(c.comment.strip())
    sections = []
    for idx, definition in enumerate(result.definitions):
        lowest = shown[idx] if idx < len(shown) else []
        for pair in lowest:
            pair.critiques = on_pair.get((idx, pair.pair_id), [])
        sections.append(
            MetricSection(
                idx=idx,
                definition=definition,
                summary=result.summaries[idx] if idx < len(result.summaries) else None,
                histogram=histograms[idx] if histograms is not None else None,
                lowest=lowest,
                votes=votes[idx],
                agreement=agreement.get(idx),
                anchored=people.get(idx),
                clustered=_at(result.clustered, idx),
                judge_noise=_at(result.judge_noise, idx),
                not_applicable=result.not_applicable_count(idx),
                needs=" and ".join(NEEDS.get(definition, ())),
            )
        )
    return EvaluationReport(
        result=result,
        metrics=sections,
        critiques=critiques,
        critiques_more=more is not None,
        histogram_note=note,
    )


def _anchored(result: EvaluationResult, votes: list[VoteObservation]) -> dict[int, AnchoredSection]:
    """Per metric with audit votes, what people would say of every pair (E12) and the audited
    pairs an interval of ANCHORED_HALF_WIDTH would need, from every vote of the result (read
    whole: a part of them would give a wrong figure, never a smaller one)."""
    sections = {}
    for metric in anchored.of_result(result, votes):
        if metric.figures.n_labeled == 0 or metric.judge_only is None:
            continue
        planned = anchored.plan_of(
            result, votes, metric.metric_idx, ANCHORED_HALF_WIDTH, metric.alpha
        )
        sections[metric.metric_idx] = AnchoredSection(
            metric.figures, metric.judge_only, metric.alpha, ANCHORED_HALF_WIDTH, planned
        )
    return sections


def _newest_first(c: Critique) -> tuple[int, str]:
    return (-c.time_ms, c.id)


def _histograms(
    tenant: str, result: EvaluationResult, deadline: Deadline
) -> tuple[list[list[int]] | None, str]:
    """Per metric, how many scored pairs fall in each 1-5 bin (None while the result runs or
    when they cannot be drawn), and why they are not drawn ("" when they are or the result
    is not complete)."""
    if result.status is not Status.COMPLETE:
        return None, ""
    if result.histograms is not None:
        return result.histograms, ""
    if result.pair_count > LEGACY_HISTOGRAM_PAIRS:
        return None, (
            "The score distributions are not drawn: this result was stored before they were "
            f"kept with results, and counting its {result.pair_count:,} scored pairs on every "
            "view would cost too much. Evaluate again to see them."
        )
    try:
        return _count_histograms(tenant, result, deadline), ""
    except comparisons.TimeUp:
        return None, (
            f"The score distributions are not drawn: the {result.pair_count:,} scored pairs "
            "could not be read in this request's time."
        )


def _count_histograms(tenant: str, result: EvaluationResult, deadline: Deadline) -> list[list[int]]:
    """The histograms of a result stored without them, from its scores; TimeUp when they
    cannot be read within the deadline."""
    counts: list[Counter[float]] = [Counter() for _ in result.definitions]
    pool = LogContextPool(max_workers=1, thread_name_prefix="report")
    try:
        pages = results_store.score_pages(tenant, result.results_id)
        for _, scores in comparisons.prefetched(pages, pool, deadline):
            for metric, score in zip(counts, scores, strict=False):
                if score is not None:
                    metric[score] += 1
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return [histogram(metric) for metric in counts]


def _lowest_pairs(tenant: str, result: EvaluationResult) -> list[list[ShownPair]]:
    fill_lowest_reasons(tenant, result)
    wanted = list(dict.fromkeys(low.pair_id for metric in result.lowest for low in metric))
    texts = _pair_texts(tenant, result, wanted) if wanted else {}
    return [
        [ShownPair(low.pair_id, low.score, low.reason, texts[low.pair_id]) for low in metric]
        for metric in result.lowest
    ]


def _pair_texts(
    tenant: str, result: EvaluationResult, pair_ids: Sequence[str]
) -> dict[str, PairText]:
    """The texts `result` scored of `pair_ids`, within PAIR_TEXT_READ_BYTES, from the dataset
    version it pinned (reproduce.scored_texts; a result stored before it pinned one goes by
    times, and a pair written since says so)."""
    try:
        scored = reproduce.scored_texts(tenant, result, pair_ids, PAIR_TEXT_READ_BYTES)
    except Gone as exc:
        return dict.fromkeys(pair_ids, PairText(expired=exc.message))
    texts = {}
    for pid in pair_ids:
        pair = scored.pairs.get(pid)
        if pid in scored.changed:
            texts[pid] = PairText(changed=True)
        elif pair is None:
            unread = pid in scored.unread
            texts[pid] = PairText(missing=not unread, unread=unread)
        else:
            contexts = tuple(pair.contexts) if pair.contexts is not None else None
            messages = tuple(pair.messages) if pair.messages is not None else None
            texts[pid] = PairText(
                pair.input,
                pair.output,
                reference=pair.reference,
                contexts=contexts,
                messages=messages,
                calls=Calls.of(pair.tool_calls, pair.expected_tool_calls),
            )
    return texts


# ---- comparison --------------------------------------------------------------------------------


def comparison_report(identity: Identity, body: CompareIn, deadline: Deadline) -> ComparisonReport:
    comparison, baseline, candidate = comparisons.compare_results(identity, body, deadline)
    moved = list(dict.fromkeys(c.pair_id for c in comparison.regressions + comparison.improvements))
    texts: dict[str, ChangeTexts] = {}
    if moved and deadline.left() < TEXT_READ_SECONDS:
        # The comparison took the request's time: the page goes without the texts.
        unread = ChangeTexts(PairText(unread=True), PairText(unread=True))
        texts = dict.fromkeys(moved, unread)
    elif moved:
        before = _pair_texts(identity.tenant, baseline, moved)
        after = _pair_texts(identity.tenant, candidate, moved)
        texts = {pid: ChangeTexts(before[pid], after[pid]) for pid in moved}
    return ComparisonReport(comparison, baseline, candidate, texts)


# ---- monitor -----------------------------------------------------------------------------------


def monitor_report(identity: Identity, monitor_id: str) -> MonitorReport:
    """The monitor's page: 404 when the tenant has no such monitor, 400 for a malformed id."""
    # Imported here, not with this module: the other report routes do without the monitors'
    # modules (the monitor report's route imports logic.monitors at its own start; the history
    # adds only its own few lines to what this module imports).
    from evalsvc.logic import monitor_history, monitors

    monitor, stored = monitors.get(identity, monitor_id)
    # The page bounds what it draws itself (pages.render: texts cut until it fits).
    page = monitor_history.history(
        identity, monitor_id, monitor_history.MAX_HISTORY, None, max_bytes=None
    )
    return MonitorReport(monitor, stored, page.runs, page.next_cursor is not None)
