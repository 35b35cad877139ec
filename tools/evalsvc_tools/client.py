"""The HTTP client of the user's command line (`evalsvc push|evaluate|compare|pairwise|report`):
the standard library's urllib against any deployment of the API, with every failure turned into
one `ClientError` whose message a person can act on (never the API key, never a traceback)."""

from __future__ import annotations

import gzip
import http.client
import ipaddress
import json
import os
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalsvc.scoring import bounded_json

URL_VARIABLE = "EVALSVC_URL"
KEY_VARIABLE = "EVALSVC_API_KEY"
TIMEOUT_VARIABLE = "EVALSVC_TIMEOUT"
# How long one request may take. The gateway gives a request 29 s; a local server on a busy
# machine may take longer to write a large dataset.
DEFAULT_TIMEOUT_SECONDS = 120.0
USER_AGENT = "evalsvc-cli/0.1"
# The most of a non-JSON error body shown.
SHOWN_BODY_CHARS = 200

# Exit codes: 1 the service or the connection failed (or what was asked for failed: an
# evaluation, a regression gate); 2 what the user gave cannot be used (a flag, a file).
EXIT_FAILED = 1
EXIT_USAGE = 2


class ClientError(Exception):
    """A failure of a user command, with the message to print and the exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return self.message


class HttpError(ClientError):
    """The service answered with an error status; `message` is what it said."""

    def __init__(
        self,
        status: int,
        said: str,
        retry_after: float | None = None,
        location: str | None = None,
    ) -> None:
        super().__init__(f"HTTP {status}: {said}")
        self.status = status
        self.said = said
        self.retry_after = retry_after
        self.location = location


class ConnectionProblem(ClientError):
    """No answer came: refused, unreachable, timed out, or cut before the answer."""


@dataclass(slots=True)
class Response:
    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)

    def header(self, name: str) -> str | None:
        wanted = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == wanted), None)

    def json(self) -> Any:
        try:
            return bounded_json.loads(self.body.decode("utf-8", "replace"))
        except ValueError:  # not JSON, or nested or sized beyond what is read
            raise ClientError(
                f"the service answered HTTP {self.status} with a body that is not JSON: "
                f"{_shown(self.body)}"
            ) from None

    @property
    def retry_after(self) -> float | None:
        return parse_retry_after(self.header("Retry-After"))


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header given in seconds (an HTTP date is not used)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if 0 <= seconds < 3600 else None


def _shown(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return "(empty body)"
    return text if len(text) <= SHOWN_BODY_CHARS else text[:SHOWN_BODY_CHARS] + "…"


def error_message(status: int, body: bytes, reason: str = "") -> str:
    """What the service said in an error body: its `error` (the service's own shape), a
    gateway's `message`, or the start of whatever else came back."""
    try:
        parsed: Any = bounded_json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        for name in ("error", "message", "detail"):
            said = parsed.get(name)
            if isinstance(said, str) and said:
                return said
    if body.strip():
        return _shown(body)
    return reason or http.client.responses.get(status, "error")


def normalise_base_url(url: str) -> str:
    """The API base (ending in /v1 as deployed) without a trailing slash. A URL with no path
    at all gets /v1, the only version there is."""
    url = url.strip()
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ClientError(
            f"{url!r} is not an http(s) URL: give the API's base URL, e.g. "
            "http://127.0.0.1:3000/v1 (set EVALSVC_URL or pass --url)",
            EXIT_USAGE,
        )
    if parts.query or parts.fragment:
        raise ClientError(f"{url!r}: the base URL takes no query or fragment", EXIT_USAGE)
    path = parts.path.rstrip("/") or "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def is_loopback(host: str | None) -> bool:
    """Whether `host` names this machine: localhost, 127.0.0.0/8 or ::1."""
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name, not an address
        return False


def plain_http_warning(base_url: str, insecure_http: bool) -> str | None:
    """Refuse to send a key over plain http to another machine, where anyone on the way could
    read it: a ClientError (exit 2) unless `insecure_http`, then the warning to show."""
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme != "http" or is_loopback(parts.hostname):
        return None
    if not insecure_http:
        raise ClientError(
            f"{base_url} is plain http to another machine, so the API key would travel in "
            "clear: use the service's https:// URL (or pass --insecure-http to send it anyway)",
            EXIT_USAGE,
        )
    return (
        f"warning: sending the API key in clear over plain http to {parts.hostname} "
        "(--insecure-http): anyone on the way can read it"
    )


def check_key(key: str) -> str:
    """The key as a header value. Its text is never put into a message."""
    key = key.strip()
    if not key:
        raise ClientError(f"set {KEY_VARIABLE} or pass --key", EXIT_USAGE)
    if any(ord(c) < 0x20 or ord(c) > 0x7E for c in key):
        raise ClientError(
            "the API key holds characters an HTTP header cannot carry (control or non-ASCII "
            "characters): check how it was copied",
            EXIT_USAGE,
        )
    return key


def segment(value: str) -> str:
    """An id as one path segment, escaped."""
    return urllib.parse.quote(value, safe="")


def timeout_from_environment() -> float:
    value = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not value:
        return DEFAULT_TIMEOUT_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not 0 < seconds <= 3600:
        raise ClientError(
            f"{TIMEOUT_VARIABLE} must be a number of seconds from 0 to 3600", EXIT_USAGE
        )
    return seconds


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is reported, not followed: following it would send the key on to wherever
    it points, and turn a POST into a GET."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects())


class Client:
    """Requests to one deployment, authenticated with one key."""

    def __init__(
        self,
        base_url: str,
        key: str,
        timeout: float | None = None,
        *,
        insecure_http: bool = False,
    ) -> None:
        self.base_url = normalise_base_url(base_url)
        # Checked before the key is: nothing is sent, and the refusal is said first.
        self.warning = plain_http_warning(self.base_url, insecure_http)
        self._key = check_key(key)
        self.timeout = timeout if timeout is not None else timeout_from_environment()

    @classmethod
    def from_settings(
        cls, url: str | None, key: str | None, *, insecure_http: bool = False
    ) -> Client:
        """The client for --url/--key, else EVALSVC_URL/EVALSVC_API_KEY (flags win). Plain
        http to a host other than this machine is refused unless `insecure_http`; then
        `warning` says what that means."""
        url = url or os.environ.get(URL_VARIABLE, "")
        key = key or os.environ.get(KEY_VARIABLE, "")
        if not url.strip():
            raise ClientError(f"set {URL_VARIABLE} or pass --url", EXIT_USAGE)
        if not key.strip():
            raise ClientError(f"set {KEY_VARIABLE} or pass --key", EXIT_USAGE)
        return cls(url, key, insecure_http=insecure_http)

    def __repr__(self) -> str:  # never the key
        return f"Client({self.base_url!r})"

    def url(self, path: str, query: Mapping[str, str] | None = None) -> str:
        url = self.base_url + "/" + path.lstrip("/")
        if query:
            url += "?" + urllib.parse.urlencode(query)
        return url

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        headers: Mapping[str, str] | None = None,
        query: Mapping[str, str] | None = None,
        data: bytes | None = None,
    ) -> Response:
        """One request; a JSON `body` (or raw `data`, already JSON). An error status raises
        HttpError with what the service said; no answer raises ConnectionProblem."""
        if body is not None:
            data = encode_json(body)
        url = self.url(path, query)
        sent = {
            "Authorization": self._key,
            "Accept": "application/json",
            "Accept-Encoding": "gzip",
            "User-Agent": USER_AGENT,
            **(headers or {}),
        }
        if data is not None:
            sent["Content-Type"] = "application/json"
        request = urllib.request.Request(url, data=data, headers=sent, method=method)  # noqa: S310
        try:
            try:
                with _OPENER.open(request, timeout=self.timeout) as answer:
                    return Response(answer.status, _read(answer), dict(answer.headers.items()))
            except urllib.error.HTTPError as exc:
                failed = Response(exc.code, _read(exc), dict((exc.headers or {}).items()))
                said = error_message(exc.code, failed.body, str(exc.reason or ""))
                if 300 <= exc.code < 400:
                    said = (
                        f"the service redirects to {failed.header('Location') or '(nowhere)'}: "
                        "give the API's base URL there (EVALSVC_URL or --url)"
                    )
                if exc.code == 404 and not self.base_url.endswith("/v1"):
                    said += f" (is {self.base_url} the API's base URL? it usually ends in /v1)"
                location = failed.header("Location")
                raise HttpError(exc.code, said, failed.retry_after, location) from None
        except urllib.error.URLError as exc:
            raise ConnectionProblem(self._no_answer(exc.reason)) from None
        except (http.client.HTTPException, OSError) as exc:
            raise ConnectionProblem(self._no_answer(exc)) from None
        except ValueError as exc:  # a URL or header urllib refuses to send
            raise ClientError(f"cannot send the request to {url}: {exc}", EXIT_USAGE) from None

    def _no_answer(self, reason: object) -> str:
        where = self.base_url
        if isinstance(reason, ConnectionRefusedError):
            return f"cannot connect to {where}: connection refused (is the service running?)"
        if isinstance(reason, TimeoutError):
            return f"no answer from {where} within {self.timeout:g} s"
        if isinstance(reason, socket.gaierror):
            host = urllib.parse.urlsplit(where).hostname
            return f"cannot connect to {where}: host {host!r} not found"
        if isinstance(reason, ssl.SSLError | ssl.CertificateError):
            return f"cannot connect to {where}: TLS failed ({reason})"
        if isinstance(reason, http.client.IncompleteRead):
            return f"the answer from {where} was cut off before its end"
        if isinstance(reason, http.client.HTTPException | ConnectionError):
            return f"the connection to {where} was closed before an answer came"
        if isinstance(reason, OSError) and reason.strerror:
            return f"cannot connect to {where}: {reason.strerror}"
        return f"cannot connect to {where}: {reason}"


def encode_json(body: Any) -> bytes:
    """JSON as UTF-8, characters as they are (the smallest body); text holding a lone
    surrogate, which UTF-8 cannot carry, is sent with escapes instead."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, separators=(",", ":")).encode("ascii")


def _read(answer: Any) -> bytes:
    """The body of an answer, uncompressed."""
    raw: bytes = answer.read()
    encoding = (answer.headers.get("Content-Encoding") or "").lower() if answer.headers else ""
    if encoding == "gzip":
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ClientError(f"the answer's gzip body is damaged ({exc})") from None
    return raw
