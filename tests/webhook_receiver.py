"""A webhook receiver on 127.0.0.1 for tests of monitors' alerts (E8): it keeps every post
(path, headers and body) and answers with the statuses it is told to, in turn (then 200),
after `delay` seconds; a 3xx names another place (which a sender must not follow)."""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from evalsvc.monitoring.webhook_targets import SIGNATURE_HEADER, verify


@dataclass
class Post:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def signed_with(self, secret: str) -> bool:
        return verify(self.body, secret, self.headers.get(SIGNATURE_HEADER, ""))


@dataclass
class Receiver:
    url: str
    port: int = 0
    posts: list[Post] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    delay: float = 0.0


@contextmanager
def receiver(path: str = "/hook", tls: ssl.SSLContext | None = None) -> Iterator[Receiver]:
    """A receiver at http://127.0.0.1:<port><path> (with `tls`, over HTTPS)."""
    state = Receiver(url="")
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            with lock:
                state.posts.append(Post(self.path, dict(self.headers.items()), body))
                status = state.answers.pop(0) if state.answers else 200
            time.sleep(state.delay)
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    state.port = server.server_address[1]
    state.url = f"http{'s' if tls else ''}://127.0.0.1:{state.port}{path}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
