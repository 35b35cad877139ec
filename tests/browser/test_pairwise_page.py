"""The pairwise page (E5) as a browser sees it: drawn from reports built in memory (the route
that serves it is E5's) whose ids, question, model, failure, pair texts and reasons hold
`<script>` and `<img onerror>`, then loaded in headless Chromium with the network cut off. Each
variant renders with no console message and no CSP violation, asks for nothing, runs nothing,
applies its stylesheet (the CSP lets it in by its hash), has its chart with its titles, and
prints."""

from __future__ import annotations

import dataclasses

import pytest
from evalsvc.reports.pages import HEADERS
from evalsvc.reports.pairwise_page import Disagreement, PairwiseReport, render_pairwise
from evalsvc.spending.meter import Usage

from tests.browser.chromium import Browser, pdf_pages
from tests.browser.report_checks import assert_loads_clean
from tests.integration.test_reports import IMG, SCRIPT
from tests.unit.test_pairwise_page import ladder, stats_report

# What a script in the page would set if any ran.
RAN = "window.__ran === undefined"
RUNS = [f"ev_{k} {SCRIPT}" for k in range(8)]
FAILURE = f"the judge answered nonsense for pair p01: {IMG}"


def _disagreement(k: int) -> Disagreement:
    return Disagreement(
        pair_id=f"p{k:02d} {IMG}",
        a=RUNS[k % 8],
        b=RUNS[(k + 1) % 8],
        input=f"question {k} {IMG}",
        output_a=f"please {k} {SCRIPT}",
        output_b=f"no {k} {IMG}",
        first_order_winner="first",
        first_order_reason=f"The first is kinder {SCRIPT}",
        second_order_winner="first",
        second_order_reason=f"The first is kinder {IMG}",
    )


def _pages() -> dict[str, str]:
    complete = stats_report(
        RUNS,
        ladder(8),
        disagreements=[_disagreement(k) for k in range(6)],
        votes={("a", "a"): 7, ("b", "a"): 2, ("tie", "tie"): 1},
        pairwise_id=f"pw {SCRIPT}",
        question=f"Which answer is <b>kinder</b>? {SCRIPT}",
        usage=Usage(900, 12, 310_000, 52_000, f"openai:gpt-4o-mini {IMG}"),
        disagreements_total=17,
    )
    running = PairwiseReport(
        pairwise_id=f"pw {SCRIPT}",
        status="running",
        question=f"Which answer is kinder? {SCRIPT}",
        result_ids=RUNS[:3],
        pairs_used=40,
        both_orders=True,
        alpha=0.05,
        usage=Usage(30, 0, 9_000, 1_000, "openai:gpt-4o-mini"),
        progress_done=30,
        progress_total=240,
    )
    failed = dataclasses.replace(running, status="failed", failure=FAILURE)
    return {
        name: render_pairwise(report).decode()
        for name, report in (("complete", complete), ("running", running), ("failed", failed))
    }


PAGES = _pages()
# Charts each page holds: (selector, how many).
CHARTS = {"complete": [("svg.forest", 1)], "running": [], "failed": []}
CSP = {"Content-Security-Policy": HEADERS["Content-Security-Policy"]}


@pytest.mark.parametrize("kind", sorted(CHARTS))
@pytest.mark.parametrize("with_header", [False, True], ids=["meta-only", "with-header"])
def test_the_pairwise_page_loads_clean_asks_for_nothing_and_runs_nothing(
    browser: Browser, kind: str, with_header: bool
) -> None:
    loaded = browser.load(PAGES[kind], headers=CSP if with_header else None)

    assert_loads_clean(loaded, CHARTS[kind], RAN, SCRIPT)


def test_the_complete_page_draws_every_run_and_matchup(browser: Browser) -> None:
    loaded = browser.load(PAGES["complete"])
    # A dot per run, each inside the axis.
    dots = loaded.evaluate(
        "[...document.querySelectorAll('svg.forest circle')].map(c => +c.getAttribute('cx'))"
    )
    axis = loaded.evaluate(
        "(() => { const l = document.querySelector('svg.forest line.axis');"
        " return [+l.getAttribute('x1'), +l.getAttribute('x2')]; })()"
    )
    assert len(dots) == 8 and all(axis[0] <= x <= axis[1] for x in dots)
    # 28 matchups, each verdict in words.
    verdicts = loaded.texts("#matchups-h ~ table tbody td:last-child")
    assert len(verdicts) == 28
    assert all(
        v.startswith(("a better: ", "b better: ", "no significant difference")) for v in verdicts
    )
    # Headings and table headers for a screen reader.
    assert loaded.count("h1") == 1 and loaded.count("h2") >= 5
    assert loaded.count("th[scope='col']") >= 20 and loaded.count("th[scope='row']") == 36
    assert loaded.count("article.pair") == 6
    assert "6 listed, of 17" in loaded.inner_text()


def test_the_running_and_failed_pages_say_so(browser: Browser) -> None:
    running = browser.load(PAGES["running"])
    assert "30 of 240 pairs judged" in running.inner_text()
    assert running.evaluate("document.querySelector('progress').max") == 240
    assert running.evaluate("document.querySelector('progress').value") == 30
    failed = browser.load(PAGES["failed"])
    assert FAILURE in failed.inner_text()
    assert failed.count("progress") == 0


def test_the_pairwise_page_prints(browser: Browser) -> None:
    loaded = browser.load(PAGES["complete"], media="print")
    assert loaded.problems() == [] and loaded.requests == []
    # The scroll boxes open up in print: no text is hidden behind a scroll bar.
    hidden = loaded.evaluate(
        "[...document.querySelectorAll('.text')].filter(e => e.scrollHeight > e.clientHeight + 1)"
        ".length"
    )
    assert hidden == 0
    assert pdf_pages(loaded.pdf()) >= 1


def test_the_page_holds_no_script_and_no_image() -> None:
    for html in PAGES.values():
        assert "<script" not in html.lower() and "<img" not in html.lower()
