"""The review app (E9): what a first load transfers and how long it takes, against the local
server, and what serving the files costs the ReviewAppFunction.

    .venv/bin/python bench/review_app.py [--rounds 10]

- Transfer: the page and every file it loads, gzip-compressed as served (bytes on the wire,
  headers included, from the browser's Resource Timing), and the same bodies uncompressed.
- First load (cold): a new browser context (empty cache) opens /app/; timed in the page (from
  navigation start) to the sign-in page drawn by the app's script (its form in the document)
  and to the load event.
- Warm load: a reload in the same context: the page is revalidated (304), the versioned files
  come from the cache.
- The function: a fresh Python process importing functions/review_app/app.py (reading and
  compressing the files: its init), then the time per answer in-process.

Runs Debian's Chromium headless (as the browser tests do), with the network cut off beyond
127.0.0.1.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser.chromium import CHROMIUM_ARGS, require_chromium  # noqa: E402
from tests.e2e.conftest import LocalServer  # noqa: E402

DRAWN = "() => window.__drawn !== undefined"
# Run before the page's own scripts (DevTools injects it; the page's CSP does not apply): the
# time, from navigation start, at which the app's sign-in form is in the document.
WATCH = """
new MutationObserver((changes, observer) => {
    if (document.querySelector('main form.sign-in')) {
        window.__drawn = performance.now();
        observer.disconnect();
    }
}).observe(document, {childList: true, subtree: true});
"""
TIMING = """() => {
    const entries = [...performance.getEntriesByType('navigation'),
                     ...performance.getEntriesByType('resource')];
    const nav = performance.getEntriesByType('navigation')[0];
    return {
        files: entries.length,
        transfer: entries.reduce((a, e) => a + e.transferSize, 0),
        encoded: entries.reduce((a, e) => a + e.encodedBodySize, 0),
        decoded: entries.reduce((a, e) => a + e.decodedBodySize, 0),
        load: nav.loadEventEnd,
        drawn: window.__drawn,
    };
}"""


def open_timed(page: Page, url: str, reload: bool = False) -> dict[str, float]:
    if reload:
        page.reload(wait_until="load")
    else:
        page.goto(url, wait_until="load")
    page.wait_for_function(DRAWN, timeout=20_000)
    figures: dict[str, float] = page.evaluate(TIMING)
    return figures


def function_figures(rounds: int) -> tuple[list[float], float, float]:
    function = ROOT / "functions" / "review_app" / "app.py"
    code = (
        "import time; t = time.perf_counter();"
        "import importlib.util, sys;"
        f"sys.path.insert(0, {str(ROOT / 'layers' / 'common')!r});"
        f"spec = importlib.util.spec_from_file_location('app', {str(function)!r});"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m);"
        "print((time.perf_counter() - t) * 1000)"
    )
    inits = [
        float(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(rounds)
    ]
    sys.path.insert(0, str(ROOT / "layers" / "common"))
    from evalsvc.handlers.review_app import WebApp

    web = WebApp(ROOT / "functions" / "review_app" / "static")
    asset = f"{web.version}/main.js"
    headers = {"accept-encoding": "gzip"}
    n = 2000
    started = time.perf_counter()
    for _ in range(n):
        web.respond("", api_base="/v1", app_base="/v1/app", headers=headers)
    page_us = (time.perf_counter() - started) / n * 1e6
    started = time.perf_counter()
    for _ in range(n):
        web.respond(asset, api_base="/v1", app_base="/v1/app", headers=headers)
    asset_us = (time.perf_counter() - started) / n * 1e6
    return inits, page_us, asset_us


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"median {statistics.median(values):7.1f}  p90 {p90:7.1f}  min {ordered[0]:7.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        server = LocalServer(Path(data))
        server.start()
        try:
            url = f"http://127.0.0.1:{server.port}/app/"
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=require_chromium(),
                    args=[
                        *CHROMIUM_ARGS,
                        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                    ],
                )
                cold, warm = [], []
                for _ in range(args.rounds + 1):
                    context = browser.new_context(service_workers="block")
                    page = context.new_page()
                    page.add_init_script(WATCH)
                    cold.append(open_timed(page, url))
                    warm.append(open_timed(page, url, reload=True))
                    context.close()
                browser.close()
        finally:
            server.stop()
    cold, warm = cold[1:], warm[1:]  # the first round warms the server's own caches
    first = cold[0]
    print(f"review app, {args.rounds} rounds against the local server ({url})")
    print(
        f"  transfer, first load: {first['files']:.0f} requests, "
        f"{first['transfer'] / 1024:.1f} KiB on the wire "
        f"(bodies {first['encoded'] / 1024:.1f} KiB gzipped, "
        f"{first['decoded'] / 1024:.1f} KiB plain); limit 300 KiB gzipped"
    )
    print(f"  transfer, warm load:  {warm[0]['transfer'] / 1024:.1f} KiB on the wire")
    print(f"  cold, to the sign-in page drawn (ms): {summary([c['drawn'] for c in cold])}")
    print(f"  cold, to the load event (ms):         {summary([c['load'] for c in cold])}")
    print(f"  warm, to the sign-in page drawn (ms): {summary([w['drawn'] for w in warm])}")
    print(f"  warm, to the load event (ms):         {summary([w['load'] for w in warm])}")
    inits, page_us, asset_us = function_figures(args.rounds)
    print(f"  function init, fresh process (ms):    {summary(inits)}")
    print(f"  function answer in-process: page {page_us:.0f} µs, asset {asset_us:.0f} µs")


if __name__ == "__main__":
    main()
