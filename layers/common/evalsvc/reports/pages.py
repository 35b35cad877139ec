"""Drawing a page: the Jinja2 environment (autoescaped, strict), the stylesheet and the
Content-Security-Policy that allows it alone, and the loop that draws a page again with halved
text limits until it fits.

The templates (templates/) are compiled to Python by Jinja2 ahead of time, into compiled/ (`make
templates`; a test fails when they differ from what templates/ compiles to): loading a page is
an import, not a parse and compile of its template (about 350 M instructions for the evaluation
page and the templates it uses, more than a tenth of a function's start). A report route loads
every template at import (`load_templates`), so that a SnapStart snapshot holds them and no
request compiles one.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from evalsvc.core.identifiers import format_ms
from evalsvc.reports import charts, conversation, filters
from evalsvc.reports.limits import MAX_PAGE_BYTES, SHORT_CONTEXT_CHARS, Limits

_TEMPLATES = Path(__file__).parent / "templates"
COMPILED = Path(__file__).parent / "compiled"
TEMPLATE_SUFFIX = ".html.j2"
EVALUATION_PAGE = "evaluation.html.j2"
COMPARISON_PAGE = "comparison.html.j2"
PAIRWISE_PAGE = "pairwise.html.j2"


def _environment(loader: jinja2.BaseLoader) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=loader,
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        # Every text a template writes is shown by the one rule (filters.shown).
        finalize=filters.finalize,
    )
    env.filters.update(
        cut=filters.cut,
        number=filters.number,
        signed=filters.signed,
        p_value=filters.p_value,
        percent=filters.percent,
        count=filters.count,
        usd=filters.usd,
        money=filters.money,
        when=format_ms,
    )
    env.globals["short"] = charts.short
    # A context of at most this many characters is shown open, a longer one closed.
    env.globals["short_context"] = SHORT_CONTEXT_CHARS
    # What a pair's conversation and tool calls draw (E11), within the page's `items` limit.
    env.globals["conversation_view"] = conversation.conversation_view
    env.globals["call_rows"] = conversation.call_rows
    return env


def template_names() -> list[str]:
    return sorted(path.name for path in _TEMPLATES.glob(f"*{TEMPLATE_SUFFIX}"))


def compile_templates(target: Path = COMPILED) -> None:
    """Compile every template of templates/ into `target`, as the pages load them (`make
    templates` writes compiled/ with it)."""
    source = _environment(jinja2.FileSystemLoader(_TEMPLATES))
    target.mkdir(exist_ok=True)
    for stale in target.glob("tmpl_*.py"):
        stale.unlink()
    source.compile_templates(
        target,
        zip=None,
        filter_func=lambda name: name.endswith(TEMPLATE_SUFFIX),
        ignore_errors=False,
    )


_ENV = _environment(jinja2.ModuleLoader(COMPILED))
_CSS = (_TEMPLATES / "report.css").read_text(encoding="utf-8")
_CSS_HASH = base64.b64encode(hashlib.sha256(_CSS.encode()).digest()).decode()
# What the page may load: nothing but its own inline stylesheet. Sent in a <meta> (it holds
# wherever the page is saved and opened) and as a header.
CONTENT_SECURITY_POLICY = (
    f"default-src 'none'; style-src 'sha256-{_CSS_HASH}'; base-uri 'none'; form-action 'none'"
)
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY + "; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "private, no-store",
}


def load_templates() -> None:
    """Load every template now: a report route does at import, so that a SnapStart snapshot
    holds them and no request loads one."""
    for name in template_names():
        _ENV.get_template(name)


def render(template: str, fits: Callable[[bytes], bool], limits: Limits, **context: Any) -> bytes:
    """The page as UTF-8, drawn again with halved limits until `fits` accepts it and it is
    within MAX_PAGE_BYTES."""
    page = _ENV.get_template(template)
    while True:
        html = page.render(
            css=Markup(_CSS),  # noqa: S704 (the project's own stylesheet, not tenant text)
            csp=CONTENT_SECURITY_POLICY,
            limits=limits,
            **context,
        )
        # A lone surrogate (stored text may hold one) cannot be sent as UTF-8.
        body = html.encode("utf-8", "replace")
        if (len(body) <= MAX_PAGE_BYTES and fits(body)) or limits.pair_text <= 1:
            return body
        limits = limits.halved()
