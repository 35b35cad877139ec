"""Comparing two evaluation results pair by pair (POST /compare): did the candidate do better
than the baseline, beyond noise?

Pairs are matched by pair id and metrics by their exact definition text. Both results' scores
are read in DynamoDB pages, in pair id order, side by side (each result's next page is fetched
while the current ones are matched), and merged like two sorted lists. What is kept while
reading is small whatever the results hold: per metric, how many times each difference and
each score occurred (scores take few values), and the pairs that moved most, cut to `limit`
as they come. The reasons of the listed pairs are read at the end, for them alone.

Power and clusters (E6). Every metric has its minimum detectable effect (error_bars.mde, from
std_diff and n). With `cluster_by` the baseline's scored pairs are read with their stored
clusters (`lc`, `ic`, `cc`; projected only then) and a matched pair falls in its baseline pair's
cluster: per cluster its size and its sums of differences are kept (an unlabelled pair, or one
without a conversation_id, a cluster of its own, only as a count of its difference), so memory
is bounded by the number of clusters, and the clustered interval is taken around the exact mean
difference (error_bars.clustered_around). A matched baseline pair stored before clusters were
kept (no input cluster, which every pair stored since has) cannot be placed: a 409 saying to
evaluate the baseline again (one stored before E11 has no conversation cluster either, and needs
none: no pair had a conversation_id then). It is a 409, not a 400, as for a running result:
the request is well formed, the stored result cannot serve it; and only matched pairs count,
since a pair only in the baseline is in no figure (a run that spanned the change may hold pairs
of both kinds).

Time is not size. A result too large to be read in a whole request even at DynamoDB's best
pace can never be compared in one: a 413, decided from the stored sizes before anything is
read. A comparison that runs out of the request's time otherwise ran out because the service
was busy (or slow storage): a 503 with Retry-After, and nothing was changed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TypeVar

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import Conflict, InvalidInput, NotFound, OutOfTime, PayloadTooLarge
from evalsvc.core.identifiers import check_client_id
from evalsvc.core.observability import LogContextPool, logger
from evalsvc.core.settings import get_settings
from evalsvc.logic.results import existing_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.comparisons import (
    CompareIn,
    Comparison,
    MatchedMetric,
    MetricComparison,
    PairChange,
    Verdict,
)
from evalsvc.models.evaluations import ClusterBy, ClusteredScores, EvaluationResult
from evalsvc.statistics.error_bars import ClusteredMean, ClusterSums, mde
from evalsvc.statistics.scores import Paired, holm, mean_of_counts, paired_counts
from evalsvc.storage import results as results_store

# Seconds of the deadline kept to read the listed pairs' reasons and answer.
RESERVE_SECONDS = 2.0
# How many listed candidates may pile up (times `limit`) before they are cut back to `limit`.
_CUT_FACTOR = 4
# The fastest a result's scored pairs can be read: a Query page holds at most 1 MB and takes
# some 10 ms at the very least, and each result is read on its own thread. A result that would
# take more than a whole request even at this pace can never be compared in one.
FASTEST_READ_BYTES_PER_SECOND = 100_000_000
# A pair id is at most 128 ASCII characters.
MAX_PAIR_ID_BYTES = 128
# How long a caller is asked to wait before asking again, when a comparison ran out of time.
RETRY_AFTER_SECONDS = 10

T = TypeVar("T")
ScoredIds = tuple[str, list[float | None]]


def compare(identity: Identity, body: CompareIn, deadline: Deadline) -> Comparison:
    return compare_results(identity, body, deadline)[0]


def compare_results(
    identity: Identity, body: CompareIn, deadline: Deadline
) -> tuple[Comparison, EvaluationResult, EvaluationResult]:
    """The comparison, with the baseline and candidate results it compared."""
    comparison, baseline, candidate = figures(identity, body, deadline)
    _read_reasons(identity, baseline, candidate, comparison)
    logger.info(
        "compared two evaluations",
        extra={
            "baseline_id": baseline.results_id,
            "candidate_id": candidate.results_id,
            "pairs_matched": comparison.pairs_matched,
            "metrics": len(comparison.metrics),
            "cluster_by": body.cluster_by,
        },
    )
    return comparison, baseline, candidate


def figures(
    identity: Identity, body: CompareIn, deadline: Deadline
) -> tuple[Comparison, EvaluationResult, EvaluationResult]:
    """The comparison's figures and verdicts, with the pairs that moved but without their
    reasons (what a monitor's run keeps), and the results compared."""
    baseline, candidate, matched = matched_results(identity, body.baseline_id, body.candidate_id)
    tally = Tally(matched, body.regression_threshold, body.limit, body.cluster_by)
    read_pairs(identity, baseline, candidate, tally, deadline, "comparing")
    return tally.comparison(body), baseline, candidate


def matched_results(
    identity: Identity, baseline_id: str, candidate_id: str
) -> tuple[EvaluationResult, EvaluationResult, list[MatchedMetric]]:
    """Both complete results and the metrics they share, in the baseline's order; a 404 or 409
    naming the field whose result is missing, running or failed, a 400 when they share no
    metric definition, a 413 when either is too large to be read in a request."""
    check_client_id(baseline_id, "baseline_id")
    check_client_id(candidate_id, "candidate_id")
    baseline = complete_result(identity, baseline_id, "baseline_id")
    candidate = complete_result(identity, candidate_id, "candidate_id")
    matched = match_metrics(baseline.definitions, candidate.definitions)
    if not matched:
        raise InvalidInput(
            f"baseline {baseline.results_id!r} and candidate {candidate.results_id!r} have no "
            "metric definition in common (definitions match by their exact text): the baseline "
            f"has {_some(baseline.definitions)}, the candidate {_some(candidate.definitions)}; "
            "compare evaluations made with the same metrics set"
        )
    _check_readable(baseline, candidate)
    return baseline, candidate, matched


def read_pairs(
    identity: Identity,
    baseline: EvaluationResult,
    candidate: EvaluationResult,
    tally: Tally,
    deadline: Deadline,
    doing: str,
) -> None:
    """Both results' scored pairs, read side by side and matched into `tally` (with the
    baseline's clusters when it clusters). `doing` ("comparing", "planning") says in a
    message what ran out of time. A 503 when the deadline comes first, a 409 when the tally
    clusters and a matched baseline pair was stored before clusters were kept, a 400 when the
    results share no pair id."""
    # Not a `with`: leaving early (out of time, a storage error) must not wait for a page in
    # flight.
    pool = LogContextPool(max_workers=2, thread_name_prefix="compare")
    try:
        baseline_rows: Iterator[ScoredIds | ClusteredScores]
        if tally.cluster_by is None:
            baseline_rows = prefetched(
                results_store.score_pages(identity.tenant, baseline.results_id), pool, deadline
            )
        else:
            baseline_rows = prefetched(
                results_store.score_pages(identity.tenant, baseline.results_id, clusters=True),
                pool,
                deadline,
            )
        merge(
            baseline_rows,
            prefetched(
                results_store.score_pages(identity.tenant, candidate.results_id), pool, deadline
            ),
            tally,
        )
    except TimeUp:
        raise OutOfTime(
            f"{doing} {baseline.results_id!r} ({baseline.pair_count} pairs) with "
            f"{candidate.results_id!r} ({candidate.pair_count} pairs) ran out of this "
            f"request's time after reading {tally.read} of their "
            f"{baseline.pair_count + candidate.pair_count} scored pairs: the service is busy "
            "(or the results are large for it at the moment). Nothing was changed: ask again "
            "in a little while",
            RETRY_AFTER_SECONDS,
        ) from None
    except StoredWithoutClusters as exc:
        raise Conflict(
            f"baseline_id: evaluation result {baseline.results_id!r} cannot be clustered by "
            f"{tally.cluster_by}: its scored pairs (pair {exc.pair_id!r} among them) were "
            "stored before the service kept each pair's label and input clusters. Evaluate "
            "the baseline's dataset again (POST /evaluate) and compare with the new result, or "
            "leave out cluster_by"
        ) from None
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if tally.pairs_matched == 0:
        raise InvalidInput(
            f"baseline {baseline.results_id!r} ({tally.only_in_baseline} scored pairs) and "
            f"candidate {candidate.results_id!r} ({tally.only_in_candidate}) have no pair id in "
            "common: compare evaluations of the same pairs (pairs match by id)"
        )


def complete_result(identity: Identity, results_id: str, field: str) -> EvaluationResult:
    """The complete result, or its 404 or 409 naming the field it came from."""
    try:
        return existing_result(identity, results_id, require_complete=True)
    except (NotFound, Conflict) as exc:
        raise type(exc)(f"{field}: {exc.message}") from exc


def stored_bytes_at_least(result: EvaluationResult) -> int | None:
    """The fewest bytes the result's scored pairs take in storage, which a read of them all
    reads (DynamoDB sizes a page before projecting it); None when not known (a result stored
    before its size was kept). `scored_bytes` counts a pair's id beside each of its reasons; the
    item holds the id once, with every reason."""
    if result.scored_bytes is None:
        return None
    ids = result.pair_count * max(0, len(result.definitions) - 1) * MAX_PAIR_ID_BYTES
    return max(0, result.scored_bytes - ids)


def _check_readable(baseline: EvaluationResult, candidate: EvaluationResult) -> None:
    """A 413 when either result is too large to be read within a whole request even at
    DynamoDB's best pace: no retry would ever fit it."""
    seconds = get_settings().request_seconds
    readable = (seconds - RESERVE_SECONDS) * FASTEST_READ_BYTES_PER_SECOND
    for result in (baseline, candidate):
        stored = stored_bytes_at_least(result)
        if stored is not None and stored > readable:
            raise PayloadTooLarge(
                f"evaluation result {result.results_id!r} holds {result.pair_count} scored "
                f"pairs taking at least {stored / 1e9:.1f} GB, more than can be read in one "
                f"request ({readable / 1e9:.1f} GB in {seconds:g} s at best): it cannot be "
                "compared, however often it is asked. Compare evaluations of fewer pairs "
                "(POST /evaluate with a pair_query)"
            )


def _some(definitions: Sequence[str]) -> str:
    """A few definitions, each cut short, for a message."""
    shown = ", ".join(repr(d[:60] + ("..." if len(d) > 60 else "")) for d in definitions[:3])
    more = f" and {len(definitions) - 3} more" if len(definitions) > 3 else ""
    return shown + more


def match_metrics(baseline: Sequence[str], candidate: Sequence[str]) -> list[MatchedMetric]:
    """The definitions both results were scored on, in the baseline's order. A definition
    given twice matches its occurrences in order (the first with the first)."""
    positions: dict[str, list[int]] = {}
    for idx, definition in enumerate(candidate):
        positions.setdefault(definition, []).append(idx)
    matched = []
    for idx, definition in enumerate(baseline):
        free = positions.get(definition)
        if free:
            matched.append(MatchedMetric(definition, idx, free.pop(0)))
    return matched


# ---- reading both results side by side ---------------------------------------------------------


class TimeUp(Exception):
    """A read stopped with only RESERVE_SECONDS of its deadline left."""


def prefetched(
    pages: Iterator[Sequence[T]], pool: ThreadPoolExecutor, deadline: Deadline
) -> Iterator[T]:
    """The items of `pages`, the next page asked for (on `pool`) while this one is used; stops
    with TimeUp when only RESERVE_SECONDS of the deadline are left."""
    end: Sequence[T] = []

    def fetch() -> Sequence[T]:
        return next(pages, end)

    pending = pool.submit(fetch)
    while True:
        wait = deadline.left() - RESERVE_SECONDS
        try:
            page = pending.result(timeout=max(0.0, wait) if math.isfinite(wait) else None)
        except FutureTimeout:
            raise TimeUp from None
        if page is end:
            return
        if deadline.left() <= RESERVE_SECONDS:
            raise TimeUp
        pending = pool.submit(fetch)
        yield from page


class StoredWithoutClusters(Exception):
    """A matched baseline pair has no stored clusters (it predates them): it cannot be
    clustered."""

    def __init__(self, pair_id: str) -> None:
        super().__init__(pair_id)
        self.pair_id = pair_id


class Tally:
    """What a comparison keeps while it reads: per matched metric, the counts of differences
    and of each side's scores, and the pairs that moved by at least the threshold (the
    furthest `limit` of each direction, cut as they come; none kept without a threshold).

    With `cluster_by`, the baseline pairs' clusters too: per named cluster (ClusterSums) its
    size and its sums of differences, and per metric the counts of the differences of pairs
    that are clusters of their own (an unlabelled baseline pair by label, one without a
    conversation_id by conversation), which need no entry each. Memory is bounded by the
    number of clusters whatever the results hold."""

    def __init__(
        self,
        matched: Sequence[MatchedMetric],
        threshold: float | None,
        limit: int,
        cluster_by: ClusterBy | None = None,
    ) -> None:
        self.matched = list(matched)
        self.threshold = threshold
        # A move counts when it reaches the threshold up to float rounding (2.0012 - 1.0012 is
        # 0.9999999999999998): scores are decimals stored as binary floats.
        self.reach = math.inf if threshold is None else threshold * (1.0 - 1e-9)
        self.limit = limit
        self.cluster_by = cluster_by
        self.diffs: list[Counter[float]] = [Counter() for _ in matched]
        self.baseline_scores: list[Counter[float]] = [Counter() for _ in matched]
        self.candidate_scores: list[Counter[float]] = [Counter() for _ in matched]
        self.clusters = ClusterSums(len(self.matched))
        # Per matched metric, the matched pairs one of the results could not score (E10).
        self.not_applicable = [0] * len(self.matched)
        # (sort key, change): most negative first for regressions, largest first for
        # improvements; then metric order, then pair id.
        self.regressions: list[tuple[tuple[float, int, str], PairChange]] = []
        self.improvements: list[tuple[tuple[float, int, str], PairChange]] = []
        self.pairs_matched = 0
        self.only_in_baseline = 0
        self.only_in_candidate = 0

    @property
    def read(self) -> int:
        """Scored pairs read so far, of both results."""
        return 2 * self.pairs_matched + self.only_in_baseline + self.only_in_candidate

    def add(
        self,
        pair_id: str,
        baseline: Sequence[float | None],
        candidate: Sequence[float | None],
        label_cluster: str | None = None,
        input_cluster: str | None = None,
        conversation_cluster: str | None = None,
    ) -> None:
        """One matched pair; with cluster_by, the baseline pair's stored clusters (every pair
        stored with clusters has an input cluster: one without predates them; a pair stored
        before E11 has no conversation cluster, and had no conversation_id). A metric counts
        the pair only where both results scored it (E10: not applicable in either, it is left
        out of that metric's figures and counted apart)."""
        if self.cluster_by is not None and input_cluster is None:
            raise StoredWithoutClusters(pair_id)
        self.pairs_matched += 1
        diffs: list[float | None] = []
        for pos, metric in enumerate(self.matched):
            before = baseline[metric.baseline_idx]
            after = candidate[metric.candidate_idx]
            if before is None or after is None:
                self.not_applicable[pos] += 1
                diffs.append(None)
                continue
            d = after - before
            diffs.append(d)
            self.diffs[pos][d] += 1
            self.baseline_scores[pos][before] += 1
            self.candidate_scores[pos][after] += 1
            if d <= -self.reach:
                self._keep(self.regressions, (d, pos, pair_id), pair_id, pos, before, after)
            elif d >= self.reach:
                self._keep(self.improvements, (-d, pos, pair_id), pair_id, pos, before, after)
        if self.cluster_by is not None:
            name = {
                "label": label_cluster,
                "input": input_cluster,
                "conversation": conversation_cluster,
            }[self.cluster_by]
            self.clusters.add(name, diffs)

    def clustered(self, pos: int, figures: Paired, alpha: float) -> ClusteredMean | None:
        """The clustered standard error and interval at 1 - alpha of metric `pos`'s mean
        difference (error_bars.clustered_around the exact mean the paired figures give);
        None without cluster_by or before any pair matched."""
        if self.cluster_by is None or figures.n == 0:
            return None
        mean = figures.mean_diff
        if mean is None:  # one pair: its difference (the interval is null with one cluster)
            mean = mean_of_counts(self.diffs[pos])
        return self.clusters.clustered(pos, mean, alpha)

    def _keep(
        self,
        kept: list[tuple[tuple[float, int, str], PairChange]],
        key: tuple[float, int, str],
        pair_id: str,
        pos: int,
        before: float,
        after: float,
    ) -> None:
        kept.append((key, PairChange(pair_id, pos, before, after)))
        if len(kept) >= _CUT_FACTOR * self.limit:
            kept.sort(key=_first)
            del kept[self.limit :]

    def changes(self, kept: list[tuple[tuple[float, int, str], PairChange]]) -> list[PairChange]:
        kept.sort(key=_first)
        return [change for _, change in kept[: self.limit]]

    def comparison(self, body: CompareIn) -> Comparison:
        figures = [paired_counts(diffs, body.alpha) for diffs in self.diffs]
        p_values = [f.p_value for f in figures]
        adjusted = holm(p_values) if body.correction == "holm" else p_values
        metrics = []
        for pos, (metric, f, p_adjusted) in enumerate(
            zip(self.matched, figures, adjusted, strict=True)
        ):
            enough = f.n >= 2
            metrics.append(
                MetricComparison(
                    metric=metric,
                    baseline_mean=mean_of_counts(self.baseline_scores[pos]) if enough else None,
                    candidate_mean=mean_of_counts(self.candidate_scores[pos]) if enough else None,
                    stats=f,
                    p_adjusted=p_adjusted,
                    verdict=verdict(f, p_adjusted, body.alpha),
                    mde=mde(f.std_diff, f.n, body.alpha),
                    clustered=self.clustered(pos, f, body.alpha),
                    pairs_regressed=sum(
                        count for d, count in self.diffs[pos].items() if d <= -self.reach
                    ),
                    not_applicable=self.not_applicable[pos],
                )
            )
        return Comparison(
            request=body,
            pairs_matched=self.pairs_matched,
            only_in_baseline=self.only_in_baseline,
            only_in_candidate=self.only_in_candidate,
            metrics=metrics,
            regressions=self.changes(self.regressions),
            improvements=self.changes(self.improvements),
        )


def _first(entry: tuple[tuple[float, int, str], PairChange]) -> tuple[float, int, str]:
    return entry[0]


def merge(
    baseline: Iterator[ScoredIds | ClusteredScores], candidate: Iterator[ScoredIds], tally: Tally
) -> None:
    """Match two streams of (pair id, scores), each in pair id order, into `tally`; the
    baseline's may carry each pair's clusters (ClusteredScores)."""
    b = next(baseline, None)
    c = next(candidate, None)
    while b is not None and c is not None:
        if b[0] == c[0]:
            if len(b) == 5:
                tally.add(b[0], b[1], c[1], b[2], b[3], b[4])
            else:
                tally.add(b[0], b[1], c[1])
            b = next(baseline, None)
            c = next(candidate, None)
        elif b[0] < c[0]:
            tally.only_in_baseline += 1
            b = next(baseline, None)
        else:
            tally.only_in_candidate += 1
            c = next(candidate, None)
    while b is not None:
        tally.only_in_baseline += 1
        b = next(baseline, None)
    while c is not None:
        tally.only_in_candidate += 1
        c = next(candidate, None)


def verdict(figures: Paired, p_adjusted: float | None, alpha: float) -> Verdict:
    if figures.n < 2 or figures.mean_diff is None:
        return "insufficient_data"
    if p_adjusted is not None and p_adjusted < alpha:
        if figures.mean_diff > 0:
            return "improved"
        if figures.mean_diff < 0:
            return "regressed"
    return "no_significant_difference"


def _read_reasons(
    identity: Identity,
    baseline: EvaluationResult,
    candidate: EvaluationResult,
    comparison: Comparison,
) -> None:
    listed = comparison.regressions + comparison.improvements
    if not listed:
        return
    before: dict[str, set[int]] = {}
    after: dict[str, set[int]] = {}
    for change in listed:
        metric = comparison.metrics[change.metric].metric
        before.setdefault(change.pair_id, set()).add(metric.baseline_idx)
        after.setdefault(change.pair_id, set()).add(metric.candidate_idx)
    baseline_reasons = results_store.reasons_of(identity.tenant, baseline.results_id, before)
    candidate_reasons = results_store.reasons_of(identity.tenant, candidate.results_id, after)
    for change in listed:
        metric = comparison.metrics[change.metric].metric
        change.baseline_reason = baseline_reasons.get((change.pair_id, metric.baseline_idx), "")
        change.candidate_reason = candidate_reasons.get((change.pair_id, metric.candidate_idx), "")
