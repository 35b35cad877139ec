"""The pairwise page (E5, GET /pairwise/{id}'s figures as a page): what was run, the leaderboard
as a forest plot of Bradley-Terry strengths with their intervals, one matchup per two runs with
its verdict in words, the judge's position bias, judge-human agreement, and the comparisons
whose two orders disagreed, with the input, both outputs and both reasons; progress while it
runs, the failure when it failed.

What it draws is a `PairwiseReport`: GET /pairwise/{id}'s body (`PairwiseReport.from_body`), its
figures typed as evalsvc.statistics.pairwise computes them, plus at most MAX_DISAGREEMENTS
`Disagreement`s that the caller read the texts of.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from evalsvc.reports import charts
from evalsvc.reports.limits import Limits
from evalsvc.reports.pages import PAIRWISE_PAGE, render
from evalsvc.spending.meter import Usage
from evalsvc.statistics.pairwise import JudgeHuman, Judgement, LeaderboardRow, Matchup, Position

PairwiseStatus = Literal["running", "complete", "failed"]

# The most comparisons whose two orders disagreed that one page lists (more are not drawn).
MAX_DISAGREEMENTS = 50


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A comparison of runs `a` and `b` on one pair whose two orders chose different runs (its
    outcome a tie): order 1 showed (a, b), order 2 (b, a); each winner names the output shown
    "first" or "second", or "tie". A text is None when it was not read (not shown)."""

    pair_id: str
    a: str
    b: str
    input: str | None
    output_a: str | None
    output_b: str | None
    first_order_winner: Judgement
    first_order_reason: str
    second_order_winner: Judgement
    second_order_reason: str


@dataclass(frozen=True, slots=True)
class PairwiseReport:
    """GET /pairwise/{id}'s body as the page reads it (its verdicts and next_cursor aside), and
    the disagreements to list. `progress_done` of `progress_total` comparisons are judged;
    `position`, `matchups`, `leaderboard` and `judge_human` are empty until it is complete.
    `disagreements_total`: how many comparisons' two orders disagreed in all, when known."""

    pairwise_id: str
    status: PairwiseStatus
    question: str
    result_ids: Sequence[str]
    pairs_used: int
    both_orders: bool
    alpha: float
    usage: Usage
    progress_done: int = 0
    progress_total: int = 0
    failure: str | None = None
    position: Position | None = None
    matchups: Sequence[Matchup] = ()
    leaderboard: Sequence[LeaderboardRow] = ()
    judge_human: JudgeHuman | None = None
    disagreements: Sequence[Disagreement] = ()
    disagreements_total: int | None = None

    @classmethod
    def from_body(
        cls,
        body: Mapping[str, Any],
        disagreements: Sequence[Disagreement] = (),
        disagreements_total: int | None = None,
    ) -> PairwiseReport:
        """The report of GET /pairwise/{id}'s JSON body (usage's cost_usd is worked out again
        from its tokens, as the E4 pages do)."""
        progress = body.get("progress") or {}
        usage = dict(body.get("usage") or {})
        usage["model"] = usage.get("model") or ""
        position, judge_human = body.get("position"), body.get("judge_human")
        return cls(
            pairwise_id=body["pairwise_id"],
            status=body["status"],
            question=body["question"],
            result_ids=list(body["result_ids"]),
            pairs_used=body["pairs_used"],
            both_orders=body["both_orders"],
            alpha=body["alpha"],
            usage=Usage.from_dict(usage),
            progress_done=progress.get("done", 0),
            progress_total=progress.get("total", 0),
            failure=body.get("failure"),
            position=Position(**_fields(Position, position)) if position else None,
            matchups=[Matchup(**_fields(Matchup, m)) for m in body.get("matchups") or ()],
            leaderboard=[
                LeaderboardRow(**_fields(LeaderboardRow, r)) for r in body.get("leaderboard") or ()
            ],
            judge_human=JudgeHuman(**_fields(JudgeHuman, judge_human)) if judge_human else None,
            disagreements=list(disagreements),
            disagreements_total=disagreements_total,
        )


def _fields(cls: Any, value: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of `value` the dataclass `cls` has fields for."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {k: v for k, v in value.items() if k in names}


class ShownDisagreement(NamedTuple):
    """A disagreement as the page lists it: the run each order chose (None: a tie)."""

    d: Disagreement
    first_order_run: str | None
    second_order_run: str | None


def _chosen_run(order: int, winner: Judgement, a: str, b: str) -> str | None:
    """The run a judgement chose: order 1 shows (a, b), order 2 shows (b, a)."""
    if winner == "tie":
        return None
    shown_first, shown_second = (a, b) if order == 1 else (b, a)
    return shown_first if winner == "first" else shown_second


def _limits(listed: int) -> Limits:
    """Each listed disagreement shows three texts (the input, two outputs) and two reasons."""
    return Limits.for_counts(texts=3 * listed, reasons=2 * listed, comments=0)


def _forest(report: PairwiseReport) -> charts.Forest | None:
    if not report.leaderboard:
        return None
    extent = charts.strength_extent(
        [v for r in report.leaderboard for v in (r.strength, r.ci_low, r.ci_high)]
    )
    return charts.forest(
        [
            charts.Estimate(f"{r.rank}. {r.result_id}", r.strength, r.ci_low, r.ci_high)
            for r in report.leaderboard
        ],
        title="Bradley-Terry strength of each run with its 95 % interval, best first",
        description="For each run, ranked best first, a dot at its strength (natural log "
        "scale, mean 0 over the runs) and a line across its 95 % interval; right of the zero "
        "line a run wins more often than it loses against a run of average strength.",
        low=-extent,
        high=extent,
        ticks=[-extent, -extent / 2, 0.0, extent / 2, extent],
        reference=0.0,
        signed=True,
    )


def render_pairwise(
    report: PairwiseReport, fits: Callable[[bytes], bool] = lambda _: True
) -> bytes:
    """The pairwise page, as UTF-8 HTML that `fits` accepts (and within MAX_PAGE_BYTES)."""
    listed = [
        ShownDisagreement(
            d,
            _chosen_run(1, d.first_order_winner, d.a, d.b),
            _chosen_run(2, d.second_order_winner, d.a, d.b),
        )
        for d in report.disagreements[:MAX_DISAGREEMENTS]
    ]
    return render(
        PAIRWISE_PAGE,
        fits,
        _limits(len(listed)),
        report=report,
        usage=report.usage,
        forest=_forest(report),
        listed=listed,
        matchup_count=len(report.result_ids) * (len(report.result_ids) - 1) // 2,
    )
