"""What a report page (E4) draws, as logic.reports gathers it: an evaluation's metrics with
their lowest-scored pairs and votes, a comparison with the texts of the pairs that moved, a
monitor with its newest runs. The pages in `reports` render these and read nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalsvc.models.conversations import Message, ToolCall, compact_json, first_difference
from evalsvc.models.evaluations import Critique, EvaluationResult
from evalsvc.statistics.agreement import Agreement
from evalsvc.statistics.anchored import Anchored, LabelPlan
from evalsvc.statistics.error_bars import ClusteredMean
from evalsvc.statistics.scores import Summary

if TYPE_CHECKING:
    # Only named in annotations: the reports of one kind need not build the others' models.
    from evalsvc.models.comparisons import Comparison
    from evalsvc.models.monitors import MonitorIn, Run, StoredMonitor


# The most messages of a conversation, and the most calls of each list, a page shows of one
# pair (E11): the last messages, the first calls and the first difference. A page halves it with
# its text limits (reports.limits.Limits.items) until the page fits.
LISTED_ITEMS = 25


@dataclass(frozen=True, slots=True)
class CallText:
    """A tool call as a page shows it: its name, and its arguments as compact JSON."""

    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Calls:
    """A pair's tool calls as a page shows them (E11): those made and those expected, each None
    when the pair was written without it, and the first index at which they differ
    (conversations.first_difference), None when they are the same calls or when nothing is
    expected. A pair with expected calls and none recorded made none (as the trajectory checks
    read it)."""

    made: tuple[CallText, ...] | None
    expected: tuple[CallText, ...] | None
    first_difference: int | None

    @classmethod
    def of(
        cls, made: Sequence[ToolCall] | None, expected: Sequence[ToolCall] | None
    ) -> Calls | None:
        """The calls of a pair written with `made` and `expected`; None without either."""
        if made is None and expected is None:
            return None
        differs = first_difference(made or (), expected) if expected is not None else None
        return cls(_call_texts(made), _call_texts(expected), differs)

    @property
    def rows(self) -> int:
        """How many rows the calls take side by side: the longer list's length."""
        return max(len(self.made or ()), len(self.expected or ()))


def _call_texts(calls: Sequence[ToolCall] | None) -> tuple[CallText, ...] | None:
    if calls is None:
        return None
    return tuple(CallText(c.name, compact_json(c.arguments)) for c in calls)


@dataclass(frozen=True, slots=True)
class PairText:
    """A listed pair's texts, as the result scored them: `missing` when the pair is no longer
    in the dataset, `changed` when it was written again after the evaluation (its text now is
    not what was scored: only for a result stored before it pinned its dataset version),
    `unread` when reading it would have passed what one report reads, or its time; `expired`
    (the reason, naming the day) when the version the result scored is past its retention.
    `reference` and `contexts` (E10), `messages` (the conversation before the input) and
    `calls` (E11) only when the pair was written with them."""

    input: str = ""
    output: str = ""
    missing: bool = False
    changed: bool = False
    unread: bool = False
    expired: str = ""
    reference: str | None = None
    contexts: tuple[str, ...] | None = None
    messages: tuple[Message, ...] | None = None
    calls: Calls | None = None

    @property
    def shown_texts(self) -> int:
        """How many texts a page shows of the pair at most: input, output, and its reference
        and each context when it has them; each message it shows of its conversation (at most
        LISTED_ITEMS), and the name and the arguments of each call it shows of either list (at
        most LISTED_ITEMS and the first difference). What the page's text limits are shared
        among."""
        texts = 2 + (self.reference is not None) + len(self.contexts or ())
        texts += min(len(self.messages or ()), LISTED_ITEMS)
        if self.calls is not None:
            lists = (self.calls.made is not None) + (self.calls.expected is not None)
            texts += 2 * lists * min(self.calls.rows, LISTED_ITEMS + 1)
        return texts


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


@dataclass(frozen=True, slots=True)
class AnchoredSection:
    """E12 on the page: what people would say of every pair of a metric, its audit votes
    anchoring the judge's scores (`figures`: the estimate None below 2 audited pairs or 2 other
    scored pairs), at level 1 - alpha; what the judge alone says (the mean of (score - 1)/4);
    and the audited pairs an interval of ±half_width would need (None below 2 audited pairs)."""

    figures: Anchored
    judge_only: float
    alpha: float
    half_width: float
    plan: LabelPlan | None


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
    # E12: per metric with audit votes, what people would say of every pair (None without audit
    # votes, or when the votes were not all read: `EvaluationReport.critiques_more`).
    anchored: AnchoredSection | None = None


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
