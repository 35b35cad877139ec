"""The review app's files (evalsvc.handlers.review_app): what the ReviewAppFunction and the
local server answer, byte for byte alike, and the rules its scripts keep."""

from __future__ import annotations

import base64
import copy
import gzip
import re
from pathlib import Path
from typing import Any

import pytest
from evalsvc.handlers.review_app import CONTENT_SECURITY_POLICY, WebApp
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.lambda_support import LambdaContext, handler_of, load_event

STATIC = ROOT / "functions" / "review_app" / "static"
E9_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@pytest.fixture(scope="module")
def web() -> WebApp:
    return WebApp(STATIC)


def gateway(path: str, **headers: str) -> dict[str, Any]:
    event = copy.deepcopy(load_event("review_app"))
    event["path"] = path
    event["requestContext"]["path"] = "/v1" + path
    event["pathParameters"] = {"proxy": path.removeprefix("/app/")}
    for name, value in headers.items():
        event["headers"][name] = value
        event["multiValueHeaders"][name] = [value]
    return event


def invoke(event: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = handler_of("review_app")(event, LambdaContext())
    return answer


def body_of(answer: dict[str, Any]) -> bytes:
    raw = base64.b64decode(answer["body"]) if answer["isBase64Encoded"] else answer["body"].encode()
    if answer["headers"].get("Content-Encoding") == "gzip":
        return gzip.decompress(raw)
    return bytes(raw)


def test_the_policy_is_e9s_exactly() -> None:
    assert CONTENT_SECURITY_POLICY == E9_CSP


def test_the_page_through_the_function_names_the_api_and_its_versioned_files() -> None:
    answer = invoke(load_event("review_app"))
    assert answer["statusCode"] == 200
    headers = answer["headers"]
    assert headers["Content-Security-Policy"] == E9_CSP
    assert headers["Content-Encoding"] == "gzip" and answer["isBase64Encoded"]
    assert headers["Cache-Control"] == "no-cache"
    assert headers["X-Content-Type-Options"] == "nosniff"
    page = body_of(answer).decode()
    assert '<meta name="evalsvc-api-base" content="/v1">' in page
    assert "{{" not in page
    version = WebApp(STATIC).version
    assert f'src="/v1/app/{version}/main.js"' in page


def test_every_module_is_preloaded_so_a_cold_load_is_two_round_trips(web: WebApp) -> None:
    page = web.page("/v1", "/v1/app").body.decode()
    found = re.findall(
        r'<link rel="modulepreload" href="/v1/app/[0-9a-f]{16}/([a-z_]+\.js)">', page
    )
    preloaded = set(found)
    modules = {p.name for p in STATIC.glob("*.js")} - {"main.js"}
    assert preloaded == modules
    # ...and every module a script imports is one of the app's files
    for script in STATIC.glob("*.js"):
        for imported in re.findall(r'from "\./([a-z_]+\.js)"', script.read_text()):
            assert (STATIC / imported).is_file(), (script.name, imported)


def test_assets_are_immutable_under_their_version_and_gone_under_another(web: WebApp) -> None:
    answer = invoke(gateway(f"/app/{web.version}/main.js", **{"Accept-Encoding": "gzip"}))
    assert answer["statusCode"] == 200
    assert answer["headers"]["Cache-Control"] == "public, max-age=31536000, immutable"
    assert answer["headers"]["Content-Type"] == "text/javascript; charset=utf-8"
    assert body_of(answer) == (STATIC / "main.js").read_bytes()
    stale = invoke(gateway("/app/0123456789abcdef/main.js"))
    assert stale["statusCode"] == 404
    assert "reload the page" in stale["body"]


def test_without_gzip_the_bytes_are_plain(web: WebApp) -> None:
    answer = invoke(gateway(f"/app/{web.version}/app.css", **{"Accept-Encoding": "identity"}))
    assert answer["statusCode"] == 200 and not answer["isBase64Encoded"]
    assert "Content-Encoding" not in answer["headers"]
    assert answer["body"].encode() == (STATIC / "app.css").read_bytes()
    refused = invoke(gateway(f"/app/{web.version}/app.css", **{"Accept-Encoding": "gzip;q=0"}))
    assert "Content-Encoding" not in refused["headers"]


def test_a_revalidation_is_a_304_without_a_body(web: WebApp) -> None:
    first = invoke(load_event("review_app"))
    again = invoke(gateway("/app/", **{"If-None-Match": first["headers"]["ETag"]}))
    assert again["statusCode"] == 304 and again["body"] == ""
    assert again["headers"]["Content-Security-Policy"] == E9_CSP
    changed = invoke(gateway("/app/", **{"If-None-Match": '"something-else"'}))
    assert changed["statusCode"] == 200


def test_the_bare_path_serves_the_page_too_whatever_the_host() -> None:
    # The page names its files by absolute path: it works at /app as at /app/, and no redirect
    # (which could loop if a trailing slash were dropped on the way) is needed.
    answer = invoke(gateway("/app", Host="evil.example"))
    assert answer["statusCode"] == 200
    assert body_of(answer) == body_of(invoke(load_event("review_app")))
    assert b"evil.example" not in body_of(answer)


@pytest.mark.parametrize(
    "path",
    ["/app/../template.yaml", "/app/app.py", "/app/static/index.html", "/app/x/../../etc/passwd"],
)
def test_nothing_outside_the_apps_files_is_served(path: str) -> None:
    answer = invoke(gateway(path))
    assert answer["statusCode"] == 404
    assert answer["headers"]["Content-Type"] == "application/json"


def test_the_api_base_follows_the_stage_or_a_custom_domains_base_path(web: WebApp) -> None:
    event = load_event("review_app")
    custom = copy.deepcopy(event)
    custom["requestContext"]["path"] = "/evals/app/"
    page = body_of(invoke(custom)).decode()
    assert 'content="/evals"' in page
    assert 'src="/evals/app/' in page
    bare = copy.deepcopy(event)
    del bare["requestContext"]["path"]
    assert 'content="/v1"' in body_of(invoke(bare)).decode()


def test_head_has_the_headers_and_no_body_and_other_methods_are_refused(web: WebApp) -> None:
    head = web.respond("", api_base="/v1", app_base="/v1/app", headers={}, method="HEAD")
    assert head.status == 200 and head.body == b""
    assert int(head.headers["Content-Length"]) == len(web.page("/v1", "/v1/app").body)
    post = web.respond("", api_base="/v1", app_base="/v1/app", headers={}, method="POST")
    assert post.status == 405 and post.headers["Allow"] == "GET, HEAD"


@settings(max_examples=300, deadline=None)
@given(path=st.text(max_size=300), accept=st.text(max_size=100), tag=st.text(max_size=100))
def test_any_request_gets_a_bounded_answer(web: WebApp, path: str, accept: str, tag: str) -> None:
    headers = {"accept-encoding": accept, "if-none-match": tag}
    answer = web.respond(path, api_base="/v1", app_base="/v1/app", headers=headers)
    assert answer.status in (200, 304, 404)
    assert answer.headers["Content-Security-Policy"] == E9_CSP
    if answer.status == 200:
        assert path in ("", "index.html") or path.startswith(web.version + "/")


def test_a_hostile_base_path_never_reaches_the_page(web: WebApp) -> None:
    answer = web.respond("", api_base='/v1"><script>x</script>', app_base="/app", headers={})
    assert answer.status == 400
    answer = web.respond("", api_base="/v1", app_base="/app/<x>", headers={})
    assert answer.status == 400


# The scripts' rules, checked on their source: text goes in as text (no HTML parsing), no eval,
# no storage but sessionStorage, no address but the page's own.
FORBIDDEN = {
    r"\.innerHTML\b": "innerHTML parses HTML",
    r"\.outerHTML\b": "outerHTML parses HTML",
    r"insertAdjacentHTML": "insertAdjacentHTML parses HTML",
    r"document\.write": "document.write parses HTML",
    r"createContextualFragment|DOMParser": "parses HTML",
    r"\beval\s*\(|new Function\b": "eval",
    r"localStorage|indexedDB|document\.cookie": "the key lives in sessionStorage only",
    r"https?://": "every request stays on the page's origin",
    r"setAttribute\(\s*[\"']style": "inline styles break under the CSP",
}


@pytest.mark.parametrize("script", sorted(p.name for p in STATIC.glob("*.js")))
def test_scripts_insert_text_as_text_and_stay_on_the_origin(script: str) -> None:
    source = (STATIC / script).read_text()
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("//"))
    # The SVG namespace is a name, not an address.
    code = code.replace('"http://www.w3.org/2000/svg"', '""')
    for pattern, why in FORBIDDEN.items():
        found = [m.group(0) for m in re.finditer(pattern, code)]
        assert not found, f"{script}: {found} ({why})"


def test_the_page_has_no_inline_script_or_style() -> None:
    page = (STATIC / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)", page)
    assert "<style" not in page and "style=" not in page
    assert not re.search(r"\son[a-z]+=", page)


def test_the_files_are_small() -> None:
    total = sum(len(gzip.compress(p.read_bytes(), 9)) for p in Path(STATIC).iterdir())
    assert total < 300 * 1024
