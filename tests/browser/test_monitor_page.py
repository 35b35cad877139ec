"""The monitor page (E8) as a browser sees it: made by the service's routes (moto, its work
queue, checks-only metrics) for a monitor whose name holds `<script>`, `<img onerror>`, quotes
and zero-width characters, whose metric holds them and right-to-left and control characters too
(shown as U+FFFD), and whose runs held steady, failed (saying why at length) and regressed; for
a monitor with no run yet, and one whose every run failed.
Each page, on a desktop and on a 360 px phone, renders with no console message and no CSP
violation, asks for nothing, runs nothing, applies its stylesheet, has a chart per metric with
its title and description, fits the phone's width, and axe-core finds nothing wrong with it. Its
links, the tables under its charts and its scrolling texts are reached with the keyboard."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from evalsvc.api.app import create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.logic import api_keys
from evalsvc.reports.pages import HEADERS
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.tables import create_queues, create_tables
from fastapi.testclient import TestClient

from tests.browser import axe
from tests.browser.chromium import Browser, Loaded
from tests.browser.report_checks import assert_loads_clean
from tests.conftest import point_service_at
from tests.integration.conftest import Tenant
from tests.integration.test_monitor_report import HOSTILE, HOSTILE_NAME, fail_run
from tests.integration.test_monitor_runs import NO_PAIR, put_pairs, steady, worse
from tests.integration.test_reports import SCRIPT
from tests.unit.test_report_pages import shown
from tests.work_queue import Work

# What a script in the page would set if any ran.
RAN = "window.__ran === undefined"
CSP = {"Content-Security-Policy": HEADERS["Content-Security-Policy"]}
# A check whose definition is long (it is shown whole in a box that scrolls) and hostile.
LONG_CHECK = f"check:contains:{HOSTILE} " + "a long definition of a metric " * 60
# Why a run failed, at length, on many lines.
LONG_FAILURE = "\n".join(f"line {k}: the judge was down {SCRIPT}" for k in range(60))
WIDTHS = [1200, 360]


def _run(tenant: Tenant, work: Work, monitor_id: str) -> None:
    response = tenant.post(f"/monitors/{monitor_id}/run")
    assert response.status_code == 202, response.text
    work.drain()


def _monitor(tenant: Tenant, name: str, metrics: list[str], **fields: object) -> str:
    answer = tenant.post("/specify_questions", {"metrics": metrics})
    assert answer.status_code == 200, answer.text
    body = {
        "name": name,
        "seed_data_id": "prod",
        "metrics_id": answer.json()["metrics_id"],
        "schedule": "rate(1 hour)",
        **fields,
    }
    created = tenant.post("/monitors", body)
    assert created.status_code == 201, created.text
    monitor_id: str = created.json()["monitor_id"]
    return monitor_id


@pytest.fixture(scope="module")
def pages() -> Iterator[dict[str, str]]:
    """Each kind of monitor page, as the service sent it."""
    with pytest.MonkeyPatch.context() as patch, moto_in_process():
        env = create_tables(boto3.client("dynamodb", region_name="us-east-1"), "browser")
        sqs = boto3.client("sqs", region_name="us-east-1")
        urls = create_queues(sqs, "browser")
        point_service_at(
            {
                **env,
                "EVALSVC_WORK_QUEUE_URL": urls["WorkQueue"],
                "EVALSVC_SYNC_WAIT_SECONDS": "0",
                "EVALSVC_CHUNK_RETRY_BASE_SECONDS": "0",
            },
            patch,
        )
        with TestClient(create_versioned_app(all_routers())) as client:
            key, _ = api_keys.create_key("acme", "ann", "ann@acme.test")
            yield _make_pages(Tenant(client, "acme", key), Work(sqs, urls))


def _make_pages(acme: Tenant, work: Work) -> dict[str, str]:
    put_pairs(acme, steady())
    trend = _monitor(acme, HOSTILE_NAME, [LONG_CHECK, "check:max_words:6"])
    _run(acme, work, trend)
    _run(acme, work, trend)
    latest = acme.get(f"/monitors/{trend}/history?limit=1").json()["runs"][0]
    fail_run(trend, int(latest["run_id"].rpartition(".")[2]) + 1, LONG_FAILURE)
    put_pairs(acme, worse())  # the app's answers got longer: max_words regresses
    _run(acme, work, trend)
    empty = _monitor(acme, f"nothing yet {SCRIPT}", ["check:max_words:6"])
    failing = _monitor(acme, f"broken {SCRIPT}", ["check:max_words:6"], pair_query=NO_PAIR)
    for _ in range(2):
        _run(acme, work, failing)

    def page(monitor_id: str) -> str:
        response = acme.get(f"/monitors/{monitor_id}/report")
        assert response.status_code == 200, response.text
        assert response.headers["content-security-policy"] == HEADERS["Content-Security-Policy"]
        return str(response.text)

    return {"trend": page(trend), "empty": page(empty), "failed": page(failing)}


# Charts each page holds: (selector, how many).
CHARTS = {"trend": [("svg.trend", 2)], "empty": [], "failed": []}


def _assert_fits_and_axe_finds_nothing(loaded: Loaded, width: int) -> None:
    assert loaded.evaluate("document.documentElement.scrollWidth") <= width
    found = axe.violations(loaded)
    assert found == [], found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("kind", sorted(CHARTS))
def test_a_monitor_page_loads_clean_fits_and_passes_axe(
    browser: Browser, pages: dict[str, str], kind: str, width: int
) -> None:
    loaded = browser.load(pages[kind], width=width, headers=CSP)

    assert_loads_clean(loaded, CHARTS[kind], RAN, SCRIPT)
    _assert_fits_and_axe_finds_nothing(loaded, width)


def test_the_page_keeps_the_hostile_texts_as_text_its_controls_shown_as_u_fffd(
    browser: Browser, pages: dict[str, str]
) -> None:
    loaded = browser.load(pages["trend"])

    assert loaded.texts("h1") == [" ".join(HOSTILE_NAME.split())]
    assert loaded.texts("head > title") == [
        " ".join(f"Trend report — monitor {HOSTILE_NAME}".split())
    ]
    assert loaded.count("wbr") > 0  # the long definition breaks, its text unchanged
    # The long definition whole, in a box of its own that scrolls: its right-to-left override
    # and control characters shown as U+FFFD, never obeyed.
    assert " ".join(shown(LONG_CHECK).split()) in loaded.texts(".text[role=region]")


def test_the_charts_mark_what_the_runs_found(browser: Browser, pages: dict[str, str]) -> None:
    loaded = browser.load(pages["trend"])
    marks = loaded.evaluate(
        """[...document.querySelectorAll('svg.trend')].map(svg => ({
            dots: [...svg.querySelectorAll('circle')].map(c => +c.getAttribute('cx')),
            down: [...svg.querySelectorAll('path.worse:not(.ci)')].length,
            crosses: [...svg.querySelectorAll('path.ci.worse')].length,
            bars: svg.querySelectorAll('line.ci').length,
            desc: svg.querySelector('desc').textContent,
        }))"""
    )
    contains, words = marks
    # check:contains (never met: the pairs do not hold the hostile text) held steady at 1
    assert len(contains["dots"]) == 3 and contains["down"] == 0
    assert contains["dots"] == sorted(contains["dots"])  # oldest left
    # max_words regressed in the newest run: a triangle, not a dot, at the right
    assert len(words["dots"]) == 2 and words["down"] == 1 and words["bars"] == 3
    assert "Regressed in 1 run, failed runs: 1." in words["desc"]
    for chart in marks:
        assert chart["crosses"] == 1  # the failed run, on the axis
    # The figures of every chart, as tables a screen reader reads, oldest first.
    rows = loaded.texts("details table tbody tr")
    assert len(rows) == 2 * 4
    assert "the run failed" in rows[2] and "regressed" in rows[7]
    # Headings and table headers for a screen reader.
    assert loaded.count("h1") == 1 and loaded.count("h2") >= 3
    assert loaded.count("th[scope='row']") == 2 * 4 + 4


# Whether the element the keyboard is on is one it was not on before (and not the page itself).
FOCUS_MOVED_ON = """(() => {
    const e = document.activeElement;
    window.__stops = window.__stops || [];
    const fresh = e !== document.body && !window.__stops.includes(e);
    window.__stops.push(e);
    return fresh;
})()"""


def test_links_tables_and_long_texts_are_reached_with_the_keyboard(
    browser: Browser, pages: dict[str, str]
) -> None:
    loaded = browser.load(pages["trend"], width=360)
    wanted = loaded.count("a[href], summary, [tabindex='0']")
    assert loaded.count("summary") == 2 and loaded.count("[tabindex='0']") >= 2

    moved = []
    for _ in range(wanted):
        loaded.run(lambda page: page.keyboard.press("Tab"))
        moved.append(loaded.evaluate(FOCUS_MOVED_ON))
    assert all(moved)  # each of them in turn, none twice
    # A scrolling text scrolls from the keyboard.
    box = "document.querySelector('.text[role=region]')"
    assert loaded.evaluate(f"{box}.scrollHeight > {box}.clientHeight")
    loaded.evaluate(f"{box}.focus()")
    loaded.run(lambda page: page.keyboard.press("PageDown"))
    scrolled = (  # within a few seconds: the browser may scroll smoothly
        "async () => { for (let k = 0; k < 100; k++) {"
        f" if ({box}.scrollTop > 0) return true;"
        " await new Promise((done) => setTimeout(done, 50)); } return false; }"
    )
    assert loaded.evaluate(scrolled)
    # A chart's table opens from the keyboard.
    loaded.evaluate("document.querySelector('summary').focus()")
    loaded.run(lambda page: page.keyboard.press("Enter"))
    assert loaded.evaluate("document.querySelector('details').open") is True
    assert loaded.evaluate("document.querySelector('details table').offsetHeight") > 0
    _assert_fits_and_axe_finds_nothing(loaded, 360)


def test_the_empty_and_failed_pages_say_so(browser: Browser, pages: dict[str, str]) -> None:
    empty = browser.load(pages["empty"]).inner_text()
    assert "No run yet" in empty and "its first run is due at" in empty
    failed = browser.load(pages["failed"])
    text = failed.inner_text()
    assert "Every run shown failed" in text and "could not start" in text
    assert failed.count("svg") == 0
