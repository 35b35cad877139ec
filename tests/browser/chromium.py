"""A headless Chromium (Debian's package, driven by Playwright) that loads HTML pages with the
network cut off, and records everything a page tried to do beyond showing itself.

    with Browser(require_chromium()) as browser:  # tests get it from the `browser` fixture
        loaded = browser.load(html)
        assert loaded.problems() == []  # no request, console error/warning, script error, dialog
        assert loaded.count("svg") == 2
        assert loaded.evaluate("window.__ran === undefined")
        loaded.screenshot("out.png")

How a page is loaded, and why:
- It is served by a tiny HTTP server on 127.0.0.1 (a fresh path for each load), not given to
  `page.set_content()` or opened from a file: a user opens a report from the service, so the page
  must have a real http origin. Under `set_content()` the document is about:blank, which inherits
  its origin, and a file: page has an opaque origin where Chromium refuses other file: loads on
  its own; either way a relative URL or a `'self'` in the Content-Security-Policy would not mean
  what it means in production, and an `<img src=x>` would not even be attempted over http. The
  server can also send response headers (`load(..., headers=...)`), e.g. a CSP header.
- Every request of the page other than its own document is aborted by the harness
  (`context.route`) and recorded, whatever it is for: an image, a style sheet, an @import, a
  font, a fetch, a beacon, a prefetch, a navigation away or a reload, an iframe; to the page's
  own origin too. Requests the page's own CSP blocked are recorded as well (`blocked_by_csp`):
  the page still tried. So are file: URLs (Chromium refuses them from an http page), blob:
  fetches (they never leave the process, but only a script makes them), and WebSockets. data:
  URLs are not requests and are not recorded.
- Behind the route, Chromium runs with a proxy that refuses every connection and a host resolver
  that resolves no name: whatever escaped the interception (a WebSocket, a request the browser
  makes on its own rather than for the page) still cannot leave the machine. Chromium's own
  favicon fetch is such a request: headless Chromium asks the page's origin for /favicon.ico by
  itself; Playwright fails it (net::ERR_ABORTED, it never reaches the server) and reports no
  request for it, and the page is not to blame, so it is not recorded.
- After the load event the harness switches lazy images and iframes to eager loading (so that
  their requests are made now, not on a scroll), then waits for the fonts (a font that a style
  sheet names is requested only once text uses it), two animation frames and the end of every
  request in flight; only then does `load()` return.

Also recorded: console messages (`problems()` counts errors and warnings; messages about the
Content-Security-Policy are also listed in `csp_violations`), uncaught script errors, dialogs
(`alert()` and the like: dismissed at once), and the answers the page got, with all their headers
(its document's; for a page from `open()`, those from its own origin too). `evaluate()` runs JS
in the page after the load; DevTools evaluation is not subject to the page's CSP, so it works on
a page that forbids scripts.

Playwright's sync API marks its thread as running an asyncio loop between calls, which would break
any later test of the same pytest worker that runs an event loop itself (Mangum's handlers do).
So the harness runs Playwright's async API on a thread of its own, and every method here is a
plain blocking call, made from any other thread.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar
from urllib.parse import urlsplit

from playwright.async_api import Browser as PlaywrightBrowser
from playwright.async_api import (
    BrowserContext,
    CDPSession,
    Dialog,
    Page,
    Playwright,
    Route,
    WebSocket,
    async_playwright,
)
from playwright.async_api import ConsoleMessage as PlaywrightConsoleMessage
from playwright.async_api import Request as PlaywrightRequest
from playwright.async_api import Response as PlaywrightResponse

T = TypeVar("T")
Media = Literal["screen", "print"]

# The environment variable naming the Chromium executable, and the names looked up on PATH.
CHROMIUM_ENV = "EVALSVC_CHROMIUM"
CHROMIUM_NAMES = ("chromium", "chromium-browser")
INSTALL_HINT = (
    "Install Debian's Chromium with `make browser` (as root: apt-get update && "
    "apt-get install -y --no-install-recommends chromium fonts-dejavu-core fonts-liberation), "
    f"or point {CHROMIUM_ENV} at a Chromium or Chrome executable. Playwright's own browser "
    "download (`playwright install`) is not used."
)

# Flags for Debian's chromium. --no-sandbox: CI runs as root, where Chromium's sandbox refuses to
# start (the pages are our own test pages). --disable-dev-shm-usage: containers often have a 64 MB
# /dev/shm, too small for Chromium. The rest stop Chromium's own traffic to Google's hosts
# (component updates, field trials, sync, safe browsing lists, QUIC probes).
CHROMIUM_ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-domain-reliability",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--no-pings",
    "--metrics-recording-only",
)

# JS run after the load event: lazy images and iframes load now (their requests would otherwise
# wait for a scroll), the fonts are loaded (a font a style sheet names is requested only when text
# uses it) and two frames have been laid out and painted.
_SETTLE = """async () => {
    for (const lazy of document.querySelectorAll("[loading=lazy]")) lazy.loading = "eager";
    await document.fonts.ready;
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""

# Schemes Playwright reports requests for; the rest (blob:, filesystem:) come from DevTools.
# data: URLs are no requests at all.
_PLAYWRIGHT_SCHEMES = frozenset({"http", "https", "ftp", "file", "ws", "wss", "data"})
_DEFAULT_VIEWPORT = (1200, 800)
_IDLE_TABS = 4  # tabs kept for reuse


class ChromiumMissing(RuntimeError):
    """No Chromium executable was found; the message says how to install one."""


def find_chromium() -> str | None:
    """The Chromium to run: $EVALSVC_CHROMIUM if set (even when it does not exist, so that a wrong
    value is noticed), else `chromium` or `chromium-browser` on PATH; None if there is none."""
    configured = os.environ.get(CHROMIUM_ENV)
    if configured:
        return configured
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """The Chromium executable, or ChromiumMissing saying what was looked at and how to install."""
    found = find_chromium()
    configured = os.environ.get(CHROMIUM_ENV)
    if found is None:
        raise ChromiumMissing(
            f"No Chromium for the browser tests: {CHROMIUM_ENV} is not set and none of "
            f"{', '.join(CHROMIUM_NAMES)} is on PATH. {INSTALL_HINT}"
        )
    if not (os.path.isfile(found) and os.access(found, os.X_OK)):
        where = f"{CHROMIUM_ENV}={configured}" if configured else found
        raise ChromiumMissing(f"{where} is not an executable file. {INSTALL_HINT}")
    return found


@dataclass(frozen=True)
class Request:
    """A request the page made (or tried to make) other than its own document."""

    url: str
    # Playwright's resource type: document (a navigation or an iframe), stylesheet, image, font,
    # script, fetch, xhr, ping, websocket, other, ...
    resource_type: str
    method: str
    # Why it did not complete: "csp" when the page's Content-Security-Policy blocked it,
    # "net::ERR_BLOCKED_BY_CLIENT..." when the harness cut it off, None if unknown (blob:, ws:).
    failure: str | None = None

    @property
    def blocked_by_csp(self) -> bool:
        return self.failure == "csp"

    def __str__(self) -> str:
        why = "blocked by the page's CSP" if self.blocked_by_csp else (self.failure or "recorded")
        return f"{self.method} {self.url} ({self.resource_type}; {why})"


@dataclass(frozen=True)
class ConsoleMessage:
    type: str  # log, debug, info, error, warning, ...
    text: str
    url: str = ""  # where it was logged from, if Chromium says

    @property
    def is_csp(self) -> bool:
        return "Content Security Policy" in self.text or "Content-Security-Policy" in self.text

    def __str__(self) -> str:
        return f"console.{self.type}: {self.text}"


@dataclass(frozen=True)
class DialogSeen:
    type: str  # alert, confirm, prompt, beforeunload
    message: str


@dataclass(frozen=True)
class OriginRequest:
    """A request a page opened with `Browser.open()` made to its own origin (let through)."""

    method: str
    url: str
    resource_type: str
    headers: dict[str, str]
    body: str | None

    def json(self) -> Any:
        return json.loads(self.body or "null")


@dataclass(frozen=True)
class Answer:
    """An answer the page got: to its document, or (a page from `Browser.open()`) to a request to
    its own origin. `headers` are all of them, names in lower case."""

    url: str
    status: int
    resource_type: str
    headers: dict[str, str]

    @property
    def is_html(self) -> bool:
        return self.headers.get("content-type", "").split(";")[0].strip() == "text/html"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class _EventLoopThread:
    """An asyncio loop running forever on a daemon thread; `call()` runs a coroutine on it and
    waits for the result."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="chromium-harness", daemon=True
        )
        self._thread.start()

    def call(self, coroutine: Coroutine[Any, Any, T], timeout: float) -> T:
        if threading.current_thread() is self._thread:
            coroutine.close()
            raise RuntimeError("the browser harness was called from its own event loop thread")
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise TimeoutError(f"the browser did not answer within {timeout:g} s") from None

    def stop(self) -> None:
        async def cancel_rest() -> None:
            current = asyncio.current_task()
            rest = [task for task in asyncio.all_tasks() if task is not current]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        if self._loop.is_running():
            try:
                self.call(cancel_rest(), timeout=10)
            finally:
                self._loop.call_soon_threadsafe(self._loop.stop)
                self._thread.join(timeout=10)
        if not self._loop.is_running():
            self._loop.close()


class _DocumentServer:
    """Serves registered documents from memory on 127.0.0.1; anything else is a 404."""

    def __init__(self) -> None:
        documents: dict[str, tuple[bytes, dict[str, str]]] = {}
        self._documents = documents

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                document = documents.get(urlsplit(self.path).path)
                if document is None:
                    self.send_error(404)
                    return
                body, headers = document
                self.send_response(200)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self._server.server_port}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="chromium-harness-http", daemon=True
        )
        self._thread.start()

    def add(self, path: str, body: bytes, headers: Mapping[str, str]) -> str:
        self._documents[path] = (body, dict(headers))
        return self.origin + path

    def remove(self, path: str) -> None:
        self._documents.pop(path, None)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


@dataclass
class _Record:
    """What one loaded page did; written on the harness thread, read (copied) on any other."""

    document_url: str
    document: PlaywrightRequest | None = None
    requests: list[Request] = field(default_factory=list)
    # Keyed by the Playwright objects themselves (identity), which also keeps them alive.
    request_index: dict[PlaywrightRequest, int] = field(default_factory=dict)
    in_flight: set[PlaywrightRequest] = field(default_factory=set)
    console: list[ConsoleMessage] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    dialogs: list[DialogSeen] = field(default_factory=list)
    # A page opened with `Browser.open()`: requests to its own origin go through (an app talks to
    # its server) and are kept here; every other one is cut off and recorded in `requests`.
    origin: str | None = None
    origin_requests: list[OriginRequest] = field(default_factory=list)
    # The answers to the document and to the requests let through, and the reads of their headers
    # still under way (`_settle` waits for them).
    answers: list[Answer] = field(default_factory=list)
    reading: set[asyncio.Future[None]] = field(default_factory=set)

    def allows(self, request: PlaywrightRequest) -> bool:
        return self.origin is not None and _origin(request.url) == self.origin

    def is_document(self, request: PlaywrightRequest, page: Page) -> bool:
        """The first main-frame navigation to the document URL is the page itself; any other
        request, a reload of the same URL included, is one the page made."""
        if (
            self.document is None
            and request.url == self.document_url
            and request.is_navigation_request()
            and request.frame == page.main_frame
        ):
            self.document = request
        return request is self.document

    def add(self, request: PlaywrightRequest) -> None:
        self.request_index[request] = len(self.requests)
        self.in_flight.add(request)
        self.requests.append(
            Request(url=request.url, resource_type=request.resource_type, method=request.method)
        )

    def ended(self, request: PlaywrightRequest) -> None:
        self.in_flight.discard(request)
        index = self.request_index.get(request)
        if index is not None and request.failure is not None:
            self.requests[index] = replace(self.requests[index], failure=request.failure)


class Loaded:
    """A page loaded by `Browser.load()`. The recorded lists are snapshots taken when read: what
    the page does later (after an `evaluate()`, say) shows up on the next read."""

    def __init__(
        self,
        browser: Browser,
        tab: _Tab,
        record: _Record,
        path: str,
        load_seconds: float,
    ) -> None:
        self._browser = browser
        self._tab = tab
        self._record = record
        self._path = path
        self.url = record.document_url
        self.load_seconds = load_seconds  # from navigation start to the end of the settling
        self.closed = False

    # What the page did.
    @property
    def requests(self) -> list[Request]:
        """Every request beyond the document: cut off by the harness or blocked by the CSP."""
        return list(self._record.requests)

    @property
    def origin_requests(self) -> list[OriginRequest]:
        """A page from `Browser.open()`: the requests it made to its own origin, in order."""
        return list(self._record.origin_requests)

    @property
    def answers(self) -> list[Answer]:
        """The answers the page got, with all their headers: its document's, and (a page from
        `Browser.open()`) those to its requests to its own origin, in the order they came."""
        return list(self._record.answers)

    @property
    def console(self) -> list[ConsoleMessage]:
        """All console messages, of every type, in order."""
        return list(self._record.console)

    @property
    def console_errors(self) -> list[ConsoleMessage]:
        """Console messages of type error or warning (CSP violations are errors)."""
        return [m for m in self._record.console if m.type in ("error", "warning")]

    @property
    def csp_violations(self) -> list[str]:
        """Console messages about the Content-Security-Policy: a violation, or a directive that
        Chromium ignores (e.g. frame-ancestors in a <meta>)."""
        return [m.text for m in self._record.console if m.is_csp]

    @property
    def page_errors(self) -> list[str]:
        """Uncaught exceptions of page scripts."""
        return list(self._record.page_errors)

    @property
    def dialogs(self) -> list[DialogSeen]:
        """alert(), confirm(), prompt() and beforeunload dialogs; each was dismissed."""
        return list(self._record.dialogs)

    def problems(self) -> list[str]:
        """Everything that should not happen on a self-contained page, one line each: requests,
        console errors and warnings, uncaught script errors, dialogs. Empty for a clean page."""
        return [
            *(f"request: {r}" for r in self.requests),
            *(str(m) for m in self.console_errors),
            *(f"page error: {e}" for e in self.page_errors),
            *(f"dialog: {d.type} {d.message!r}" for d in self.dialogs),
        ]

    def assert_clean(self) -> None:
        """AssertionError listing `problems()` unless there are none."""
        problems = self.problems()
        assert not problems, "the page did things it must not:\n  " + "\n  ".join(problems)

    # Looking at the page.
    def evaluate(self, expression: str, arg: Any = None) -> Any:
        """The value of a JS expression (or of a function called with `arg`) in the page, as
        JSON-like Python data: `evaluate("window.__ran === undefined")`,
        `evaluate("(sel) => document.querySelectorAll(sel).length", "svg")`."""
        return self.run(lambda page: page.evaluate(expression, arg))

    def count(self, selector: str) -> int:
        """How many elements match a CSS selector."""
        return int(self.evaluate("(s) => document.querySelectorAll(s).length", selector))

    def texts(self, selector: str) -> list[str]:
        """The textContent, whitespace collapsed, of each element matching a CSS selector, in
        document order: `texts("svg > title")`, `texts("h1, h2, h3")`, `texts("th")`."""
        found = self.evaluate(
            "(s) => [...document.querySelectorAll(s)]"
            ".map((e) => (e.textContent || '').replace(/\\s+/g, ' ').trim())",
            selector,
        )
        return [str(text) for text in found]

    def attributes(self, selector: str, name: str) -> list[str | None]:
        """One attribute of each element matching a CSS selector (None where it is absent)."""
        found = self.evaluate(
            "([s, n]) => [...document.querySelectorAll(s)].map((e) => e.getAttribute(n))",
            [selector, name],
        )
        return [None if value is None else str(value) for value in found]

    def inner_text(self, selector: str = "body") -> str:
        """The rendered text of the first element matching a selector (as a user would copy it:
        escaped markup shows as text, hidden elements do not show)."""
        return str(self.evaluate("(s) => document.querySelector(s)?.innerText ?? ''", selector))

    def settle(self) -> None:
        """Wait as `load()` does (fonts, two animation frames, requests in flight): after an
        `evaluate()` or `run()` that changed the page, before reading what the page did."""
        self.run(lambda page: _settle(page, self._record))

    def emulate_media(self, media: Media) -> None:
        """Apply `@media print` (or screen) rules from now on (then settle)."""

        async def emulate(page: Page) -> None:
            await page.emulate_media(media=media)
            await _settle(page, self._record)

        self.run(emulate)

    def screenshot(self, path: str | Path | None = None, *, full_page: bool = True) -> bytes:
        """A PNG of the page (all of it by default), also written to `path` if given."""
        png = self.run(
            lambda page: page.screenshot(full_page=full_page, animations="disabled", type="png")
        )
        if path is not None:
            Path(path).write_bytes(png)
        return png

    def pdf(self, path: str | Path | None = None, *, page_format: str = "A4") -> bytes:
        """The page printed to PDF (print media, backgrounds on), also written to `path` if given.
        Afterwards the page is in print media."""

        async def print_pdf(page: Page) -> bytes:
            await page.emulate_media(media="print")
            return await page.pdf(format=page_format, print_background=True)

        pdf = self.run(print_pdf)
        if path is not None:
            Path(path).write_bytes(pdf)
        return pdf

    def run(self, action: Callable[[Page], Awaitable[T]]) -> T:
        """Anything else Playwright can do, on the harness thread: `action` gets the async
        Playwright Page and returns an awaitable, e.g.
        `loaded.run(lambda page: page.locator("table").first.bounding_box())`."""
        if self.closed:
            raise RuntimeError("this page was closed")

        async def call() -> T:
            return await action(self._tab.page)

        return self._browser._call(call())

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._browser._release(self)

    def __enter__(self) -> Loaded:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


class Browser:
    """One headless Chromium; launch it once (`with Browser(path) as browser:` or `start()`),
    then `load()` pages. Each page has a browser context of its own while it is open. A closed
    page's context is reused (a new one costs ~250 ms to make and close, a reuse ~40 ms): its
    document is replaced by about:blank and the origin's storage and cookies are cleared first.
    """

    def __init__(
        self,
        executable: str | Path,
        *,
        timeout: float = 20.0,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.executable = str(executable)
        self.timeout = timeout  # seconds for one Playwright action (a load, a screenshot)
        self.extra_args = tuple(extra_args)
        self.version = ""
        self.launch_seconds = 0.0
        self._loop: _EventLoopThread | None = None
        self._server: _DocumentServer | None = None
        self._refuser: socket.socket | None = None
        self._playwright: Playwright | None = None
        self._browser: PlaywrightBrowser | None = None
        self._open: list[Loaded] = []
        self._paths = count(1)
        self._idle: list[_Tab] = []  # tabs of closed pages, ready for reuse (loop thread only)

    def start(self) -> Browser:
        if self._browser is not None:
            return self
        started = time.monotonic()
        # A port that is bound but never listens: every connection to it is refused at once.
        # Chromium's proxy points there, so nothing that slips past the interception gets out.
        self._refuser = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._refuser.bind(("127.0.0.1", 0))
        refusing_port = self._refuser.getsockname()[1]
        self._server = _DocumentServer()
        self._loop = _EventLoopThread()
        args = [
            *CHROMIUM_ARGS,
            # Loopback bypasses the proxy (Chromium's default): the document server is reached.
            f"--proxy-server=http://127.0.0.1:{refusing_port}",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            *self.extra_args,
        ]
        try:
            self._call(self._launch(args))
        except BaseException:
            self.close()
            raise
        self.launch_seconds = time.monotonic() - started
        return self

    async def _launch(self, args: list[str]) -> None:
        self._playwright = await async_playwright().start()
        self._browser = await self._playwright.chromium.launch(
            executable_path=self.executable,
            args=args,
            headless=True,
            timeout=self.timeout * 1000,
        )
        self.version = self._browser.version

    def close(self) -> None:
        """Close the pages, the browser, Playwright and the document server."""
        for loaded in list(self._open):
            loaded.close()
        if self._loop is not None:
            try:
                if self._playwright is not None:
                    self._call(self._shut_down())
            finally:
                self._loop.stop()
                self._loop = None
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._refuser is not None:
            self._refuser.close()
            self._refuser = None

    async def _shut_down(self) -> None:
        self._idle.clear()
        try:
            if self._browser is not None:
                await self._browser.close()
        finally:
            self._browser = None
            if self._playwright is not None:
                await self._playwright.stop()
                self._playwright = None

    def __enter__(self) -> Browser:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def load(
        self,
        html: str | bytes,
        *,
        width: int = 1200,
        height: int = 800,
        media: Media = "screen",
        scale: float = 1.0,
        headers: Mapping[str, str] | None = None,
        path: str | None = None,
    ) -> Loaded:
        """Serve `html` from http://127.0.0.1:PORT/PATH and load it in a browser context of its
        own (viewport `width` x `height` CSS pixels, `scale` device pixels per CSS pixel, `media`
        emulated), the network cut off. Returns once the page has loaded and settled; the page
        stays open until `Loaded.close()` (or the end of the test, with the `browser` fixture).

        `headers` are sent with the document (default Content-Type: text/html; charset=utf-8);
        `path` is the document's path (default /page-N.html)."""
        if self._browser is None or self._server is None:
            raise RuntimeError("the browser is not started: use `with Browser(...)` or start()")
        path = path or f"/page-{next(self._paths)}.html"
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/': {path!r}")
        body = html.encode("utf-8") if isinstance(html, str) else html
        sent = {"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"}
        sent.update(headers or {})
        url = self._server.add(path, body, sent)
        record = _Record(document_url=url)
        try:
            tab, seconds = self._call(self._open_page(record, width, height, media, scale))
        except BaseException:
            self._server.remove(path)
            raise
        loaded = Loaded(self, tab, record, path, seconds)
        self._open.append(loaded)
        return loaded

    def open(
        self,
        url: str,
        *,
        width: int = 1200,
        height: int = 800,
        scale: float = 1.0,
        headers: Mapping[str, str] | None = None,
    ) -> Loaded:
        """Open `url` (a page of a server on 127.0.0.1, e.g. the local server's /app/) in a
        browser context of its own. Unlike `load()`, the page's requests to its own origin go
        through (`Loaded.origin_requests` lists them, `Loaded.answers` their answers); every
        other request is cut off and recorded (`Loaded.requests`). `headers` are sent with each
        of the page's requests (e.g. an API key for a report page). Returns once the page has
        loaded and settled."""
        if self._browser is None:
            raise RuntimeError("the browser is not started: use `with Browser(...)` or start()")
        if urlsplit(url).hostname != "127.0.0.1":
            raise ValueError(f"only pages on 127.0.0.1 are opened: {url!r}")
        record = _Record(document_url=url, origin=_origin(url))
        tab, seconds = self._call(
            self._open_page(record, width, height, "screen", scale, dict(headers or {}))
        )
        loaded = Loaded(self, tab, record, "", seconds)
        self._open.append(loaded)
        return loaded

    async def _open_page(
        self,
        record: _Record,
        width: int,
        height: int,
        media: Media,
        scale: float,
        headers: dict[str, str] | None = None,
    ) -> tuple[_Tab, float]:
        tab = await self._take_tab(scale)
        try:
            if headers:
                await tab.page.set_extra_http_headers(headers)
                tab.extra_headers = True
            if tab.page.viewport_size != {"width": width, "height": height}:
                await tab.page.set_viewport_size({"width": width, "height": height})
            await tab.page.emulate_media(media=media)
            tab.record = record
            if record.origin is not None:
                tab.origins.add(record.origin)
            started = time.monotonic()
            await tab.page.goto(record.document_url, wait_until="load")
            # Again: Chromium 150 forgets the emulation when the first navigation of a page
            # changes its renderer process.
            await tab.page.emulate_media(media=media)
            await _settle(tab.page, record)
            return tab, time.monotonic() - started
        except BaseException:
            tab.record = None
            await tab.context.close()
            raise

    async def _take_tab(self, scale: float) -> _Tab:
        """A tab for the next load: one a closed page left behind, else a new one (~130 ms, most
        of it Playwright setting up a new page)."""
        for tab in self._idle:
            if tab.scale == scale:
                self._idle.remove(tab)
                return tab
        return await self._new_tab(scale)

    async def _recycle(self, tab: _Tab) -> None:
        """Make the tab of a closed page like new, or close it: its document is replaced by
        about:blank (its scripts and timers end with it), and the storage and cookies of the
        document server's origin are cleared. The context stays (new ones are slow)."""
        tab.record = None
        try:
            if len(self._idle) >= _IDLE_TABS or self._server is None:
                raise LookupError("no reuse")
            if tab.origins:
                # Session storage belongs to the tab, not the origin: clearing the origin's
                # data does not reach it.
                await tab.page.evaluate("() => { try { sessionStorage.clear(); } catch {} }")
            await tab.page.goto("about:blank", timeout=5000)
            if tab.extra_headers:
                await tab.page.set_extra_http_headers({})
                tab.extra_headers = False
            for origin in {self._server.origin, *tab.origins}:
                await tab.devtools.send(
                    "Storage.clearDataForOrigin", {"origin": origin, "storageTypes": "all"}
                )
            tab.origins.clear()
            await tab.context.clear_cookies()
            await tab.context.clear_permissions()
        except Exception:
            await tab.context.close()
        else:
            self._idle.append(tab)

    async def _new_tab(self, scale: float) -> _Tab:
        assert self._browser is not None
        width, height = _DEFAULT_VIEWPORT
        context = await self._browser.new_context(
            viewport={"width": width, "height": height},
            device_scale_factor=scale,
            # A service worker's requests would bypass the interception.
            service_workers="block",
            color_scheme="light",
            locale="en-US",
            timezone_id="UTC",
        )
        try:
            context.set_default_timeout(self.timeout * 1000)
            page = await context.new_page()
            tab = _Tab(context, page, await context.new_cdp_session(page), scale)
            await _watch(tab)
            return tab
        except BaseException:
            await context.close()
            raise

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            coroutine.close()
            raise RuntimeError("the browser is closed")
        # Playwright's own timeouts (self.timeout) fire first; this one catches a hung driver.
        return self._loop.call(coroutine, timeout=self.timeout * 2 + 10)

    def _release(self, loaded: Loaded) -> None:
        if loaded in self._open:
            self._open.remove(loaded)
        if self._server is not None and loaded._path:
            self._server.remove(loaded._path)
        if self._loop is not None:
            self._call(self._recycle(loaded._tab))

    def close_pages(self) -> None:
        """Close every page still open (the `browser` fixture does so after each test)."""
        for loaded in list(self._open):
            loaded.close()


@dataclass
class _Tab:
    """A browser context with one page and the harness's listeners; `record` is set when the page
    loads its document (until then every request is cut off and nothing is recorded)."""

    context: BrowserContext
    page: Page
    devtools: CDPSession
    scale: float
    record: _Record | None = None
    # The origins of pages opened in it with `Browser.open()`: their storage is cleared on reuse.
    origins: set[str] = field(default_factory=set)
    # Whether a page opened in it sent headers of its own (they are cleared on reuse).
    extra_headers: bool = False


async def _watch(tab: _Tab) -> None:
    """Cut off every request but the document's and record what the page does."""
    page = tab.page

    async def route(route: Route) -> None:
        record = tab.record
        if record is not None and (
            record.allows(route.request) or record.is_document(route.request, page)
        ):
            await route.continue_()
        else:
            await route.abort("blockedbyclient")

    def on_request(request: PlaywrightRequest) -> None:
        record = tab.record
        if record is None or request.url.startswith("data:"):
            return
        if record.allows(request):
            record.in_flight.add(request)
            record.origin_requests.append(
                OriginRequest(
                    request.method,
                    request.url,
                    request.resource_type,
                    dict(request.headers),
                    request.post_data,
                )
            )
        elif not record.is_document(request, page):
            record.add(request)

    def on_request_end(request: PlaywrightRequest) -> None:
        if tab.record is not None:
            tab.record.ended(request)

    def on_response(response: PlaywrightResponse) -> None:
        record = tab.record
        if record is None or not (
            record.allows(response.request) or response.request is record.document
        ):
            return

        async def read() -> None:
            # all_headers(): `headers` leaves some out; these are what the browser acted on.
            headers = await response.all_headers()
            kind = response.request.resource_type
            record.answers.append(Answer(response.url, response.status, kind, headers))

        reading = asyncio.ensure_future(read())
        record.reading.add(reading)
        reading.add_done_callback(record.reading.discard)

    def on_console(message: PlaywrightConsoleMessage) -> None:
        if tab.record is not None:
            where = message.location.get("url", "") if message.location else ""
            tab.record.console.append(ConsoleMessage(message.type, message.text, str(where)))

    def on_page_error(error: Exception) -> None:
        if tab.record is not None:
            tab.record.page_errors.append(str(error))

    async def on_dialog(dialog: Dialog) -> None:
        if tab.record is not None:
            tab.record.dialogs.append(DialogSeen(dialog.type, dialog.message))
        await dialog.dismiss()

    def on_websocket(websocket: WebSocket) -> None:
        # Not intercepted (Playwright's WebSocket routing would patch the page's JS): the refusing
        # proxy and the host resolver make the connection fail.
        if tab.record is not None:
            tab.record.requests.append(Request(websocket.url, "websocket", "GET"))

    def on_devtools_request(event: dict[str, Any]) -> None:
        # blob: and filesystem: loads, which Playwright does not report.
        request = event.get("request", {})
        url = str(request.get("url", ""))
        if tab.record is not None and urlsplit(url).scheme not in _PLAYWRIGHT_SCHEMES:
            kind = str(event.get("type", "other")).lower()
            tab.record.requests.append(Request(url, kind, str(request.get("method", "GET"))))

    await tab.context.route("**/*", route)
    tab.context.on("request", on_request)
    tab.context.on("requestfinished", on_request_end)
    tab.context.on("requestfailed", on_request_end)
    tab.context.on("response", on_response)
    page.on("console", on_console)
    page.on("pageerror", on_page_error)
    page.on("dialog", on_dialog)
    page.on("websocket", on_websocket)
    tab.devtools.on("Network.requestWillBeSent", on_devtools_request)
    await tab.devtools.send("Network.enable")


async def _settle(page: Page, record: _Record) -> None:
    """Run _SETTLE, then wait (5 s at most) for every recorded request to finish or fail (they are
    cut off, so this takes milliseconds) and for the headers of the answers to be read."""
    await page.evaluate(_SETTLE)
    deadline = time.monotonic() + 5
    while record.in_flight and time.monotonic() < deadline:
        await asyncio.sleep(0.005)
    if record.reading:
        await asyncio.wait(set(record.reading), timeout=max(0.1, deadline - time.monotonic()))


def pdf_pages(pdf: bytes) -> int:
    """How many pages a PDF from `Loaded.pdf()` has (Chromium writes its page objects
    uncompressed, so counting them is enough)."""
    return len(re.findall(rb"/Type\s*/Page\b", pdf))
