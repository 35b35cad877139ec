"""axe-core (npm, pinned by tests/browser/package-lock.json, installed by `make axe`) run inside
a page the browser tests opened.

The script is evaluated through DevTools, which the page's Content-Security-Policy does not
govern: the page under test keeps its real CSP, and nothing is added to its document."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from tests.browser.chromium import Loaded

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING = ("serious", "critical")

_RUN = """async () => {
    const result = await axe.run(document, {resultTypes: ["violations"]});
    return result.violations.map((v) => ({
        id: v.id, impact: v.impact, help: v.help,
        nodes: v.nodes.slice(0, 3).map((n) => n.target.join(" ") + ": " + n.failureSummary),
    }));
}"""


@cache
def _source() -> str:
    if not AXE.is_file():
        raise FileNotFoundError(
            f"{AXE} is missing: run `make axe` (npm ci in tests/browser) before the browser tests"
        )
    return AXE.read_text(encoding="utf-8")


def violations(page: Loaded) -> list[dict[str, Any]]:
    """Every axe-core violation on the page as it is now."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(_source())
    found: list[dict[str, Any]] = page.evaluate(_RUN)
    return found


def blocking(page: Loaded) -> list[str]:
    """The serious and critical violations, one line each (empty when there are none)."""
    return [
        f"{v['impact']} {v['id']} ({v['help']}): {'; '.join(v['nodes'])}"
        for v in violations(page)
        if v["impact"] in BLOCKING
    ]
