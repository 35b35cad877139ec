"""The API reference: a page drawn by the server from the app's own OpenAPI document, served at
/docs beside /openapi.json when the app has docs (the local server's /v1/docs, on the review
app's origin).

It replaces Swagger UI, whose page ran third-party JavaScript on that origin, where a signed-in
reviewer's API key is in session storage. This page runs no script and loads nothing: one
inline stylesheet, allowed by its hash, and links within the page or to the OpenAPI document
beside it. Every text from the document (titles, summaries, descriptions, names, enum values) is
inserted as text by Jinja2's autoescaping, as in the reports.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from evalsvc.core.browser_headers import BROWSER_HEADERS

_TEMPLATES = Path(__file__).parent / "templates"
_CSS = (_TEMPLATES / "reference.css").read_text(encoding="utf-8")
_CSS_HASH = base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode()
# Nothing but the page's own inline stylesheet: no script, image, font, frame or connection.
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'sha256-{_CSS_HASH}'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    **BROWSER_HEADERS,
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Cache-Control": "no-cache",
}
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# How deep a schema's type is spelled out inline (a list of maps of lists...) before "…".
_MAX_DEPTH = 6
_ANCHOR_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a type as written on the page: text, linked to a schema's section when
    `anchor` is set."""

    text: str
    anchor: str | None = None


Type = tuple[Part, ...]


@dataclass(frozen=True, slots=True)
class Field:
    """A parameter or a schema's property."""

    name: str
    type: Type
    required: bool
    description: str
    where: str = ""  # a parameter's place: path, query, header, cookie
    default: str = ""  # the default value, as JSON ("" when there is none)


@dataclass(frozen=True, slots=True)
class Content:
    media_type: str
    type: Type


@dataclass(frozen=True, slots=True)
class Answer:
    status: str
    description: str
    contents: tuple[Content, ...]


@dataclass(frozen=True, slots=True)
class Operation:
    anchor: str
    method: str
    path: str
    summary: str
    description: str
    deprecated: bool
    authenticated: bool
    parameters: tuple[Field, ...]
    body_required: bool
    body: tuple[Content, ...]
    answers: tuple[Answer, ...]


@dataclass(frozen=True, slots=True)
class Group:
    name: str
    anchor: str
    operations: list[Operation] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Schema:
    anchor: str
    name: str
    description: str
    type: Type
    properties: tuple[Field, ...]


@dataclass(frozen=True, slots=True)
class Scheme:
    name: str
    description: str
    how: str  # e.g. "the Authorization header"


class _Anchors:
    """Ids for the page's sections, unique and made of characters any URL fragment keeps."""

    def __init__(self) -> None:
        self._taken: set[str] = set()
        self._schemas: dict[str, str] = {}

    def new(self, prefix: str, name: str) -> str:
        base = f"{prefix}-{_ANCHOR_UNSAFE.sub('-', name)}"
        anchor, n = base, 1
        while anchor in self._taken:
            n += 1
            anchor = f"{base}-{n}"
        self._taken.add(anchor)
        return anchor

    def schema(self, name: str) -> str:
        if name not in self._schemas:
            self._schemas[name] = self.new("schema", name)
        return self._schemas[name]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _type(schema: object, anchors: _Anchors, known: Mapping[str, Any], depth: int = 0) -> Type:
    """A schema as a short type: `string`, `array of PairIn`, `integer or null`, `"holm" or
    "none"`; a named schema links to its section."""
    if not isinstance(schema, Mapping):
        return (Part("any"),)
    if depth > _MAX_DEPTH:
        return (Part("…"),)
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        return (Part(name, anchors.schema(name) if name in known else None),)
    for key, joint in (("anyOf", " or "), ("oneOf", " or "), ("allOf", " and ")):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return _joined((_type(o, anchors, known, depth + 1) for o in options), joint)
    if "const" in schema:
        return (Part(json.dumps(schema["const"], ensure_ascii=False)),)
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return _joined(((Part(json.dumps(v, ensure_ascii=False)),) for v in enum), " or ")
    kind = schema.get("type")
    if isinstance(kind, list):
        return _joined(((Part(str(k)),) for k in kind), " or ")
    if kind == "array":
        return (Part("array of "), *_type(schema.get("items"), anchors, known, depth + 1))
    if kind == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        values = _type(schema["additionalProperties"], anchors, known, depth + 1)
        return (Part("object of "), *values)
    if isinstance(kind, str):
        form = schema.get("format")
        return (Part(f"{kind} ({form})" if isinstance(form, str) else kind),)
    return (Part("any"),)


def _default(schema: object) -> str:
    if isinstance(schema, Mapping) and "default" in schema:
        return json.dumps(schema["default"], ensure_ascii=False)
    return ""


def _joined(types: Iterable[Type], joint: str) -> Type:
    parts: list[Part] = []
    for k, each in enumerate(types):
        if k:
            parts.append(Part(joint))
        parts.extend(each)
    return tuple(parts)


def _contents(content: object, anchors: _Anchors, known: Mapping[str, Any]) -> tuple[Content, ...]:
    if not isinstance(content, Mapping):
        return ()
    return tuple(
        Content(str(media_type), _type(media.get("schema"), anchors, known))
        for media_type, media in content.items()
        if isinstance(media, Mapping)
    )


def _parameters(
    operation: Mapping[str, Any], anchors: _Anchors, known: Mapping[str, Any]
) -> tuple[Field, ...]:
    found = []
    for parameter in operation.get("parameters") or ():
        if not isinstance(parameter, Mapping):
            continue
        schema = parameter.get("schema")
        description = _text(parameter.get("description")) or _text(
            schema.get("description") if isinstance(schema, Mapping) else None
        )
        found.append(
            Field(
                name=_text(parameter.get("name")),
                type=_type(schema, anchors, known),
                required=parameter.get("required") is True,
                description=description,
                where=_text(parameter.get("in")),
                default=_default(schema),
            )
        )
    return tuple(found)


def _operation(
    method: str,
    path: str,
    operation: Mapping[str, Any],
    anchors: _Anchors,
    known: Mapping[str, Any],
    secured: bool,
) -> Operation:
    body = operation.get("requestBody")
    body = body if isinstance(body, Mapping) else {}
    answers = operation.get("responses")
    answers = answers if isinstance(answers, Mapping) else {}
    security = operation.get("security")
    return Operation(
        anchor=anchors.new("op", _text(operation.get("operationId")) or f"{method}-{path}"),
        method=method.upper(),
        path=path,
        summary=_text(operation.get("summary")),
        description=_text(operation.get("description")),
        deprecated=operation.get("deprecated") is True,
        authenticated=bool(security) if isinstance(security, list) else secured,
        parameters=_parameters(operation, anchors, known),
        body_required=body.get("required") is True,
        body=_contents(body.get("content"), anchors, known),
        answers=tuple(
            Answer(
                str(status),
                _text(answer.get("description")),
                _contents(answer.get("content"), anchors, known),
            )
            for status, answer in answers.items()
            if isinstance(answer, Mapping)
        ),
    )


def _schema(name: str, schema: object, anchors: _Anchors, known: Mapping[str, Any]) -> Schema:
    schema = schema if isinstance(schema, Mapping) else {}
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    return Schema(
        anchor=anchors.schema(name),
        name=name,
        description=_text(schema.get("description")),
        type=() if properties else _type(schema, anchors, known),
        properties=tuple(
            Field(
                name=str(prop),
                type=_type(value, anchors, known),
                required=prop in required,
                description=_text(value.get("description") if isinstance(value, Mapping) else ""),
                default=_default(value),
            )
            for prop, value in properties.items()
        ),
    )


def _schemes(components: Mapping[str, Any]) -> list[Scheme]:
    schemes = components.get("securitySchemes")
    found = []
    for name, scheme in (schemes if isinstance(schemes, Mapping) else {}).items():
        if not isinstance(scheme, Mapping):
            continue
        if scheme.get("type") == "apiKey":
            how = f"the {_text(scheme.get('name'))} {_text(scheme.get('in'))}"
        elif scheme.get("type") == "http":
            how = f"HTTP {_text(scheme.get('scheme'))} authentication"
        else:
            how = _text(scheme.get("type"))
        found.append(Scheme(str(name), _text(scheme.get("description")), how))
    return found


def context(document: Mapping[str, Any], openapi_url: str) -> dict[str, Any]:
    """What the page shows of `document`, linked to the document itself at `openapi_url`."""
    info = document.get("info")
    info = info if isinstance(info, Mapping) else {}
    components = document.get("components")
    components = components if isinstance(components, Mapping) else {}
    known = components.get("schemas")
    known = known if isinstance(known, Mapping) else {}
    anchors = _Anchors()
    # Schemas first: their anchors are their names wherever an operation links them.
    for name in known:
        anchors.schema(str(name))
    secured = bool(document.get("security"))
    groups: dict[str, Group] = {}
    paths = document.get("paths")
    for path, operations in (paths if isinstance(paths, Mapping) else {}).items():
        if not isinstance(operations, Mapping):
            continue
        for method in HTTP_METHODS:
            operation = operations.get(method)
            if not isinstance(operation, Mapping):
                continue
            tags = operation.get("tags")
            tag = str(tags[0]) if isinstance(tags, list) and tags else "other"
            if tag not in groups:
                groups[tag] = Group(tag, anchors.new("tag", tag))
            groups[tag].operations.append(
                _operation(method, str(path), operation, anchors, known, secured)
            )
    return {
        "title": _text(info.get("title")) or "API",
        "version": _text(info.get("version")),
        "description": _text(info.get("description")),
        "openapi_url": openapi_url,
        "schemes": _schemes(components),
        "groups": list(groups.values()),
        "schemas": [_schema(str(name), value, anchors, known) for name, value in known.items()],
    }


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("reference.html.j2")


def render(document: Mapping[str, Any], openapi_url: str) -> bytes:
    """The page, as UTF-8. `openapi_url` is relative to the page (e.g. "openapi.json")."""
    html = _template().render(
        css=Markup(_CSS),  # noqa: S704 (the project's own stylesheet, not the document's text)
        **context(document, openapi_url),
    )
    return html.encode("utf-8", "replace")


def page_once(document: Callable[[], Mapping[str, Any]], openapi_url: str) -> Callable[[], bytes]:
    """The page of `document()`, drawn on first use and kept (the document does not change)."""
    drawn: list[bytes] = []

    def page() -> bytes:
        if not drawn:
            drawn.append(render(document(), openapi_url))
        return drawn[0]

    return page
