"""What a report page (E4) draws, as logic.reports gathers it: an evaluation's metrics with
their lowest-scored pairs and votes, a comparison with the texts of the pairs that moved, a
monitor with its newest runs. The pages in `reports` render these and read nothing else."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalsvc.models.evaluations import Critique, EvaluationResult
from evalsvc.statistics.agreement import Agreement
from evalsvc.statistics.error_bars import ClusteredMean
from evalsvc.statistics.scores import Summary

if TYPE_CHECKING:
    # Only named in annotations: the reports of one kind need not build the others' models.
    from evalsvc.models.comparisons import Comparison
    from evalsvc.models.monitors import MonitorIn, Run, StoredMonitor


@dataclass(frozen=True, slots=True)
class PairText:
    """A listed pair's texts, as the result scored them: `missing` when the pair is no longer
    in the dataset, `changed` when it was written again after the evaluation (its text now is
    not what was scored: only for a result stored before it pinned its dataset version),
    `unread` when reading it would have passed what one report reads, or its time; `expired`
    (the reason, naming the day) when the version the result scored is past its retention.
    `reference` and `contexts` (E10) only when the pair was written with them."""

    input: str = ""
    output: str = ""
    missing: bool = False
    changed: bool = False
    unread: bool = False
    expired: str = ""
    reference: str | None = None
    contexts: tuple[str, ...] | None = None

    @property
    def shown_texts(self) -> int:
        """How many texts a page shows of the pair: input, output, and its reference and each
        context when it has them (what the page's text limits are shared among)."""
        return 2 + (self.reference is not None) + len(self.contexts or ())


@dataclass(slots=True)
class ShownPair:
    pair_id: str
    score: float
    reason: str
    text: PairText
    critiques: list[Critique] = field(default_factory=list)


@dataclass(slots=True)
class VoteCounts:
    up: int = 0
    down: int = 0
    neutral: int = 0
    comments: int = 0


@dataclass(slots=True)
class MetricSection:
    idx: int
    definition: str
    summary: Summary | None
    # Pairs by 1-5 score bin (round half up), None when the scores were not read.
    histogram: list[int] | None
    lowest: list[ShownPair]
    votes: VoteCounts
    agreement: Agreement | None
    # E6: with cluster_by, the clustered interval; with judge_samples > 1, the judge's noise.
    clustered: ClusteredMean | None = None
    judge_noise: float | None = None
    # E10: the pairs the metric was not applicable to, and what it needs of a pair ("" when
    # it needs only the input and output).
    not_applicable: int = 0
    needs: str = ""


@dataclass(slots=True)
class EvaluationReport:
    result: EvaluationResult
    metrics: list[MetricSection]
    # Votes and comments read, newest first; `critiques_more` when there were more than read
    # (then the counts and agreement are not drawn from them).
    critiques: list[Critique]
    critiques_more: bool
    # Why the histograms are missing ("" when drawn or not applicable).
    histogram_note: str = ""


@dataclass(slots=True)
class ChangeTexts:
    """A moved pair's input and both outputs: from the baseline's dataset and the
    candidate's."""

    baseline: PairText
    candidate: PairText


@dataclass(slots=True)
class ComparisonReport:
    comparison: Comparison
    baseline: EvaluationResult
    candidate: EvaluationResult
    texts: dict[str, ChangeTexts]

    @property
    def same_pairs(self) -> bool | None:
        return same_pairs(self.baseline, self.candidate)


def same_pairs(baseline: EvaluationResult, candidate: EvaluationResult) -> bool | None:
    """Whether two results scored the same pairs (ids and texts): whether their pairs_digests
    are equal; None when either has none (stored before results kept it, or not complete)."""
    digests = [r.inputs.pairs_digest if r.inputs else None for r in (baseline, candidate)]
    if digests[0] is None or digests[1] is None:
        return None
    return digests[0] == digests[1]


@dataclass(frozen=True, slots=True)
class MonitorReport:
    """A monitor (E8) as asked for and as stored (its next run), and its newest runs (at most
    logic.monitor_history.MAX_HISTORY), newest first, each with the metric definitions its indexes
    name ([] when its result is gone); `more` when it has older runs than those."""

    monitor: MonitorIn
    stored: StoredMonitor
    runs: list[tuple[Run, list[str]]]
    more: bool
