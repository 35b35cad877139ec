"""Every page the local server (`evalsvc serve`) serves on its origin, the review app's, opened in
Debian's Chromium: the API reference (/v1/docs), the OpenAPI document, the review app (/app/,
/app) and an evaluation's report. None asks for anything off the origin, and each HTML answer
carries a Content-Security-Policy that allows nothing by default. The API reference is also
axe-core clean and keyboard-operable."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from tests.browser import axe
from tests.browser.app_data import Api
from tests.browser.chromium import Browser, Loaded
from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.unit.test_api_reference import directives


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """The local server, with one evaluation scored by checks alone (no judge needed)."""
    running = LocalServer(tmp_path_factory.mktemp("origin-pages"))
    running.start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def evaluation(server: LocalServer) -> str:
    api = Api(server.base_url)
    metrics = api("POST", "/specify_questions", {"metrics": ["check:contains:please"]})
    pairs = [
        {"id": f"p{k}", "input": f"Question {k}?", "output": f"Answer {k}, please."}
        for k in range(4)
    ]
    return api.evaluate("origin-pages", pairs, metrics["metrics_id"])


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def assert_stays_on_its_origin(page: Loaded, origin: str) -> None:
    """Every request the page made went to `origin` (none was cut off for going elsewhere), and
    every HTML answer it got carries a CSP that allows nothing unless it says so, and nothing
    unsafe."""
    urls = [request.url for request in page.origin_requests] + [r.url for r in page.requests]
    assert [url for url in urls if origin_of(url) != origin] == []
    assert page.requests == []
    html = [answer for answer in page.answers if answer.is_html]
    for answer in html:
        policy = answer.headers.get("content-security-policy")
        assert policy, f"{answer.url} has no Content-Security-Policy"
        assert directives(policy)["default-src"] == ["'none'"], policy
        assert "unsafe" not in policy, policy
        assert answer.headers.get("x-content-type-options") == "nosniff", answer.url
    assert page.csp_violations == []
    assert page.page_errors == []
    assert page.console_errors == []


@pytest.mark.parametrize("path", ["/v1/docs", "/app/", "/app", "/v1/openapi.json"])
def test_a_page_of_the_local_server_asks_for_nothing_off_its_origin(
    browser: Browser, server: LocalServer, path: str
) -> None:
    # Given the local server's origin, where the review app keeps a signed-in reviewer's key
    origin = origin_of(server.base_url)

    # When one of its pages is opened
    page = browser.open(origin + path)

    # Then every request it made stayed on the origin, and each HTML answer carries a strict CSP
    assert page.answers, "the page got no answer at all"
    assert page.answers[0].url == origin + path and page.answers[0].status == 200
    if path != "/v1/openapi.json":
        assert page.answers[0].is_html
    assert_stays_on_its_origin(page, origin)


def test_an_evaluations_report_asks_for_nothing_off_its_origin(
    browser: Browser, server: LocalServer, evaluation: str
) -> None:
    # Given an evaluation's report on the local server's origin, read with the API key
    origin = origin_of(server.base_url)
    url = f"{server.base_url}/evaluation/{evaluation}/report"

    # When it is opened
    page = browser.open(url, headers={"Authorization": DEV_KEY})

    # Then it is the report, and it stayed on the origin under a strict CSP
    assert [(a.url, a.status, a.is_html) for a in page.answers][:1] == [(url, 200, True)]
    assert evaluation in page.inner_text("body")
    assert_stays_on_its_origin(page, origin)


def test_the_api_reference_runs_nothing_and_is_styled_by_its_own_stylesheet(
    browser: Browser, server: LocalServer
) -> None:
    # Given the API reference
    page = browser.open(f"{server.base_url}/docs")

    # Then it has no script, its one inline stylesheet applied (the CSP lets it in by hash), and
    # the only answer it got is its own document: it asked for nothing
    assert page.count("script") == 0
    assert page.evaluate("document.styleSheets.length") == 1
    assert page.evaluate("getComputedStyle(document.querySelector('th')).fontWeight") == "600"
    docs = f"{server.base_url}/docs"
    assert [request.url for request in page.origin_requests] == [docs]
    assert [answer.url for answer in page.answers] == [docs]
    # And it lists the operations, linked to the OpenAPI document beside it
    assert "POST /data/seed" in page.inner_text("nav")
    assert page.attributes("a[href='openapi.json']", "href") == ["openapi.json"]
    assert page.evaluate("document.querySelector('a[href=\"openapi.json\"]').href") == (
        f"{server.base_url}/openapi.json"
    )


def test_the_api_reference_is_axe_clean_and_keyboard_operable(
    browser: Browser, server: LocalServer
) -> None:
    # Given the API reference
    docs = f"{server.base_url}/docs"
    page = browser.open(docs)
    found = axe.blocking(page)
    assert not found, "axe on the API reference:\n  " + "\n  ".join(found)

    def focused() -> str:
        return str(page.evaluate("document.activeElement?.textContent?.trim() ?? ''"))

    # When Tab is pressed once: the skip link is focused, and shown
    page.run(lambda p: p.keyboard.press("Tab"))
    assert focused() == "Skip to the operations"
    assert page.evaluate("document.activeElement.getBoundingClientRect().left >= 0")

    # And Enter follows it: the operations are reached, and the next Tab focuses a link in them
    page.run(lambda p: p.keyboard.press("Enter"))
    assert page.evaluate("location.hash") == "#operations"
    page.run(lambda p: p.keyboard.press("Tab"))
    assert page.evaluate("document.activeElement.closest('#operations') !== null")

    # Then a link of the contents, followed by keyboard, leads to its operation
    page.run(lambda p: p.focus("nav a[href^='#op-']"))
    target = page.attributes("nav a[href^='#op-']", "href")[0]
    assert target is not None
    page.run(lambda p: p.keyboard.press("Enter"))
    assert page.evaluate("location.hash") == target
    top = "(id) => document.getElementById(id).getBoundingClientRect().top"
    assert page.evaluate(top, target[1:]) < 50
    # And nothing the keyboard did asked for anything: the document is the one request
    assert page.requests == []
    assert [request.url for request in page.origin_requests] == [docs]
