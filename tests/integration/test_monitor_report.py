"""GET /monitors/{id}/report (E8): a monitor's trend as one page. It holds what GET
/monitors/{id}/history says (each run's means, intervals and verdicts, its cost, alert and
failure), draws each metric's runs with a regression and a failure marked by their shape, links
each run to its evaluation report and comparison (links that answer), says when a monitor has
no run yet, when every run failed and when a run's result is gone; shows every text as text,
never the webhook's secret; and stays within one response at the field limits."""

from __future__ import annotations

import gzip
import re
from collections import Counter
from html.parser import HTMLParser
from itertools import pairwise
from typing import Any
from urllib.parse import urljoin, urlsplit

import boto3
import pytest
from evalsvc.api.responses import MAX_RESPONSE_BYTES, _proxy_bytes
from evalsvc.core.identifiers import now_ms
from evalsvc.core.settings import get_settings
from evalsvc.logic.pairs_digest import definitions_sha256
from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.models.metric_sets import MAX_DEFINITION_CHARS, MAX_DEFINITIONS
from evalsvc.models.monitors import (
    MAX_NAME_CHARS,
    MonitorIn,
    Run,
    RunMetric,
    RunStatus,
    StoredMonitor,
)
from evalsvc.models.reports import MonitorReport
from evalsvc.reports import charts
from evalsvc.reports.limits import MAX_PAGE_BYTES
from evalsvc.reports.monitor_page import render_monitor
from evalsvc.reports.pages import CONTENT_SECURITY_POLICY
from evalsvc.storage import monitors as store
from evalsvc.storage import results as results_store
from evalsvc.storage.writes import commit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape

from tests.integration import test_monitor_runs
from tests.integration.conftest import Tenant
from tests.integration.test_monitor_runs import (
    NO_PAIR,
    SECRET,
    create,
    put_pairs,
    run,
    steady,
    worse,
)
from tests.integration.test_reports import ELEMENTS, IMG, SCRIPT
from tests.unit.test_report_pages import shown
from tests.webhook_receiver import Receiver
from tests.work_queue import Work

# A webhook receiver on 127.0.0.1, the service allowed to post to it (a fixture).
hook = test_monitor_runs.hook
# Elements the monitor page adds to those of the other pages.
MONITOR_ELEMENTS = ELEMENTS | {"a", "br", "wbr", "bdi", "time", "path", "details", "summary"}
# Text a tenant may write in a metric or a label that a page must show as text: markup,
# quotes, a right-to-left override, zero-width and control characters, characters of 4 UTF-8
# bytes. The page shows the override and the controls as U+FFFD (`shown`), the rest as it is.
HOSTILE = f"{SCRIPT} {IMG} \"dq\" 'sq' \u202eevil\u202c \u200bzw\u200d \x07bel\x1b[0m 😀\U0001d54f"
# What of it a monitor's name may hold (a name refuses control characters): shown as it is.
HOSTILE_NAME = f"{SCRIPT} {IMG} \"dq\" 'sq' \u200bzw\u200d 😀\U0001d54f"
T0 = 1_790_000_000_000
HOUR_MS = 3_600_000


class Parsed(HTMLParser):
    """A page's elements, attributes (with the links' targets) and text."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.attributes: set[str] = set()
        self.hrefs: list[tuple[str, str]] = []  # (element, target)
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        for name, value in attrs:
            self.attributes.add(name)
            if name in ("href", "src", "action", "xlink:href"):
                self.hrefs.append((tag, value or ""))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    @property
    def words(self) -> str:
        return "".join(self.text)


def assert_safe(html: str) -> Parsed:
    """Only the page's own markup: no script, no handler, no image; links only to the
    service's other report pages, relative (the same origin); its CSP in a <meta>."""
    page = Parsed(html)
    assert set(page.tags) <= MONITOR_ELEMENTS, set(page.tags) - MONITOR_ELEMENTS
    assert not [a for a in page.attributes if a.startswith("on") or a in ("src", "style")]
    assert "<script" not in html.lower() and "<img" not in html.lower()
    for tag, target in page.hrefs:
        assert tag == "a", tag
        assert target.startswith(("../../evaluation/", "../../compare/report?")), target
    assert f'content="{escape(CONTENT_SECURITY_POLICY)}"' in html
    return page


def page_of(tenant: Tenant, monitor_id: str, **headers: str) -> Any:
    response = tenant.http.get(
        f"/v1/monitors/{monitor_id}/report", headers={**tenant.headers, **headers}
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert response.headers["x-content-type-options"] == "nosniff"
    return response


def history(tenant: Tenant, monitor_id: str) -> list[dict[str, Any]]:
    response = tenant.get(f"/monitors/{monitor_id}/history?limit=100")
    assert response.status_code == 200, response.text
    runs: list[dict[str, Any]] = response.json()["runs"]
    return runs


def shown_time(iso: str) -> str:
    """An ISO 8601 UTC time as the page writes it."""
    return iso.replace("T", " ").removesuffix("Z")


def fail_run(monitor_id: str, scheduled_ms: int, failure: str) -> None:
    """A run recorded as failed, as the engine records one."""
    stored = store.get_monitor("acme", monitor_id)
    assert stored is not None
    assert commit(store.claiming("acme", monitor_id, scheduled_ms, None, stored.last_run_ms))
    failed = Run("acme", monitor_id, scheduled_ms, "failed", failure=failure)
    assert commit(store.ending(failed, scheduled_ms, alert=False))


def section(html: str, heading_id: str) -> str:
    """The page from the heading `heading_id` to the next h2."""
    start = html.index(f'id="{heading_id}"')
    end = html.find("<h2", start)
    return html[start : end if end >= 0 else len(html)]


# ---- through the route ---------------------------------------------------------------------------


def test_steady_regressed_and_failed_runs_are_drawn_as_the_history_says(
    acme: Tenant, work: Work
) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, None, name="prod quality")
    run(monitor_id, work)
    second = run(monitor_id, work)
    fail_run(monitor_id, second.scheduled_ms + 1, f"the judge was down {SCRIPT}")
    put_pairs(acme, worse())  # the app's answers got longer
    third = run(monitor_id, work)
    assert [m.verdict for m in third.metrics] == ["regressed"]

    html = page_of(acme, monitor_id).text
    page = assert_safe(html)
    words = page.words

    # The title: the monitor's name and what it watches.
    assert "<h1>prod quality</h1>" in html
    for said in ("seed dataset prod", "rate(1 hour) (UTC)", "the previous complete run"):
        assert said in words
    assert "none: runs alert nobody" in words
    # The latest run regressed on its one metric, and says so first.
    assert "The latest run regressed" in words
    # Every run as GET /monitors/{id}/history gives it, newest first.
    runs = history(acme, monitor_id)
    assert len(runs) == 4
    table = section(html, "runs-h")
    places = [table.index(shown_time(r["scheduled_for"])) for r in runs]
    assert places == sorted(places)
    for r in runs:
        for m in r["metrics"]:
            assert f"{m['mean']:.2f} [{m['ci_low']:.2f}, {m['ci_high']:.2f}]" in words
    assert table.count("not compared (no baseline)") == 1  # the first run
    assert table.count("no significant difference") == 1  # the second
    assert table.count(">regressed<") == 1  # the third
    assert f"the judge was down {SCRIPT}" in words
    assert "manual" in words and "Cost: $0" in words and "Pairs matched: 30" in words

    # One chart (one metric): a dot and a bar for each run that measured it, the regression a
    # triangle, the failed run a cross on the axis, the line broken there.
    assert page.tags["svg"] == 1
    chart = html[html.index("<svg") : html.index("</svg>")]
    assert chart.count("<circle") == 2
    assert chart.count('<line class="ci ') == 3
    assert len(re.findall(r'<path class="worse" d="M[^"]*Z"', chart)) == 1
    assert chart.count('<path class="ci worse" fill="none"') == 1
    [line] = re.findall(r'<path class="axis" fill="none" d="([^"]*)"', chart)
    assert line.count("M") == 2  # the failure breaks it
    assert "Regressed in 1 run, failed runs: 1." in words

    # Each run's reports, linked relative to the page, answer.
    base = f"http://testserver/v1/monitors/{monitor_id}/report"
    links = [target for _, target in page.hrefs]
    assert len([t for t in links if "/evaluation/" in t]) == 3
    compared = [t for t in links if "/compare/report?" in t]
    assert len(compared) == 2
    for target in links:
        url = urlsplit(urljoin(base, target))
        assert url.netloc == "testserver" and url.path.startswith("/v1/")
        answer = acme.http.get(f"{url.path}?{url.query}", headers=acme.headers)
        assert answer.status_code == 200, (target, answer.text)
        assert answer.headers["content-type"] == "text/html; charset=utf-8"
    regression = acme.http.get(urlsplit(urljoin(base, compared[0])).geturl(), headers=acme.headers)
    assert third.result_id in regression.text and "regressed" in regression.text


def test_the_alerts_are_shown_and_the_webhook_secret_never(
    acme: Tenant, work: Work, hook: Receiver
) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, hook)
    run(monitor_id, work)
    put_pairs(acme, worse())
    run(monitor_id, work)  # regressed: alerted
    failing = create(acme, hook, pair_query=NO_PAIR, name="broken")
    hook.answers = [500, 503, 500]
    run(failing, work)  # failed: alerted, the receiver failing

    regressed = assert_safe(page_of(acme, monitor_id).text).words
    assert "Alert: delivered (HTTP 200, 1 attempt)" in regressed
    assert "Alert: none needed" in regressed  # the first run: nothing to alert
    assert f"set: a signed post to {hook.url} when a run regresses or fails" in regressed
    failed = page_of(acme, failing).text
    assert "Alert: failed after 3 attempts (HTTP 500)" in assert_safe(failed).words
    for html in (failed, page_of(acme, monitor_id).text):
        assert SECRET not in html


def test_a_monitor_with_no_run_says_when_the_first_is_due(acme: Tenant) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, None)
    due = acme.get(f"/monitors/{monitor_id}").json()["next_run_at"]

    page = assert_safe(page_of(acme, monitor_id).text)

    assert f"its first run is due at {shown_time(due)} (UTC)" in page.words
    assert "No run yet" in page.words
    assert page.tags["svg"] == 0 and page.tags["table"] == 0 and page.hrefs == []


def test_a_monitor_whose_runs_all_failed_says_so_and_why(acme: Tenant, work: Work) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, None, pair_query=NO_PAIR)
    runs = [run(monitor_id, work) for _ in range(2)]
    assert {r.status for r in runs} == {"failed"}

    page = assert_safe(page_of(acme, monitor_id).text)

    assert "Every run shown failed" in page.words
    assert "No run shown measured anything yet" in page.words
    assert runs[0].failure is not None and "could not start" in runs[0].failure
    assert page.words.count(runs[0].failure) >= 2  # the newest first, then each in the table
    assert page.tags["svg"] == 0
    assert "2 runs, newest first: 0 regressed, 2 failed." in page.words


def test_a_run_whose_result_is_gone_says_so(acme: Tenant, work: Work) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, None)
    ran = run(monitor_id, work)
    assert ran.result_id is not None
    boto3.client("dynamodb", region_name="us-east-1").delete_item(
        TableName=get_settings().results_table,
        Key={
            "pk": {"S": results_store.result_pk("acme", ran.result_id)},
            "sk": {"S": results_store.HEADER_SK},
        },
    )

    page = assert_safe(page_of(acme, monitor_id).text)

    assert "This run's result is gone: its metrics' definitions are not known." in page.words
    assert "M1: metric 1 of runs whose result is gone" in page.words
    assert "check:max_words:6" not in page.words
    [figures] = ran.metrics
    assert f"{figures.mean:.2f} [{figures.ci_low:.2f}, {figures.ci_high:.2f}]" in page.words
    assert page.tags["svg"] == 1


@pytest.mark.parametrize(
    ("who", "monitor", "status", "says"),
    [
        ("globex", "acme's", 404, "no monitor with id"),
        ("acme", "mon_none", 404, "no monitor with id 'mon_none'"),
        ("acme", "a%20b", 400, "monitor id"),
        ("acme", "-x", 400, "monitor id"),
    ],
)
def test_another_tenants_or_no_monitor_is_an_error(
    acme: Tenant, globex: Tenant, who: str, monitor: str, status: int, says: str
) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, None) if monitor == "acme's" else monitor
    asking = globex if who == "globex" else acme

    response = asking.get(f"/monitors/{monitor_id}/report")

    assert response.status_code == status, response.text
    assert says in response.json()["error"]
    if who == "globex":
        assert page_of(acme, monitor_id).status_code == 200  # acme's own page


def test_hostile_names_and_definitions_are_shown_as_text(acme: Tenant, work: Work) -> None:
    put_pairs(acme, steady())
    definition = f"check:contains:{HOSTILE}"
    answer = acme.post("/specify_questions", {"metrics": [definition, "check:max_words:6"]})
    assert answer.status_code == 200, answer.text
    body = {
        "name": HOSTILE_NAME,
        "seed_data_id": "prod",
        "metrics_id": answer.json()["metrics_id"],
        "schedule": "rate(1 hour)",
    }
    created = acme.post("/monitors", body)
    assert created.status_code == 201, created.text
    monitor_id = created.json()["monitor_id"]
    assert run(monitor_id, work).status == "complete"
    labelled = acme.post("/monitors", {**body, "pair_query": {"pair_labels": [HOSTILE[:60]]}})
    assert labelled.status_code == 201, labelled.text

    html = page_of(acme, monitor_id).text
    page = assert_safe(html)

    assert HOSTILE_NAME in page.words  # the name, whole
    assert shown(definition) in page.words  # in its heading, whole (it is short)
    assert page.tags["svg"] == 2
    assert "window.__ran=1</script>" not in html and 'onerror="' not in html
    assert f"<title>Trend report — monitor {escape(HOSTILE_NAME)}</title>" in html
    of_labels = page_of(acme, labelled.json()["monitor_id"]).text
    assert f"every pair labelled {shown(HOSTILE[:60])}, at each run" in assert_safe(of_labels).words
    # The override and the controls are shown, never obeyed; the zero-width characters stay
    for sent in (html, of_labels):
        assert not {"\u202e", "\u202c", "\x07", "\x1b"} & set(sent)
        assert "\u200b" in sent and "\u200d" in sent


# ---- at the field limits -------------------------------------------------------------------------

WORST_DEFINITION = '🧩"' * (MAX_DEFINITION_CHARS // 2)
WORST_FAILURE = '😀"<&' * (store.MAX_FAILURE_CHARS // 4)
WORST_NAME = '🛰"' * (MAX_NAME_CHARS // 2)


def store_result(results_id: str, definitions: list[str]) -> None:
    result = EvaluationResult(
        tenant="acme",
        results_id=results_id,
        created_ms=now_ms(),
        dataset_id="prod",
        dataset_kind=DatasetKind.SEED,
        metrics_id="m",
        definitions=definitions,
        system_prompt="",
        pair_count=200,
        summaries=[],
    )
    assert commit(results_store.running(result))


def test_a_monitor_at_the_field_limits_fits_one_response(acme: Tenant) -> None:
    put_pairs(acme, steady())
    monitor_id = create(acme, None, name=WORST_NAME)
    definitions = [f"{k}{WORST_DEFINITION}"[:MAX_DEFINITION_CHARS] for k in range(MAX_DEFINITIONS)]
    store_result("ev_limits", definitions)
    last: int | None = None
    for i in range(100):  # as many runs as the page shows, and one more it does not
        at = T0 + i * HOUR_MS
        assert commit(store.claiming("acme", monitor_id, at, None, last))
        last = at
        ended = Run("acme", monitor_id, at, "failed", failure=WORST_FAILURE)
        if i % 2 == 0:
            ended = Run(
                "acme",
                monitor_id,
                at,
                "complete",
                result_id="ev_limits",
                baseline_id="ev_limits",
                definitions_sha256=definitions_sha256(definitions),
                metrics=[
                    RunMetric(k, 3.25, 1.5, 4.75, "regressed" if k == i % 50 else None)
                    for k in range(MAX_DEFINITIONS)
                ],
                pairs_matched=200,
                cost_usd="12.345678",
            )
        assert commit(store.ending(ended, at, alert=False))
    fail_run(monitor_id, T0 - HOUR_MS, "older than the page shows")

    plain = page_of(acme, monitor_id, **{"Accept-Encoding": "identity"})
    packed = page_of(acme, monitor_id, **{"Accept-Encoding": "gzip"})

    assert "content-encoding" not in plain.headers
    assert packed.headers["content-encoding"] == "gzip" and packed.text == plain.text
    assert len(plain.content) <= MAX_PAGE_BYTES
    assert _proxy_bytes(plain.content, False) <= MAX_RESPONSE_BYTES
    page = assert_safe(plain.text)
    assert page.tags["svg"] == MAX_DEFINITIONS
    assert f"M{MAX_DEFINITIONS}: " in page.words
    assert WORST_NAME in page.words
    assert "older than the page shows" not in page.words
    assert "the newest 100 (GET /monitors/" in page.words
    assert page.words.count(WORST_FAILURE) == 50 + 1  # each failed run, and the latest's banner


# ---- drawn from reports built in memory ----------------------------------------------------------

# Any text: every code point (lone surrogates too, as stored text may hold them).
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=300)


def monitor(name: str) -> MonitorIn:
    """A monitor as stored (its name not checked again: a stored name may hold any text)."""
    body = {"name": "x", "seed_data_id": "prod", "metrics_id": "m1", "schedule": "rate(1 hour)"}
    return MonitorIn.model_validate(body).model_copy(update={"name": name})


def in_memory(
    name: str,
    definitions: list[str],
    failure: str,
    runs: int = 3,
    *,
    distinct: bool = False,
    worst: bool = False,
) -> MonitorReport:
    """A monitor's report, newest first: its runs alternately complete (each metric regressed
    in turn) and failed with `failure`; with `distinct`, each run's definitions its own; with
    `worst`, every run failed with `failure` after measuring every metric (more than a run
    records)."""
    made = []
    for i in range(runs):
        at = T0 + i * HOUR_MS
        named = [f"{i}{d}" for d in definitions] if distinct else definitions
        if i % 2 and not worst:
            made.append((Run("t", "mon_1", at, "failed", failure=failure), named))
            continue
        metrics = [
            RunMetric(k, 3.0, 2.0, 4.0, "regressed" if k == i % len(named) else None)
            for k in range(len(named))
        ]
        status: RunStatus = "failed" if worst else "complete"
        done = Run("t", "mon_1", at, status, result_id=f"ev_{i}", metrics=metrics, failure=failure)
        made.append((done, named))
    made.reverse()
    stored = StoredMonitor("t", "mon_1", "{}", T0, T0 + runs * HOUR_MS)
    return MonitorReport(monitor(name), stored, made, False)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=texts.filter(bool), definition=texts.filter(bool), failure=texts)
def test_any_stored_text_stays_text_on_the_page(name: str, definition: str, failure: str) -> None:
    html = render_monitor(in_memory(name, [definition, "check:non_empty"], failure)).decode()
    page = assert_safe(html)
    words = page.words
    assert shown(name) in words
    assert shown(charts.short(definition, 160)) in words
    if failure:
        assert shown(failure) in words


@pytest.mark.parametrize("distinct", [False, True], ids=["one-set", "a-set-a-run"])
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_the_largest_page_stays_under_5_mb_and_fits_a_response(
    compressed: bool, distinct: bool
) -> None:
    """100 runs, each with 50 metrics of the longest definitions and the longest failure; with
    `distinct` each run's metrics set another (the "latest" set, changed every time)."""
    definitions = [f"{k}{WORST_DEFINITION}"[:MAX_DEFINITION_CHARS] for k in range(MAX_DEFINITIONS)]
    report = in_memory(
        WORST_NAME, definitions, WORST_FAILURE, runs=100, distinct=distinct, worst=True
    )

    def fits(body: bytes) -> bool:
        sent = gzip.compress(body, compresslevel=5) if compressed else body
        return _proxy_bytes(sent, compressed) <= MAX_RESPONSE_BYTES

    html = render_monitor(report, fits)

    assert len(html) <= MAX_PAGE_BYTES and fits(html)
    text = html.decode()
    page = assert_safe(text)
    assert page.tags["svg"] == MAX_DEFINITIONS  # the rest are listed, not charted
    assert section(text, "runs-h").count("<time datetime=") == 100
    assert WORST_NAME in page.words
    if distinct:
        assert f"{100 * MAX_DEFINITIONS - MAX_DEFINITIONS:,} more metrics appear only" in text


def test_a_trend_puts_each_run_in_its_slot_oldest_left() -> None:
    values = [
        charts.TrendValue("2026-01-01 00:00:00.000", 5.0, 4.0, 9.0, "dot", "a"),
        charts.TrendValue("2026-01-01 01:00:00.000", 3.0, 2.0, 4.0, "dot", "b"),
        charts.TrendValue("2026-01-01 02:00:00.000", None, None, None, "failed", "c"),
        charts.TrendValue("2026-01-01 03:00:00.000", 1.0, 1.0, 1.0, "regressed", "d"),
        charts.TrendValue("2026-01-01 04:00:00.000", None, None, None, "none", "e"),
    ]
    trend = charts.trend(values, title="t", description="d", low=1, high=5, ticks=[1, 3, 5])
    top, axis = trend.plot_top, trend.axis_y

    xs = [m.x for m in trend.marks]
    gaps = {round(b - a, 1) for a, b in pairwise(xs)}
    assert xs == sorted(xs) and len(gaps) == 1  # equally spaced, oldest left
    assert trend.plot_x0 < xs[0] and xs[-1] < trend.plot_x1
    first, second, failed, regressed, absent = trend.marks
    assert (first.y, first.y_low, first.y_high) == (top, axis - (axis - top) * 3 / 4, top)  # 9: 5
    assert second.y == (top + axis) / 2
    assert failed.y is None and failed.shape.count("M") == 2 and f"{axis - 5:.2f}" in failed.shape
    assert regressed.y == axis and regressed.shape.endswith("Z") and regressed.tone == "worse"
    assert absent.y is None and absent.shape == ""
    # The line joins the first two runs, breaks at the failure, and starts again.
    assert trend.line.count("M") == 2 and trend.line.count("L") == 1
    assert [t.label for t in trend.labels] == [
        "2026-01-01 00:00",
        "2026-01-01 02:00",
        "2026-01-01 04:00",
    ]
    assert trend.anchors == ["start", "middle", "end"]
    assert [t.y for t in trend.ticks] == [axis, (top + axis) / 2, top]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("short words only", "short words only"),
        ("a" * 45, f"{'a' * 20}<wbr>{'a' * 20}<wbr>aaaaa"),
        ("<b>" * 7 + " x", "&lt;b&gt;" * 6 + "&lt;b<wbr>&gt; x"),
    ],
)
def test_a_long_word_may_break_and_stays_text(text: str, shown: str) -> None:
    from evalsvc.reports.monitor_page import breakable

    assert str(breakable(text)) == shown
