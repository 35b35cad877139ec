"""The evaluation page's E12 lines, drawn from what logic.reports gathers: what people would say
of every pair with its interval and counts, beside the judge alone; the audited pairs a ±5-point
interval needs; fewer than 2 audited pairs said as such; votes not all read said as an estimate
not computed; the page's markup and CSP as ever."""

from __future__ import annotations

import pytest
from evalsvc.logic import reports
from evalsvc.logic.anchored import prediction
from evalsvc.models.evaluations import VoteObservation
from evalsvc.models.jobs import Status
from evalsvc.models.reports import AnchoredSection, EvaluationReport
from evalsvc.reports.evaluation_page import render_evaluation
from evalsvc.statistics.anchored import (
    Anchored,
    Interval,
    LabelPlan,
    Moments,
    anchored,
    plan_labels,
)
from evalsvc.statistics.scores import summarize

from tests.unit.test_report_pages import assert_only_page_markup, evaluation, result

# 40 scored pairs of metric 0: scores 1 to 5, eight of each.
SCORES = [1.0, 2.0, 3.0, 4.0, 5.0] * 8


def words(report: EvaluationReport) -> str:
    page = assert_only_page_markup(render_evaluation(report).decode())
    return " ".join("".join(page.text).split())


def with_anchored(section: AnchoredSection | None, more: bool = False) -> EvaluationReport:
    report = evaluation("Is it right?", "reason", "text", "comment")
    report.metrics[0].anchored = section
    report.critiques_more = more
    return report


def audit(pair: str, score: float, vote: int, source: str = "audit") -> VoteObservation:
    return VoteObservation(0, pair, score, vote, source)


def test_the_figures_are_the_statistics_of_the_audit_votes_and_the_judges_scores() -> None:
    stored = result(
        ["Is it right?"],
        pair_count=len(SCORES),
        summaries=[summarize(SCORES)],
        histograms=[[8, 8, 8, 8, 8]],
    )
    # Pairs 0-9 audited (people agree with scores of 4 and 5); a review vote never counts.
    votes = [audit(f"p{k}", SCORES[k], 1 if SCORES[k] >= 4 else -1) for k in range(10)]
    votes += [audit("p3", SCORES[3], -1), audit("p20", 1.0, -1, "review")]
    votes += [VoteObservation(0, "p30", None, 1, "audit")]  # its pair is gone: no label

    section = reports._anchored(stored, votes)[0]

    labeled = [(1.0, prediction(s)) if s >= 4 else (0.0, prediction(s)) for s in SCORES[:10]]
    labeled[3] = (0.5, prediction(SCORES[3]))
    rest = [prediction(s) for s in SCORES[10:]]
    mean = sum(rest) / len(rest)
    unlabeled = Moments(30, mean, sum((f - mean) ** 2 for f in rest) / 29)
    expected = anchored(labeled, unlabeled, 0.05)
    assert section.figures.n_labeled == 10 and section.figures.n_unlabeled == 30
    got, want = section.figures.anchored, expected.anchored
    assert got is not None and want is not None
    assert got.estimate == pytest.approx(want.estimate)
    assert got.ci_low == pytest.approx(want.ci_low)
    assert section.judge_only == pytest.approx(0.5)
    assert section.plan == plan_labels(labeled, unlabeled, 0.05, 0.05)
    assert section.plan is not None and section.plan.labels_now == 10
    assert section.half_width == reports.ANCHORED_HALF_WIDTH == 0.05

    text = words(with_anchored(section))
    assert (
        f"People would say {100 * got.estimate:.1f} % meet ({100 * got.ci_low:.1f}\u2013"
        f"{100 * got.ci_high:.1f} %, 95 % interval), from 10 audited pairs and 30 judge scores; "
        "the judge alone says 50.0 %."
    ) in text
    # 30 judge scores alone leave more than ±5 points: no count of audited pairs reaches it
    assert section.plan.labels_needed is None
    assert (
        "±5 points cannot be reached with the judge's scores (they alone leave a wider "
        f"interval); without the judge it would need {section.plan.classical_labels_needed:,} "
        "audited pairs; there are 10 now."
    ) in text


def test_a_metric_without_audit_votes_says_nothing_of_people() -> None:
    stored = result(["a", "b"])
    votes = [audit("p1", 2.0, 1, "review"), audit("p2", 4.0, 1)]
    votes = [VoteObservation(1, v.pair_id, v.score, v.vote, v.source) for v in votes]
    assert list(reports._anchored(stored, votes)) == [1]
    assert "What people would say" not in words(with_anchored(None))


FIGURES = Anchored(12, 488, Interval(0.625, 0.05, 0.52, 0.73), 0.8, 30.0, None)


@pytest.mark.parametrize(
    ("figures", "plan", "said", "unsaid"),
    [
        (
            FIGURES,
            LabelPlan(1200, 1500, 12),
            [
                "People would say 62.5 % meet (52.0\u201373.0 %, 95 % interval), from 12 audited "
                "pairs and 488 judge scores; the judge alone says 58.0 %.",
                "±5 points would need 1,200 audited pairs (1,500 without the judge); there are "
                "12 now.",
            ],
            ["so far"],
        ),
        (
            FIGURES,
            LabelPlan(None, 900, 12),
            [
                "±5 points cannot be reached with the judge's scores (they alone leave a wider "
                "interval); without the judge it would need 900 audited pairs; there are 12 now."
            ],
            ["points would need"],
        ),
        (
            Anchored(1, 499, None, None, None, None),
            None,
            [
                "1 audited pair so far: at least 2 are needed to say what people would say of "
                "every pair (vote on the metric's audit sample). The judge alone says 58.0 %."
            ],
            ["People would say", "Audited pairs needed"],
        ),
        (
            Anchored(9, 1, None, None, None, None),
            LabelPlan(40, 50, 9),
            [
                "9 audited pairs and 1 other scored pair: at least 2 of each are needed. The "
                "judge alone says 58.0 %."
            ],
            ["People would say"],
        ),
    ],
)
def test_the_page_says_what_people_would_say_or_why_it_cannot(
    figures: Anchored, plan: LabelPlan | None, said: list[str], unsaid: list[str]
) -> None:
    text = words(with_anchored(AnchoredSection(figures, 0.58, 0.05, 0.05, plan)))
    for sentence in said:
        assert sentence in text
    for sentence in unsaid:
        assert sentence not in text


def test_votes_not_all_read_leave_the_estimate_uncomputed_said_on_a_complete_result() -> None:
    text = words(with_anchored(None, more=True))
    assert text.count("not computed: this result has more votes than one report reads") == 1
    assert "GET /evaluation/r1/anchored?metric_idx=0 computes it from all of them." in text
    running = with_anchored(None, more=True)
    running.result = result(["Is it right?"], status=Status.RUNNING)
    assert "not computed" not in words(running)
