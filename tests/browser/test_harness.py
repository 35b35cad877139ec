"""The harness can fail: each of its checks catches the violation it is there for, and stays
quiet on a clean self-contained page."""

from __future__ import annotations

import asyncio
import html
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.browser.chromium import (
    CHROMIUM_ENV,
    Browser,
    ChromiumMissing,
    pdf_pages,
    require_chromium,
)

# An address reserved for documentation (TEST-NET-2): nothing answers there, and the harness never
# lets a request go out anyway.
AWAY = "http://198.51.100.7"
STRICT_CSP = (
    '<meta http-equiv="Content-Security-Policy" '
    "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
DOT = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"

CLEAN = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">{STRICT_CSP}
<title>Evaluation report</title>
<style>
  body {{ font-family: sans-serif; margin: 2rem; }}
  th {{ text-align: left; }}
  .bar {{ fill: #3b6; }}
  @media print {{ .screen-only {{ display: none; }} }}
</style></head>
<body>
  <h1>Evaluation ev_1</h1>
  <p class="screen-only">Open in a browser.</p>
  <h2>Scores</h2>
  <table><tr><th>Metric</th><th>Mean</th></tr><tr><td>exact_match</td><td>0.75</td></tr></table>
  <svg width="200" height="40" role="img" viewBox="0 0 200 40">
    <title>exact_match: 0.75</title>
    <rect class="bar" x="0" y="0" width="150" height="40"></rect>
  </svg>
  <img alt="dot" src="{DOT}">
</body></html>"""


def test_a_clean_page_reports_nothing(browser: Browser) -> None:
    loaded = browser.load(CLEAN)

    assert loaded.problems() == []
    assert loaded.requests == []
    assert loaded.csp_violations == []
    loaded.assert_clean()
    assert loaded.count("svg") == 1
    assert loaded.texts("svg > title") == ["exact_match: 0.75"]
    assert loaded.texts("h1, h2") == ["Evaluation ev_1", "Scores"]
    assert loaded.texts("th") == ["Metric", "Mean"]
    assert loaded.attributes("svg", "role") == ["img"]
    assert loaded.evaluate("document.styleSheets.length") == 1
    assert loaded.evaluate("getComputedStyle(document.querySelector('th')).textAlign") == "left"
    # DevTools evaluation is not bound by the page's CSP, which forbids scripts.
    assert loaded.evaluate("window.__ran === undefined") is True


@pytest.mark.parametrize(
    ("body", "url", "kind"),
    [
        (f'<img src="{AWAY}/x.png">', f"{AWAY}/x.png", "image"),
        (f"<style>body {{ background: url({AWAY}/bg.png) }}</style>", f"{AWAY}/bg.png", "image"),
        (f"<style>@import url({AWAY}/a.css);</style>", f"{AWAY}/a.css", "stylesheet"),
        (
            f"<style>@font-face {{ font-family: F; src: url({AWAY}/f.woff2) }}"
            " p { font-family: F }</style><p>text</p>",
            f"{AWAY}/f.woff2",
            "font",
        ),
        (f'<link rel="stylesheet" href="{AWAY}/s.css">', f"{AWAY}/s.css", "stylesheet"),
        (f'<link rel="icon" href="{AWAY}/icon.png">', f"{AWAY}/icon.png", "other"),
        (f'<iframe src="{AWAY}/frame"></iframe>', f"{AWAY}/frame", "document"),
        (
            f'<div style="height: 20000px"></div><img loading="lazy" src="{AWAY}/lazy.png">',
            f"{AWAY}/lazy.png",
            "image",
        ),
    ],
    ids=["img", "css-url", "css-import", "font", "link", "icon", "iframe", "lazy-img"],
)
def test_a_request_is_cut_off_and_recorded(
    browser: Browser, body: str, url: str, kind: str
) -> None:
    loaded = browser.load(f"<!doctype html><title>t</title>{body}")

    assert [(r.url, r.resource_type) for r in loaded.requests] == [(url, kind)]
    assert not loaded.requests[0].blocked_by_csp
    assert "ERR_BLOCKED_BY_CLIENT" in (loaded.requests[0].failure or "")
    with pytest.raises(AssertionError, match="request: GET " + url):
        loaded.assert_clean()


@pytest.mark.parametrize(
    ("script", "url"),
    [
        (f"navigator.sendBeacon('{AWAY}/beacon', 'x')", f"{AWAY}/beacon"),
        (f"fetch('{AWAY}/api').catch(() => {{}})", f"{AWAY}/api"),
        (f"location = '{AWAY}/away'", f"{AWAY}/away"),
        (f"new WebSocket('{AWAY.replace('http', 'ws')}/socket')", "ws://198.51.100.7/socket"),
        ("fetch(URL.createObjectURL(new Blob(['x'])))", "blob:"),
        (
            "document.body.append(Object.assign(new Image(), {src: 'file:///etc/hostname'}))",
            "file:",
        ),
        ("if (!sessionStorage.again) { sessionStorage.again = 1; location.reload() }", "/page-"),
    ],
    ids=["beacon", "fetch", "navigation", "websocket", "blob", "file", "reload"],
)
def test_a_scripted_request_is_recorded(browser: Browser, script: str, url: str) -> None:
    loaded = browser.load(f"<!doctype html><title>t</title><body><script>{script}</script>")

    assert len(loaded.requests) == 1, loaded.requests
    assert url in loaded.requests[0].url


def test_a_request_to_the_pages_own_origin_is_cut_off_too(browser: Browser) -> None:
    loaded = browser.load('<!doctype html><title>t</title><img src="x.png">')

    assert [r.url for r in loaded.requests] == [loaded.url.rsplit("/", 1)[0] + "/x.png"]


def test_an_inline_script_is_detected(browser: Browser) -> None:
    loaded = browser.load("<!doctype html><title>t</title><script>window.__ran = 1</script>")

    assert loaded.evaluate("window.__ran") == 1
    assert loaded.problems() == []  # running is not a problem in itself: the canary tells


def test_a_csp_meta_blocks_an_inline_script_and_the_violation_is_recorded(
    browser: Browser,
) -> None:
    loaded = browser.load(
        f"<!doctype html><head>{STRICT_CSP}<title>t</title></head>"
        "<body><script>window.__ran = 1</script>"
    )

    assert loaded.evaluate("window.__ran === undefined") is True
    assert len(loaded.csp_violations) == 1
    assert "inline script" in loaded.csp_violations[0]
    assert any("Content Security Policy" in problem for problem in loaded.problems())


def test_a_csp_header_is_applied(browser: Browser) -> None:
    loaded = browser.load(
        "<!doctype html><title>t</title><script>window.__ran = 1</script>",
        headers={"Content-Security-Policy": "default-src 'none'"},
    )

    assert loaded.evaluate("window.__ran === undefined") is True
    assert loaded.csp_violations


def test_the_documents_answer_is_recorded_with_all_its_headers(browser: Browser) -> None:
    # Given a page served with a CSP header
    policy = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

    # When it is loaded
    loaded = browser.load(CLEAN, headers={"Content-Security-Policy": policy})

    # Then its one answer is recorded: its URL, status, kind and every header it came with
    assert [(a.url, a.status, a.resource_type, a.is_html) for a in loaded.answers] == [
        (loaded.url, 200, "document", True)
    ]
    assert loaded.answers[0].headers["content-security-policy"] == policy


@contextmanager
def echoing_server() -> Iterator[str]:
    """A server on 127.0.0.1 whose page says the X-Probe header it was asked with ("none" if
    absent), and whose /style.css is a style sheet; yields its origin."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/style.css":
                body, kind = b"p { color: #222; }", "text/css"
            else:
                probe = html.escape(self.headers.get("X-Probe", "none"))
                page = '<!doctype html><title>t</title><link rel=stylesheet href="/style.css">'
                body, kind = f"{page}<p>{probe}</p>".encode(), "text/html; charset=utf-8"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_an_opened_page_sends_the_headers_it_is_given_and_records_its_origins_answers(
    browser: Browser,
) -> None:
    with echoing_server() as origin:
        # Given a page opened with a header of its own
        with browser.open(f"{origin}/page", headers={"X-Probe": "sent"}) as first:
            # Then the server saw the header, and both answers (the document, its style sheet)
            # are recorded, each with its type
            assert first.inner_text("p") == "sent"
            assert sorted((a.url, a.is_html) for a in first.answers) == [
                (f"{origin}/page", True),
                (f"{origin}/style.css", False),
            ]
            assert first.requests == []

        # When the next page is opened without one
        second = browser.open(f"{origin}/page")

        # Then the header went with the first page: none is sent now
        assert second.inner_text("p") == "none"


def test_a_request_the_csp_blocked_is_still_recorded(browser: Browser) -> None:
    loaded = browser.load(f'<!doctype html><head>{STRICT_CSP}</head><img src="{AWAY}/x.png">')

    assert [(r.url, r.blocked_by_csp) for r in loaded.requests] == [(f"{AWAY}/x.png", True)]
    assert any("img-src" in violation for violation in loaded.csp_violations)


def test_an_event_handler_attribute_is_detected(browser: Browser) -> None:
    loaded = browser.load('<!doctype html><title>t</title><img src=x onerror="window.__ran=1">')

    assert loaded.evaluate("window.__ran") == 1


def test_an_event_handler_attribute_is_blocked_by_the_csp(browser: Browser) -> None:
    loaded = browser.load(
        f'<!doctype html><head>{STRICT_CSP}</head><svg onload="window.__ran=1"></svg>'
    )

    assert loaded.evaluate("window.__ran === undefined") is True
    assert any("event handler" in violation for violation in loaded.csp_violations)


def test_console_errors_and_warnings_are_collected(browser: Browser) -> None:
    loaded = browser.load(
        "<!doctype html><title>t</title>"
        "<script>console.error('bad', 1); console.warn('odd'); console.log('fine')</script>"
    )

    assert [(m.type, m.text) for m in loaded.console_errors] == [
        ("error", "bad 1"),
        ("warning", "odd"),
    ]
    assert [m.text for m in loaded.console] == ["bad 1", "odd", "fine"]
    assert loaded.problems() == ["console.error: bad 1", "console.warning: odd"]


def test_script_errors_and_dialogs_are_collected(browser: Browser) -> None:
    loaded = browser.load(
        "<!doctype html><title>t</title><script>alert('hi'); throw new Error('boom')</script>"
    )

    assert [(d.type, d.message) for d in loaded.dialogs] == [("alert", "hi")]
    assert loaded.page_errors == ["boom"]
    assert loaded.problems() == ["page error: boom", "dialog: alert 'hi'"]


def test_an_invalid_svg_attribute_is_a_console_error(browser: Browser) -> None:
    loaded = browser.load('<!doctype html><title>t</title><svg><rect width="5/"></rect></svg>')

    assert ["<rect> attribute width" in m.text for m in loaded.console_errors] == [True]


def test_what_happens_after_the_load_is_recorded_after_settle(browser: Browser) -> None:
    loaded = browser.load(CLEAN)
    loaded.evaluate(f"document.body.style.background = 'url({AWAY}/late.png)'")
    loaded.settle()

    assert [r.url for r in loaded.requests] == [f"{AWAY}/late.png"]


def test_print_media_screenshot_and_pdf(browser: Browser, tmp_path: Path) -> None:
    loaded = browser.load(CLEAN, media="print", width=800)
    assert "Open in a browser." not in loaded.inner_text()
    loaded.emulate_media("screen")
    assert "Open in a browser." in loaded.inner_text()

    png = loaded.screenshot(tmp_path / "page.png")
    assert png.startswith(PNG_SIGNATURE)
    assert (tmp_path / "page.png").read_bytes() == png
    assert int.from_bytes(png[16:20], "big") == 800  # the PNG's width: the viewport's

    pdf = loaded.pdf(tmp_path / "page.pdf")
    assert pdf.startswith(b"%PDF-")
    assert pdf_pages(pdf) == 1
    assert "Open in a browser." not in loaded.inner_text()  # pdf() left print media on
    loaded.assert_clean()


def test_a_closed_page_leaves_nothing_to_the_next(browser: Browser) -> None:
    first = browser.load(
        "<!doctype html><title>t</title><script>localStorage.kept = 1; document.cookie = 'c=1';"
        " setTimeout(() => console.error('late'), 50)</script>"
    )
    first.close()
    with pytest.raises(RuntimeError, match="closed"):
        first.count("p")

    second = browser.load("<!doctype html><title>t</title><p>next</p>")
    second.run(lambda page: page.wait_for_timeout(100))

    assert second.evaluate("[localStorage.kept ?? null, document.cookie]") == [None, ""]
    assert second.problems() == []


def test_asyncio_still_works_in_the_test_thread(browser: Browser) -> None:
    """The harness keeps Playwright's event loop on its own thread: tests of the same worker that
    run a loop themselves (Mangum's handlers, asyncio.run) are not disturbed."""
    browser.load(CLEAN).close()

    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert asyncio.run(answer()) == 42


def test_a_missing_chromium_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CHROMIUM_ENV, "/nonexistent/chromium")

    with pytest.raises(
        ChromiumMissing, match=r"EVALSVC_CHROMIUM=/nonexistent/chromium .*make browser"
    ):
        require_chromium()
