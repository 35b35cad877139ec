"""The HTML reports (E4): one self-contained page per evaluation result or comparison.

Pages are Jinja2 templates (templates/) with autoescaping on: every text from a tenant or a
model reaches the page escaped, and the templates never mark one safe. The page makes no
request: its CSS is inline (allowed by its hash in the Content-Security-Policy, which forbids
everything else), its charts are inline SVG, and it has no script.

A page stays under MAX_PAGE_BYTES, and under what one Lambda response carries: long texts are
cut to the `Limits` (with their length shown), which are first set from how many texts the page
lists and then halved until the rendered page fits.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from evalsvc.identifiers import format_ms
from evalsvc.logic.reports import ComparisonReport, EvaluationReport, PairText
from evalsvc.models.comparisons import Comparison
from evalsvc.reports import charts
from evalsvc.stats import SCALE_MAX, SCALE_MIN
from evalsvc.usage import Usage

MAX_PAGE_BYTES = 5_000_000
# Budgets (bytes of escaped text, at worst 6 bytes a character: `&#34;` or a 4-byte character
# plus slack) for the lists a page may hold; divided among the texts the page lists.
PAIR_TEXT_BUDGET = 2_000_000
REASON_BUDGET = 700_000
COMMENT_BUDGET = 500_000
WORST_BYTES_PER_CHAR = 6
# How many votes and comments are listed under one pair, and in the page's own list.
CRITIQUES_PER_PAIR = 3
LISTED_CRITIQUES = 50
_TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True, slots=True)
class Limits:
    """The most characters shown of each kind of text."""

    pair_text: int = 2_000
    reason: int = 1_000
    comment: int = 1_000
    definition: int = 2_000
    prompt: int = 4_000
    failure: int = 2_000

    @classmethod
    def for_counts(cls, texts: int, reasons: int, comments: int) -> Limits:
        """Limits that keep `texts` pair texts, `reasons` reasons and `comments` comments
        within their budgets."""
        most = cls()
        return cls(
            pair_text=_share(PAIR_TEXT_BUDGET, texts, most.pair_text),
            reason=_share(REASON_BUDGET, reasons, most.reason),
            comment=_share(COMMENT_BUDGET, comments, most.comment),
        )

    def halved(self) -> Limits:
        return Limits(**{f.name: max(1, getattr(self, f.name) // 2) for f in _FIELDS})


_FIELDS = dataclasses.fields(Limits)


def _share(budget: int, count: int, most: int) -> int:
    if count <= 0:
        return most
    return max(40, min(most, budget // (count * WORST_BYTES_PER_CHAR)))


# ---- formatting (template filters) ------------------------------------------------------------


def cut(text: str | None, chars: int) -> Markup:
    """`text` escaped, its first `chars` characters, with its whole length shown when cut."""
    if text is None:
        return Markup("")
    if len(text) <= chars:
        return escape(text)
    return escape(text[:chars]) + Markup(
        '<span class="cut">… cut: the first {:,} of {:,} characters</span>'
    ).format(chars, len(text))


def number(value: float | None, digits: int = 2) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:.{digits}f}"


def signed(value: float | None, digits: int = 2) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return f"{value:+.{digits}f}"


def p_value(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "—"
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def count(value: int) -> str:
    return f"{value:,}"


def usd(usage: Usage) -> str:
    cost = usage.cost()
    if cost is None:
        return "not known (no price for the model)"
    if cost >= 1:
        return f"${cost:,.2f}"
    if 0 < cost < Decimal("0.000001"):
        return "less than $0.000001"
    return "$" + f"{cost:.6f}".rstrip("0").rstrip(".")  # $0.765, $0.000042, $0


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(_TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        cut=cut, number=number, signed=signed, p_value=p_value, count=count, usd=usd, when=format_ms
    )
    env.globals["short"] = charts.short
    return env


_ENV = _environment()
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


EVALUATION_PAGE = "evaluation.html.j2"
COMPARISON_PAGE = "comparison.html.j2"


def compile_page(template: str) -> None:
    """Compile a page's templates now (a route module does at import, so that a SnapStart
    snapshot holds them and the first request does not pay for it: about 40 ms a page)."""
    _ENV.get_template(template)


def _render(template: str, fits: Callable[[bytes], bool], limits: Limits, **context: Any) -> bytes:
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


# ---- the evaluation page -------------------------------------------------------------------------


def _evaluation_limits(report: EvaluationReport) -> Limits:
    shown = sum(len(m.lowest) for m in report.metrics)
    comments = sum(
        min(len(p.critiques), CRITIQUES_PER_PAIR) for m in report.metrics for p in m.lowest
    )
    return Limits.for_counts(texts=2 * shown, reasons=shown, comments=comments + LISTED_CRITIQUES)


def _evaluation_forest(report: EvaluationReport) -> charts.Forest | None:
    rows = [
        charts.Estimate(
            f"{m.idx + 1}. {m.definition}",
            m.summary.mean,
            m.summary.ci_low,
            m.summary.ci_high,
        )
        for m in report.metrics
        if m.summary is not None
    ]
    if not rows:
        return None
    return charts.forest(
        rows,
        title="Mean score per metric with its 95 % confidence interval",
        description="For each metric, a dot at the mean score (1 to 5) and a line across its "
        "95 % confidence interval.",
        low=SCALE_MIN,
        high=SCALE_MAX,
        ticks=[1, 2, 3, 4, 5],
    )


def render_evaluation(
    report: EvaluationReport, fits: Callable[[bytes], bool] = lambda _: True
) -> bytes:
    """The evaluation page, as UTF-8 HTML that `fits` accepts (and within MAX_PAGE_BYTES)."""
    histograms = [
        charts.histogram(m.histogram, title=f"Scores of metric {m.idx + 1}")
        if m.histogram is not None
        else None
        for m in report.metrics
    ]
    return _render(
        EVALUATION_PAGE,
        fits,
        _evaluation_limits(report),
        report=report,
        result=report.result,
        forest=_evaluation_forest(report),
        histograms=histograms,
        critiques_per_pair=CRITIQUES_PER_PAIR,
        listed=report.critiques[:LISTED_CRITIQUES],
    )


# ---- the comparison page -------------------------------------------------------------------------

_TONES = {"improved": "better", "regressed": "worse"}
VERDICT_WORDS = {
    "improved": "improved",
    "regressed": "regressed",
    "no_significant_difference": "no significant difference",
    "insufficient_data": "insufficient data",
}


def _comparison_forest(comparison: Comparison) -> charts.Forest:
    figures = [m.stats for m in comparison.metrics]
    extent = charts.difference_extent(
        [v for f in figures for v in (f.mean_diff, f.ci_low, f.ci_high)]
    )
    confidence = f"{100 * (1 - comparison.request.alpha):.10g}"
    return charts.forest(
        [
            charts.Estimate(
                f"{i + 1}. {m.metric.definition}",
                m.stats.mean_diff,
                m.stats.ci_low,
                m.stats.ci_high,
                tone=_TONES.get(m.verdict, "neutral"),
                note=VERDICT_WORDS[m.verdict],
            )
            for i, m in enumerate(comparison.metrics)
        ],
        title=f"Mean paired difference (candidate minus baseline) per metric, {confidence} % "
        "interval",
        description="For each metric, a dot at the mean of candidate minus baseline over the "
        "matched pairs and a line across its confidence interval; right of the zero line the "
        "candidate scored higher.",
        low=-extent,
        high=extent,
        ticks=[-extent, -extent / 2, 0.0, extent / 2, extent],
        reference=0.0,
        signed=True,
    )


def render_comparison(
    report: ComparisonReport, fits: Callable[[bytes], bool] = lambda _: True
) -> bytes:
    """The comparison page, as UTF-8 HTML that `fits` accepts (and within MAX_PAGE_BYTES)."""
    comparison = report.comparison
    changes = comparison.regressions + comparison.improvements
    limits = Limits.for_counts(texts=4 * len(changes), reasons=2 * len(changes), comments=0)
    wtl = charts.wins_ties_losses(
        [
            (f"{i + 1}. {m.metric.definition}", m.stats.wins, m.stats.ties, m.stats.losses)
            for i, m in enumerate(comparison.metrics)
        ],
        title="Wins, ties and losses of the candidate per metric",
    )
    return _render(
        COMPARISON_PAGE,
        fits,
        limits,
        report=report,
        comparison=comparison,
        body=comparison.request,
        forest=_comparison_forest(comparison),
        wtl=wtl,
        verdict_words=VERDICT_WORDS,
        tones=_TONES,
        moved_texts=report.texts,
        missing=PairText(missing=True),
    )
