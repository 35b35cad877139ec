"""The review app's static files (E9), served on the API's origin: by the ReviewAppFunction behind
API Gateway (`GET /app`, `GET /app/{proxy+}`) and by the local server at /app/.

Standard library only: a function that serves files starts in milliseconds (no FastAPI, no
pydantic), and the local server and the Lambda answer byte for byte alike.

URLs, relative to the app's root (`/app/` locally, `/v1/app/` behind the API's stage):

    "" (also `/app`)     index.html, with the API's base path and its files' path filled in;
                         Cache-Control: no-cache (revalidated by ETag, 304 when unchanged).
                         The page names its files by absolute path, so it works at `/app` and
                         at `/app/` alike: whether API Gateway tells a trailing slash apart
                         does not matter, and no redirect is needed
    "<version>/<file>"   an asset; <version> is a digest of every asset, so a URL never changes
                         meaning: cached for a year, immutable. Another version is a 404 (the
                         page that asked for it is from before a deploy: reloading it fixes it)
    anything else        404

Every answer carries the Content-Security-Policy E9 gives, and is gzip-compressed when the
client accepts it (compressed once, at start). Nothing here reads tenant data: the app reads the
API with the key the person typed, from the browser.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import mimetypes
import re
from base64 import b64encode
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalsvc.core.browser_headers import BROWSER_HEADERS

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {"Content-Security-Policy": CONTENT_SECURITY_POLICY, **BROWSER_HEADERS}
INDEX = "index.html"
# The placeholders index.html carries: the API's base path, and the path of this version's files
# (`<app base>/<version>`); both HTML-escaped when filled in.
API_BASE_MARK = "{{api_base}}"
FILES_MARK = "{{files}}"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".ico": "image/x-icon",
    ".png": "image/png",
}
_ASSET = re.compile(r"^(?P<version>[0-9a-f]{16})/(?P<name>[A-Za-z0-9_-]+\.[a-z]+)$")
_BASE_PATH = re.compile(r"^(/[A-Za-z0-9._~-]+)*$")


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


@dataclass(frozen=True, slots=True)
class _File:
    body: bytes
    gzipped: bytes
    content_type: str
    etag: str

    @classmethod
    def of(cls, body: bytes, content_type: str) -> _File:
        digest = hashlib.sha256(body).hexdigest()[:32]
        # mtime=0: the same bytes on every start, so an ETag means the same answer everywhere.
        return cls(body, gzip.compress(body, compresslevel=9, mtime=0), content_type, f'"{digest}"')


class WebApp:
    """The app's files, read from `directory` once."""

    def __init__(self, directory: Path) -> None:
        files: dict[str, bytes] = {}
        for path in sorted(directory.iterdir()):
            if path.is_file() and not path.name.startswith("."):
                files[path.name] = path.read_bytes()
        if INDEX not in files:
            raise FileNotFoundError(f"{directory} has no {INDEX}")
        digest = hashlib.sha256()
        for name, body in files.items():
            digest.update(name.encode() + b"\0" + len(body).to_bytes(8, "big") + body)
        self.version = digest.hexdigest()[:16]
        self._index = files.pop(INDEX).decode("utf-8")
        self._assets = {name: _File.of(body, _content_type(name)) for name, body in files.items()}
        self._pages: dict[tuple[str, str], _File] = {}

    @property
    def asset_names(self) -> list[str]:
        return sorted(self._assets)

    def page(self, api_base: str, app_base: str) -> _File:
        """index.html for an API at `api_base` and the app at `app_base` (paths: "/v1",
        "/v1/app"; "" for the root)."""
        page = self._pages.get((api_base, app_base))
        if page is None:
            files = f"{app_base}/{self.version}"
            text = self._index.replace(API_BASE_MARK, html.escape(api_base, quote=True))
            text = text.replace(FILES_MARK, html.escape(files, quote=True))
            page = _File.of(text.encode("utf-8"), TYPES[".html"])
            # The bases a deployment answers on are few (its stage, a custom domain's mapping).
            if len(self._pages) < 16:
                self._pages[(api_base, app_base)] = page
        return page

    def respond(
        self,
        path: str,
        *,
        api_base: str,
        app_base: str,
        headers: Mapping[str, str],
        method: str = "GET",
    ) -> Answer:
        """The answer to a request for `path`, relative to the app's root at `app_base` ("" is
        the page), with the API at `api_base`. `headers` are the request's, names in lower
        case."""
        if method not in ("GET", "HEAD"):
            return _error(405, "the app's files are read with GET", {"Allow": "GET, HEAD"})
        if path in ("", INDEX):
            if not (_BASE_PATH.fullmatch(api_base) and _BASE_PATH.fullmatch(app_base)):
                return _error(400, "the app's address is not one it can be served from")
            return _send(self.page(api_base, app_base), headers, method, "no-cache")
        found = _ASSET.fullmatch(path)
        asset = self._assets.get(found["name"]) if found else None
        if found is None or asset is None:
            return _error(404, "no such file in the review app: open the app at its root")
        if found["version"] != self.version:
            return _error(404, "this file is from another version of the app: reload the page")
        return _send(asset, headers, method, "public, max-age=31536000, immutable")

    def handle_api_gateway(
        self, event: Mapping[str, Any], context: object = None
    ) -> dict[str, Any]:
        """The Lambda handler: the proxy answer to an API Gateway (REST) event for `/app` or
        `/app/...`."""
        path = str(event.get("path") or "")
        if path != "/app" and not path.startswith("/app/"):
            return _proxy(_error(404, "no such file in the review app: open the app at its root"))
        headers = _lower(event.get("headers"))
        method = str(event.get("httpMethod") or "GET")
        api_base = _api_base(event)
        answer = self.respond(
            path[len("/app/") :],
            api_base=api_base,
            app_base=f"{api_base}/app",
            headers=headers,
            method=method,
        )
        return _proxy(answer)


def _content_type(name: str) -> str:
    suffix = Path(name).suffix
    return TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"


def _send(file: _File, headers: Mapping[str, str], method: str, cache: str) -> Answer:
    common = {
        **SECURITY_HEADERS,
        "Cache-Control": cache,
        "ETag": file.etag,
        "Vary": "Accept-Encoding",
    }
    if _matches(headers.get("if-none-match", ""), file.etag):
        return Answer(304, common, b"")
    gzipped = _accepts_gzip(headers.get("accept-encoding", ""))
    body = file.gzipped if gzipped else file.body
    sent = {**common, "Content-Type": file.content_type, "Content-Length": str(len(body))}
    if gzipped:
        sent["Content-Encoding"] = "gzip"
    return Answer(200, sent, b"" if method == "HEAD" else body)


def _error(status: int, message: str, extra: Mapping[str, str] | None = None) -> Answer:
    body = ('{"error": "' + message.replace("\\", "\\\\").replace('"', '\\"') + '"}').encode()
    headers = {
        **SECURITY_HEADERS,
        "Content-Type": "application/json",
        "Cache-Control": "no-store",
        "Content-Length": str(len(body)),
        **(extra or {}),
    }
    return Answer(status, headers, body)


def _matches(if_none_match: str, etag: str) -> bool:
    tags = [tag.strip().removeprefix("W/") for tag in if_none_match.split(",")]
    return etag in tags or "*" in tags


def _accepts_gzip(accept_encoding: str) -> bool:
    for part in accept_encoding.lower().split(","):
        name, _, params = part.strip().partition(";")
        if name.strip() in ("gzip", "*"):
            quality = params.strip().removeprefix("q=")
            try:
                return not params.strip() or float(quality) > 0
            except ValueError:
                return True
    return False


def _lower(headers: object) -> dict[str, str]:
    if not isinstance(headers, Mapping):
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}


def _api_base(event: Mapping[str, Any]) -> str:
    """The path the API answers under, as the browser sees it: the request's full path (with the
    stage, or a custom domain's base path) minus the resource path; else "/<stage>"."""
    context = event.get("requestContext")
    context = context if isinstance(context, Mapping) else {}
    full, path = str(context.get("path") or ""), str(event.get("path") or "")
    if full and path and full.endswith(path):
        return full[: len(full) - len(path)]
    stage = str(context.get("stage") or "")
    return f"/{stage}" if stage and stage != "$default" else ""


def _proxy(answer: Answer) -> dict[str, Any]:
    binary = answer.headers.get("Content-Encoding") == "gzip"
    return {
        "statusCode": answer.status,
        "headers": answer.headers,
        "body": b64encode(answer.body).decode() if binary else answer.body.decode("utf-8"),
        "isBase64Encoded": binary,
    }
