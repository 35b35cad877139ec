"""Posting a monitor's alert to its webhook (E8): the JSON body signed (webhook_targets.sign),
to the addresses webhook_targets.check found for the URL and to no other (the name is not
resolved again), at most ATTEMPTS times with backoff, TIMEOUT_SECONDS each, following no
redirect. A 2xx answer is delivered; a 3xx, 4xx (but 408 and 429), or every attempt failing is
failed. What happened is returned for the run to keep: never the secret, never the body."""

from __future__ import annotations

import http.client
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from evalsvc.core import backoff
from evalsvc.monitoring.webhook_targets import SIGNATURE_HEADER, Target, sign

ATTEMPTS = 3
TIMEOUT_SECONDS = 5.0
RETRY_BASE_SECONDS = 1.0
RETRY_CAP_SECONDS = 8.0
# Answers worth asking again: the receiver's own timeout, throttling, and its server errors.
_RETRIED = {408, 429}


@dataclass(frozen=True, slots=True)
class Delivery:
    status: Literal["delivered", "failed"]
    attempts: int
    http_status: int | None
    error: str | None = None


class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS to one address already checked, with the URL's host as the TLS name (its
    certificate is verified against it) and the Host header."""

    def __init__(self, target: Target, address: str, context: ssl.SSLContext) -> None:
        super().__init__(target.host, target.port, timeout=TIMEOUT_SECONDS, context=context)
        self._address = address
        self._context = context

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), timeout=self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)


class _PinnedHTTP(http.client.HTTPConnection):
    """HTTP to 127.0.0.1, where local webhooks are allowed (webhook_targets.check)."""

    def __init__(self, target: Target, address: str) -> None:
        super().__init__(target.host, target.port, timeout=TIMEOUT_SECONDS)
        self._address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), timeout=self.timeout)


def _post_once(
    target: Target, address: str, body: bytes, headers: dict[str, str], context: ssl.SSLContext
) -> int:
    connection: http.client.HTTPConnection
    if target.scheme == "https":
        connection = _PinnedHTTPS(target, address, context)
    else:
        connection = _PinnedHTTP(target, address)
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        response.read(64 * 1024)  # a little of the answer, so the connection closes cleanly
        return response.status
    finally:
        connection.close()


def deliver(
    target: Target,
    body: bytes,
    secret: str,
    *,
    context: ssl.SSLContext | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Delivery:
    """Post `body` (JSON) to `target`, signed with `secret`: what became of it."""
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "evalsvc-webhook/1",
        SIGNATURE_HEADER: sign(body, secret),
    }
    tls = context or ssl.create_default_context()
    status: int | None = None
    error: str | None = None
    for attempt in range(1, ATTEMPTS + 1):
        if attempt > 1:
            sleep(backoff.delay(attempt - 1, RETRY_BASE_SECONDS, RETRY_CAP_SECONDS))
        # Each attempt tries the next address (a host with several spreads its attempts).
        address = target.addresses[(attempt - 1) % len(target.addresses)]
        try:
            status, error = _post_once(target, address, body, headers, tls), None
        except (OSError, http.client.HTTPException, ValueError) as exc:
            # ValueError: what http.client refuses to send (UnicodeError is one); check()
            # keeps such URLs out, this keeps any that slip through a failed delivery.
            status, error = None, f"{type(exc).__name__}: {str(exc)[:200]}"
            continue
        if 200 <= status < 300:
            return Delivery("delivered", attempt, status)
        if status < 500 and status not in _RETRIED:
            return Delivery("failed", attempt, status, f"the receiver answered {status}")
        error = f"the receiver answered {status}"
    return Delivery("failed", ATTEMPTS, status, error)
