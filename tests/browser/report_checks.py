"""What every report page must be once loaded in the browser, whatever it reports: no problem
(console error, CSP violation, uncaught error, dialog), no request, no script of the page's
texts run, its stylesheet applied, the hostile text shown as text, its charts there with a
title and description each (and a title on every mark), and nothing serious or critical for
axe-core."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tests.browser import axe
from tests.browser.chromium import Loaded

Call = Callable[..., Any]


def caller(client: Any, key: str) -> Call:
    """`call(method, path, body=None)`: the API at /v1 of `client` (a TestClient) with `key`,
    each answer checked to be a 200 (a set-up write that failed unseen would leave the page
    showing something else than the test says)."""

    def call(method: str, path: str, body: Any = None) -> Any:
        response = client.request(method, f"/v1{path}", json=body, headers={"Authorization": key})
        assert response.status_code == 200, response.text
        return response

    return call


def assert_loads_clean(
    loaded: Loaded, charts: Sequence[tuple[str, int]], ran: str, hostile: str
) -> None:
    """`charts`: (selector, how many) of each chart the page holds; `ran`: a script that is
    true when none of the page's texts ran; `hostile`: a text that must be shown as text."""
    assert loaded.problems() == []
    assert loaded.csp_violations == []
    assert loaded.requests == []
    assert loaded.evaluate(ran)
    # The stylesheet applied: the CSP let it in by its hash.
    assert loaded.evaluate("getComputedStyle(document.querySelector('h1')).fontSize") == "25.6px"
    # Every hostile text is there, as text.
    assert hostile in loaded.inner_text()
    for selector, expected in charts:
        assert loaded.count(selector) == expected, selector
    # Every chart has a title and a description, and every mark of it a title.
    assert loaded.count("svg") == sum(n for _, n in charts)
    assert loaded.count("svg > title") == loaded.count("svg") == loaded.count("svg > desc")
    assert all(t.strip() for t in loaded.texts("svg title"))
    # axe-core finds nothing serious or critical
    found = axe.blocking(loaded)
    assert not found, "\n".join(found)
