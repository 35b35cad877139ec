"""Fixtures for the browser tests: one headless Chromium per pytest worker (session scope; each
xdist worker is a process of its own), shared by every test of tests/browser.

Without Chromium the tests are skipped with a message saying how to install it, unless
EVALSVC_REQUIRE_BROWSER=1 (`make test` sets it): then they fail with that message. The executable
is $EVALSVC_CHROMIUM, else `chromium` or `chromium-browser` on PATH."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.browser.chromium import Browser, ChromiumMissing, require_chromium

REQUIRE_ENV = "EVALSVC_REQUIRE_BROWSER"
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/browser carries the `browser` marker (`-m "not browser"`)."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Browser]:
    """The worker's browser, launched on first use and closed at the end of the session."""
    try:
        executable, missing = require_chromium(), ""
    except ChromiumMissing as error:
        executable, missing = "", str(error)
    if missing and os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{missing} ({REQUIRE_ENV}=1: the browser tests must run.)", pytrace=False)
    if missing:
        pytest.skip(missing)
    with Browser(executable) as browser:
        yield browser


@pytest.fixture
def browser(chromium: Browser) -> Iterator[Browser]:
    """The worker's browser; pages a test loaded and did not close are closed after it."""
    yield chromium
    chromium.close_pages()
