"""How figures and texts are written on a page: the templates' filters. `shown` is the one
rule for what of a tenant's text a page shows: every text a template writes passes through it
(`finalize`, the environment's, before autoescaping), and so does every text the markup made
in Python holds (`cut`, the one place a text is shortened, escaped on the way; the monitor
page's `breakable`)."""

from __future__ import annotations

import math
from decimal import Decimal

from markupsafe import Markup, escape

from evalsvc.core.controls import neutralised
from evalsvc.spending.meter import Usage


def shown(text: str) -> str:
    """`text` as a page shows it: its control characters (but tab and line breaks),
    bidirectional controls (an override would show what follows it reversed) and lone
    surrogates each replaced by U+FFFD (evalsvc.core.controls), visibly, never obeyed."""
    return neutralised(text)


def finalize(value: object) -> object:
    """Every value a template writes (`{{ ... }}`), before it is escaped: a text is `shown`;
    markup the pages made (which shows its texts itself) and figures are left as they are."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return shown(value)
    return value


def cut(text: str | None, chars: int) -> Markup:
    """`text` shown and escaped, its first `chars` characters, with its whole length shown when
    cut."""
    if text is None:
        return Markup("")
    if len(text) <= chars:
        return escape(shown(text))
    return escape(shown(text[:chars])) + Markup(
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


def percent(value: float | None, digits: int = 1) -> str:
    """A share (0 to 1) as a percentage: 0.625 is "62.5 %"."""
    if value is None or not math.isfinite(value):
        return "—"
    return f"{100 * value:.{digits}f} %"


def count(value: int) -> str:
    return f"{value:,}"


def usd(usage: Usage) -> str:
    return money(usage.cost())


def money(cost: Decimal | None) -> str:
    """A cost in dollars, as the pages write it; None is a cost not known."""
    if cost is None:
        return "not known (no price for the model)"
    if cost >= 1:
        return f"${cost:,.2f}"
    if 0 < cost < Decimal("0.000001"):
        return "less than $0.000001"
    return "$" + f"{cost:.6f}".rstrip("0").rstrip(".")  # $0.765, $0.000042, $0
