"""The API reference at /v1/docs (the local server's origin, beside the review app): a page drawn
by the server from the app's own OpenAPI document, which loads nothing, runs no script and
carries the review app's security headers with a CSP at least as strict."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlsplit

import pytest
from evalsvc.api.app import create_app, create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.handlers.review_app import SECURITY_HEADERS
from fastapi import APIRouter, Header
from fastapi.testclient import TestClient
from httpx import Response
from pydantic import BaseModel, Field

from tests.conftest import ROOT

# Attributes through which an element can make the browser load or send something.
URL_ATTRIBUTES = {"src", "href", "action", "formaction", "srcset", "data", "poster", "background"}
HOSTILE = '<script>window.__ran = 1</script><img src=x onerror="window.__ran = 2">'


class Page(HTMLParser):
    """Every element of a page, with its attributes, and the text of its <style> elements."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.styles: list[str] = []
        self.text: list[str] = []
        self._in_style = False
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {name: value or "" for name, value in attrs}))
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.text).append(data)

    def tags(self) -> set[str]:
        return {tag for tag, _ in self.elements}

    def urls(self) -> list[str]:
        return [
            value
            for _, attrs in self.elements
            for name, value in attrs.items()
            if name in URL_ATTRIBUTES
        ]

    def ids(self) -> set[str]:
        return {attrs["id"] for _, attrs in self.elements if "id" in attrs}


def directives(policy: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for part in policy.split(";"):
        name, *sources = part.split()
        found[name] = sources
    return found


@pytest.fixture(scope="module")
def reference() -> Response:
    """The local server's API reference, as the browser gets it."""
    with TestClient(create_versioned_app(all_routers())) as client:
        return client.get("/v1/docs")


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    with TestClient(create_versioned_app(all_routers())) as client:
        answer = client.get("/v1/openapi.json")
    assert answer.status_code == 200
    found: dict[str, Any] = answer.json()
    return found


def test_the_api_reference_is_a_page_that_loads_nothing_from_anywhere(
    reference: Response,
) -> None:
    # Given the API reference the local server serves at /v1/docs
    assert reference.status_code == 200
    assert reference.headers["content-type"] == "text/html; charset=utf-8"

    # When its elements are read
    page = Page(reference.text)

    # Then it has no script, frame, object or external style sheet, every URL it names stays on
    # the page's own origin (a fragment, or the OpenAPI document beside it), and its stylesheet
    # imports nothing
    assert page.tags() & {"script", "iframe", "frame", "object", "embed", "link", "img"} == set()
    assert page.urls(), "the page links nothing: not even its own OpenAPI document"
    for url in page.urls():
        parts = urlsplit(url)
        assert (parts.scheme, parts.netloc) == ("", ""), url
        assert not url.startswith("/"), url  # relative: right wherever the API is mounted
    assert "openapi.json" in page.urls()
    assert page.styles and all("url(" not in css and "@import" not in css for css in page.styles)


def test_the_api_reference_carries_a_strict_csp_and_the_review_apps_security_headers(
    reference: Response,
) -> None:
    # Given the API reference's answer
    headers = reference.headers

    # When its Content-Security-Policy is read
    policy = directives(headers["content-security-policy"])

    # Then it allows nothing by default, no script at all, only its own inline stylesheet by
    # hash, and no framing, base or form target: stricter than the review app's
    assert policy["default-src"] == ["'none'"]
    assert "script-src" not in policy
    assert len(policy["style-src"]) == 1 and policy["style-src"][0].startswith("'sha256-")
    assert policy["base-uri"] == ["'none'"]
    assert policy["form-action"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    sources = [source for values in policy.values() for source in values]
    assert not any("unsafe" in source or ":" in source.strip("'") for source in sources), sources
    # And the review app's other security headers, alike
    for name, value in SECURITY_HEADERS.items():
        if name != "Content-Security-Policy":
            assert headers[name] == value, name


def test_the_stylesheet_in_the_page_is_the_one_the_csp_names_by_hash(reference: Response) -> None:
    # Given the page's one <style> element
    page = Page(reference.text)
    assert len(page.styles) == 1

    # When its text is hashed as a browser hashes it
    digest = base64.b64encode(hashlib.sha256(page.styles[0].encode()).digest()).decode()

    # Then that hash is the policy's one style source: the page is styled, nothing else is
    assert directives(reference.headers["content-security-policy"])["style-src"] == [
        f"'sha256-{digest}'"
    ]


def test_the_api_reference_lists_every_operation_with_its_parameters_body_and_responses(
    reference: Response, document: dict[str, Any]
) -> None:
    # Given the OpenAPI document the server serves beside the page
    page = Page(reference.text)
    text = " ".join(" ".join(page.text).split())

    # Then each operation is there: an anchor of its own, its method and path, its summary, its
    # parameters' names, its request body's schema and each response status with its schema
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert f"op-{operation['operationId']}" in page.ids(), operation["operationId"]
            assert f"{method.upper()} {path}" in text
            assert operation["summary"] in text
            for parameter in operation.get("parameters", []):
                assert parameter["name"] in text
            body = operation.get("requestBody", {}).get("content", {}).get("application/json")
            if body and "$ref" in body["schema"]:
                assert f"#schema-{body['schema']['$ref'].rsplit('/', 1)[-1]}" in page.urls()
    # And each schema has a section of its own that the operations link to
    for name in document["components"]["schemas"]:
        assert f"schema-{name}" in page.ids(), name
    links = {url for url in page.urls() if url.startswith("#")}
    assert {link[1:] for link in links} <= page.ids(), "a link leads nowhere on the page"


def test_the_api_reference_says_how_to_authenticate(reference: Response) -> None:
    # Given the page's text
    text = " ".join(" ".join(Page(reference.text).text).split())

    # Then it names the header the API key goes in
    assert "Authorization" in text
    assert "The API key, alone or as `Bearer <key>`." in text


class Hostile(BaseModel):
    name: str = Field(description=HOSTILE)


def hostile_app() -> TestClient:
    router = APIRouter(tags=[HOSTILE])

    @router.post(
        "/hostile/{item}", summary=HOSTILE, description=HOSTILE, response_description=HOSTILE
    )
    def hostile(item: str, body: Hostile, note: str = Header(description=HOSTILE)) -> Hostile:
        return body

    return TestClient(create_app([router], docs=True))


def test_text_from_the_document_is_shown_as_text_never_as_markup() -> None:
    # Given an operation whose tag, summary, description, parameter and field descriptions are
    # all markup that would run a script
    with hostile_app() as client:
        # When the reference is drawn
        answer = client.get("/docs")

    # Then the markup is on the page as text, and no element came from it
    assert answer.status_code == 200
    page = Page(answer.text)
    assert page.tags() & {"script", "img"} == set()
    assert not any(name.startswith("on") for _, attrs in page.elements for name in attrs)
    text = "".join(page.text)
    assert text.count(HOSTILE) >= 5  # tag, summary, description, parameter, field


def test_the_openapi_document_is_still_served_and_swagger_uis_pages_are_not() -> None:
    # Given the local server's app
    with TestClient(create_versioned_app(all_routers())) as client:
        # When the OpenAPI document and Swagger UI's OAuth2 redirect page are asked for
        document = client.get("/v1/openapi.json")
        redirect = client.get("/v1/docs/oauth2-redirect")

    # Then the document is there, the redirect page (an inline script) is not, and the
    # reference itself is not an operation of the API
    assert document.status_code == 200
    assert "/docs" not in document.json()["paths"]
    assert redirect.status_code == 404
    assert redirect.headers["content-type"] == "application/json"


def test_the_lambdas_app_serves_no_reference() -> None:
    # Given the app a Lambda serves (no docs)
    with TestClient(create_app(all_routers())) as client:
        # When the reference or the document is asked for
        answers = [client.get("/docs"), client.get("/openapi.json")]

    # Then there is neither
    assert [answer.status_code for answer in answers] == [404, 404]


def test_an_app_without_docs_never_loads_the_reference() -> None:
    # Given a fresh interpreter that makes an app as a Lambda does
    code = (
        "import sys\n"
        "from evalsvc.api.app import create_app\n"
        "from fastapi import APIRouter\n"
        "create_app([APIRouter()])\n"
        "print('evalsvc.api.reference' in sys.modules, 'jinja2' in sys.modules)\n"
    )

    # When it has made it
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False
    )

    # Then neither the reference's module nor Jinja2 was imported for it: a function's start
    # pays for neither
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "False"]
