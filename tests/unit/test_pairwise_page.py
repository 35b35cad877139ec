"""The pairwise page (E5) drawn from reports built in memory, its figures computed by
evalsvc.statistics.pairwise: any text a tenant or a model can store stays text (hypothesis), the
figures are the ones the JSON carries, a verdict is in words, running and failed judgings say
so, 8 runs draw 28 matchups, and the page at the field limits stays under 5 MB and fits one
Lambda response."""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from evalsvc.api.responses import MAX_RESPONSE_BYTES, _proxy_bytes
from evalsvc.models.datasets import MAX_TEXT_CHARS
from evalsvc.reports import charts
from evalsvc.reports.limits import MAX_PAGE_BYTES
from evalsvc.reports.pairwise_page import (
    MAX_DISAGREEMENTS,
    Disagreement,
    PairwiseReport,
    render_pairwise,
)
from evalsvc.spending.meter import Usage
from evalsvc.statistics import pairwise as ps
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.test_report_pages import Parsed, assert_only_page_markup, shown, texts

ALPHA = 0.05
MODEL = "openai:gpt-4o-mini"


def tally(
    result_ids: Sequence[str], outcomes: dict[tuple[int, int], tuple[int, int, int]]
) -> Counter[tuple[str, str, ps.Outcome]]:
    """Comparisons counted as pairwise_stats takes them, from {(i, j): (a wins, b wins, ties)}."""
    counted: Counter[tuple[str, str, ps.Outcome]] = Counter()
    for (i, j), (a_wins, b_wins, ties) in outcomes.items():
        a, b = result_ids[i], result_ids[j]
        counted[a, b, "a"] += a_wins
        counted[a, b, "b"] += b_wins
        counted[a, b, "tie"] += ties
    return counted


def ladder(runs: int) -> dict[tuple[int, int], tuple[int, int, int]]:
    """Every two runs compared; the run given first is the strongest, the gaps grow with the
    distance in the order."""
    return {
        (i, j): (20 + 4 * (j - i), max(1, 20 - 3 * (j - i)), 5)
        for i, j in itertools.combinations(range(runs), 2)
    }


def stats_report(
    result_ids: Sequence[str],
    outcomes: dict[tuple[int, int], tuple[int, int, int]],
    *,
    both_orders: bool = True,
    votes: dict[tuple[ps.Outcome, ps.Outcome], int] | None = None,
    disagreements: Sequence[Disagreement] = (),
    **fields: Any,
) -> PairwiseReport:
    """A complete report whose figures pairwise_stats computed from `outcomes`."""
    comparisons = tally(result_ids, outcomes)
    total = sum(comparisons.values())
    # A judge with a first-position bias: order 1 says "first" for 70 %, order 2 for 60 %.
    judged: Counter[tuple[ps.Judgement, ps.Judgement | None]] = Counter()
    judged["first", "second" if both_orders else None] += total * 5 // 10
    judged["first", "first" if both_orders else None] += total * 2 // 10
    judged["second", "first" if both_orders else None] += total - total * 7 // 10
    report = PairwiseReport(
        pairwise_id="pw_0123",
        status="complete",
        question="Which answer is more helpful?",
        result_ids=list(result_ids),
        pairs_used=total // max(1, len(outcomes)),
        both_orders=both_orders,
        alpha=ALPHA,
        usage=Usage(2 * total, 7, 350 * 2 * total, 60 * 2 * total, MODEL),
        progress_done=total,
        progress_total=total,
        position=ps.position(judged, both_orders),
        matchups=ps.matchups(result_ids, comparisons, ALPHA),
        leaderboard=ps.leaderboard(result_ids, comparisons),
        judge_human=ps.judge_human(votes or {}),
        disagreements=list(disagreements),
    )
    return dataclasses.replace(report, **fields)


def disagreement(
    pair_id: str = "p1",
    a: str = "run-a",
    b: str = "run-b",
    text: str = "text",
    reason: str = "reason",
) -> Disagreement:
    return Disagreement(
        pair_id=pair_id,
        a=a,
        b=b,
        input=f"input {text}",
        output_a=f"output a {text}",
        output_b=f"output b {text}",
        first_order_winner="first",
        first_order_reason=f"first {reason}",
        second_order_winner="first",
        second_order_reason=f"second {reason}",
    )


def words_of(html: bytes) -> str:
    page = assert_only_page_markup(html.decode())
    return " ".join("".join(page.text).split())


def cells(html: bytes, section_id: str) -> list[list[str]]:
    """The rows of the table in the section headed `section_id`, each a list of cell texts."""
    text = html.decode()
    start = text.index(f'<h2 id="{section_id}"')
    body = text[text.index("<tbody>", start) : text.index("</tbody>", start)]
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.DOTALL):
        parsed = [Parsed(cell) for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)]
        rows.append(["".join(p.text) for p in parsed])
    return rows


# ---- any text stays text -----------------------------------------------------------------------


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pairwise_id=texts,
    question=texts,
    run_a=texts,
    run_b=texts,
    model=texts,
    pair_id=texts,
    text=texts,
    reason=texts,
    failure=texts,
    status=st.sampled_from(["complete", "running", "failed"]),
)
def test_any_stored_text_stays_text_on_the_pairwise_page(
    pairwise_id: str,
    question: str,
    run_a: str,
    run_b: str,
    model: str,
    pair_id: str,
    text: str,
    reason: str,
    failure: str,
    status: str,
) -> None:
    runs = [f"{run_a}1", f"{run_b}2", "r3"]
    report = stats_report(
        runs,
        ladder(3),
        disagreements=[disagreement(pair_id, runs[0], runs[1], text, reason)],
        pairwise_id=pairwise_id,
        question=question,
        usage=Usage(3, 1, 100, 10, model),
        status=status,
        failure=failure,
    )
    html = render_pairwise(report)
    page = assert_only_page_markup(html.decode())
    words = "".join(page.text)
    expected = [pairwise_id, question, model, *runs]
    expected += [pair_id, f"input {text}", f"output a {text}", f"output b {text}"]
    expected += [f"first {reason}", f"second {reason}"]
    if status == "failed":
        expected.append(failure)
    for value in expected:
        assert shown(value) in words


# ---- the figures -------------------------------------------------------------------------------


def test_the_page_shows_the_figures_pairwise_stats_computed() -> None:
    runs = ["ev_base", "ev_new", "ev_old"]
    # ev_new beats ev_base 40-10; ev_base and ev_old are even; ev_new beats ev_old 30-20.
    outcomes = {(0, 1): (10, 40, 6), (0, 2): (25, 25, 4), (1, 2): (30, 20, 2)}
    votes: dict[tuple[ps.Outcome, ps.Outcome], int] = {
        ("a", "a"): 8,
        ("b", "b"): 6,
        ("tie", "a"): 3,
        ("b", "tie"): 1,
    }
    report = stats_report(runs, outcomes, votes=votes)
    html = render_pairwise(report)
    words = words_of(html)

    # What was run.
    assert "Which answer is more helpful?" in words
    assert MODEL in words
    assert f"{report.usage.llm_calls:,} calls, 7 answered from the cache" in words
    assert "= 0.05, Holm" in words and "Bonferroni across the 3 matchups" in words
    # The leaderboard, ranked, as pairwise_stats ranked it.
    board = cells(html, "board-h")
    assert [row[1] for row in board] == [r.result_id for r in report.leaderboard]
    assert board[0][1] == "ev_new"
    for row, r in zip(board, report.leaderboard, strict=True):
        assert row == [
            str(r.rank),
            r.result_id,
            f"{r.strength:+.2f}",
            f"[{r.ci_low:+.2f}, {r.ci_high:+.2f}]",
            str(r.wins),
            str(r.losses),
            str(r.ties),
        ]
    # The matchups, their verdicts in words.
    table = cells(html, "matchups-h")
    assert len(table) == 3
    for row, m in zip(table, report.matchups, strict=True):
        assert row[1:6] == [m.a, m.b, str(m.a_wins), str(m.b_wins), str(m.ties)]
        assert m.win_rate is not None and m.ci_low is not None and m.ci_high is not None
        assert row[6] == f"{100 * m.win_rate:.1f} %"
        assert row[7] == f"[{100 * m.ci_low:.1f} %, {100 * m.ci_high:.1f} %]"
    assert report.matchups[0].verdict == "b_better"
    assert table[0][10] == "b better: ev_new"
    assert report.matchups[1].verdict == "no_significant_difference"
    assert table[1][10] == "no significant difference"
    assert table[1][6] == "50.0 %" and table[1][8] == "1.000"
    # Position consistency, as a percentage, with what a first-position bias looks like.
    position = report.position
    assert position is not None and position.consistency is not None
    [row] = cells(html, "position-h")
    assert row[0] == f"{position.judgements:,}"
    assert (
        row[1]
        == f"{position.first_chosen:,} ({100 * position.first_chosen / position.judgements:.1f} %)"
    )
    assert row[4] == f"{100 * position.consistency:.1f} %"
    assert "A judge with a first-position bias chooses whichever output it is shown first" in words
    # Judge-human agreement.
    human = report.judge_human
    assert human is not None and human.votes == 18
    assert human.agreement is not None and human.kappa is not None
    assert f"{100 * human.agreement:.1f} %" in words and f"{human.kappa:.3f}" in words


def test_the_forest_plot_draws_each_run_at_its_strength_around_zero() -> None:
    runs = [f"run-{k}" for k in range(4)]
    report = stats_report(runs, ladder(4))
    html = render_pairwise(report).decode()

    assert html.count('<svg role="img"') == 1
    circles = [float(x) for x in re.findall(r'<circle class="neutral" cx="([\d.]+)"', html)]
    assert len(circles) == 4
    # Ranked best first: the dots go right to left, the best right of the zero line.
    assert circles == sorted(circles, reverse=True)
    zero = float(re.search(r'<line class="ref" x1="([\d.]+)"', html).group(1))  # type: ignore[union-attr]
    assert circles[0] > zero > circles[-1]
    for r in report.leaderboard:
        interval = f"[{r.ci_low:+.2f}, {r.ci_high:+.2f}]"
        assert f"<title>{r.rank}. {r.result_id}: {r.strength:+.2f} {interval}</title>" in html


def test_the_strength_axis_is_symmetric_and_bounded() -> None:
    assert charts.strength_extent([0.2, -0.4, None]) == 1.0
    assert charts.strength_extent([-2.3, 1.0]) == 3.0
    assert charts.strength_extent([float("nan"), 40.0]) == 8.0


def test_eight_runs_draw_28_matchups_each_with_its_verdict_in_words() -> None:
    runs = [f"ev_{k:02d}" for k in range(8)]
    report = stats_report(runs, ladder(8))
    html = render_pairwise(report)
    words = words_of(html)

    table = cells(html, "matchups-h")
    assert len(report.matchups) == len(table) == 28
    verdicts = Counter(m.verdict for m in report.matchups)
    assert verdicts["a_better"] and verdicts["no_significant_difference"]
    for row, m in zip(table, report.matchups, strict=True):
        said = {
            "a_better": f"a better: {m.a}",
            "b_better": f"b better: {m.b}",
            "no_significant_difference": "no significant difference",
        }[m.verdict]
        assert row[10] == said
    assert len(cells(html, "board-h")) == 8
    assert html.decode().count("<circle") == 8
    assert "Bonferroni across the 28 matchups (one per two runs)" in words


def test_a_disagreement_names_the_run_each_order_chose() -> None:
    # Order 1 shows (a, b): "first" is a. Order 2 shows (b, a): "first" is b, "second" a.
    first_first = disagreement("p7", "ev_a", "ev_b")
    tie_second = dataclasses.replace(
        first_first, pair_id="p8", first_order_winner="tie", second_order_winner="second"
    )
    report = stats_report(
        ["ev_a", "ev_b"], {(0, 1): (3, 2, 4)}, disagreements=[first_first, tie_second]
    )
    words = words_of(render_pairwise(dataclasses.replace(report, disagreements_total=9)))

    assert "2 listed, of 9" in words
    assert "Order 1: a shown first Chose the output shown first: ev_a" in words
    assert "Order 2: b shown first Chose the output shown first: ev_b" in words
    assert "Order 1: a shown first Called it a tie" in words
    assert "Order 2: b shown first Chose the output shown second: ev_a" in words
    assert "Input (10 characters) input text" in words
    assert "Output of a (13 characters) output a text" in words


def test_unread_texts_say_so() -> None:
    unread = dataclasses.replace(disagreement(), input=None, output_b=None)
    words = words_of(render_pairwise(stats_report(["a", "b"], ladder(2), disagreements=[unread])))
    assert words.count("Not shown: this text was not read for the page.") == 2


def test_at_most_max_disagreements_are_listed() -> None:
    many = [disagreement(f"p{k}") for k in range(MAX_DISAGREEMENTS + 5)]
    html = render_pairwise(stats_report(["a", "b"], ladder(2), disagreements=many))
    assert html.decode().count('<article class="pair"') == MAX_DISAGREEMENTS
    assert f"the first {MAX_DISAGREEMENTS} of the {MAX_DISAGREEMENTS + 5} read" in words_of(html)


def test_one_order_only_has_no_consistency_and_no_disagreements() -> None:
    report = stats_report(["a", "b"], ladder(2), both_orders=False)
    assert report.position is not None and report.position.consistency is None
    html = render_pairwise(report)
    words = words_of(html)
    assert "Consistency needs both orders" in words
    assert cells(html, "position-h")[0][4] == "—"
    assert "Where the two orders disagreed" not in words
    assert "no: every comparison judged once" in words


def test_no_votes_and_no_disagreements_say_so() -> None:
    report = stats_report(["a", "b"], ladder(2), disagreements_total=0)
    words = words_of(render_pairwise(report))
    assert "No one has voted on these comparisons yet (PUT /pairwise/pw_0123/vote)" in words
    assert "In every comparison both orders chose the same run." in words


# ---- running and failed ------------------------------------------------------------------------


def pending(status: str, **fields: Any) -> PairwiseReport:
    """A judging not complete: no figures yet, as GET /pairwise/{id} answers it."""
    values: dict[str, Any] = {
        "pairwise_id": "pw_9",
        "status": status,
        "question": "Which is kinder?",
        "result_ids": ["ev_1", "ev_2", "ev_3"],
        "pairs_used": 40,
        "both_orders": True,
        "alpha": ALPHA,
        "usage": Usage(30, 0, 9_000, 1_000, MODEL),
        "progress_done": 30,
        "progress_total": 240,
        **fields,
    }
    return PairwiseReport(**values)


def test_a_running_judging_shows_its_progress() -> None:
    html = render_pairwise(pending("running"))
    words = words_of(html)
    assert '<progress value="30" max="240"' in html.decode()
    assert "30 of 240 pairs judged (12 %)" in words
    assert '<span class="status running">running</span>' in html.decode()
    for absent in ("Leaderboard", "Matchups", "Position consistency", "orders disagreed"):
        assert absent not in words
    # Nothing to divide by: the bar is empty, not broken.
    empty = render_pairwise(pending("running", progress_done=0, progress_total=0)).decode()
    assert '<progress value="0" max="1"' in empty


def test_a_failed_judging_shows_its_failure() -> None:
    html = render_pairwise(pending("failed", failure="the judge <b>refused</b> pair p3"))
    words = words_of(html)
    assert "This pairwise judging failed" in words
    assert "the judge <b>refused</b> pair p3" in words
    assert "30 of 240 pairs had been judged" in words
    assert "<progress" not in html.decode()
    assert "No reason was recorded." in words_of(render_pairwise(pending("failed")))


def test_the_report_is_built_from_the_get_body() -> None:
    runs = ["ev_a", "ev_b"]
    reference = stats_report(runs, {(0, 1): (9, 3, 2)}, votes={("a", "a"): 2, ("b", "a"): 1})
    body = {
        "pairwise_id": "pw_0123",
        "status": "complete",
        "progress": {"done": 14, "total": 14},
        "failure": None,
        "question": reference.question,
        "result_ids": runs,
        "pairs_used": reference.pairs_used,
        "both_orders": True,
        "alpha": ALPHA,
        "usage": {**reference.usage.as_dict(), "cost_usd": 0.0012},
        "position": dataclasses.asdict(reference.position),  # type: ignore[call-overload]
        "matchups": [dataclasses.asdict(m) for m in reference.matchups],
        "leaderboard": [dataclasses.asdict(r) for r in reference.leaderboard],
        "verdicts": [
            {
                "pair_id": "p1",
                "a": "ev_a",
                "b": "ev_b",
                "winner": "a",
                "first_order": {"winner": "first", "reason": "r"},
                "second_order": {"winner": "second", "reason": "r"},
            }
        ],
        "next_cursor": None,
        "judge_human": dataclasses.asdict(reference.judge_human),  # type: ignore[call-overload]
    }
    built = PairwiseReport.from_body(body, [disagreement()], disagreements_total=3)
    assert built == dataclasses.replace(
        reference,
        progress_done=14,
        progress_total=14,
        disagreements=[disagreement()],
        disagreements_total=3,
    )
    # A running judging: no figures yet, no model.
    running = PairwiseReport.from_body(
        {
            **body,
            "status": "running",
            "progress": {"done": 2, "total": 14},
            "usage": {"llm_calls": 0, "cache_hits": 0, "input_tokens": 0, "output_tokens": 0,
                      "cost_usd": 0.0, "model": None},
            "position": None,
            "matchups": [],
            "leaderboard": [],
            "judge_human": None,
        }
    )  # fmt: skip
    assert running.usage == Usage() and running.position is None and running.leaderboard == []
    assert "2 of 14 pairs judged" in words_of(render_pairwise(running))


# ---- size --------------------------------------------------------------------------------------


def limits_report() -> PairwiseReport:
    """Everything at its field limit, in the characters that take the most bytes escaped: 8 runs
    with 128-character ids, a 2,000-character question, MAX_DISAGREEMENTS disagreements with
    100,000-character texts and reasons of what 512 tokens can say."""
    worst = '😀"<&' * (MAX_TEXT_CHARS // 4)
    runs = [f"{k}" + '🏃"' * 64 for k in range(8)]
    reason = '🧾"' * 2_000
    disagreements = [
        Disagreement(
            pair_id=f"{k}" + '🔑"' * 64,
            a=runs[k % 8],
            b=runs[(k + 1) % 8],
            input=worst,
            output_a=worst,
            output_b=worst,
            first_order_winner="first",
            first_order_reason=reason,
            second_order_winner="first",
            second_order_reason=reason,
        )
        for k in range(MAX_DISAGREEMENTS)
    ]
    return stats_report(
        runs,
        ladder(8),
        disagreements=disagreements,
        question='❓"' * 1_000,
        pairwise_id='🆔"' * 64,
        usage=Usage(10**9, 10**9, 10**15, 10**15, '🤖"' * 128),
        status="failed",
        failure=worst,
        votes={("a", "a"): 10**6, ("tie", "b"): 10**5},
    )


@pytest.mark.parametrize("compressed", [False, True])
def test_a_pairwise_page_at_the_field_limits_stays_under_5_mb_and_fits_a_response(
    compressed: bool,
) -> None:
    def fits(body: bytes) -> bool:
        sent = gzip.compress(body) if compressed else body
        return _proxy_bytes(sent, compressed) <= MAX_RESPONSE_BYTES

    html = render_pairwise(limits_report(), fits)
    assert len(html) <= MAX_PAGE_BYTES
    assert fits(html)
    text = html.decode()
    assert re.search(r"cut: the first [\d,]+ of 100,000 characters", text)
    assert re.search(r"cut: the first [\d,]+ of 4,000 characters", text)
    assert text.count('<article class="pair"') == MAX_DISAGREEMENTS
    assert_only_page_markup(text)
