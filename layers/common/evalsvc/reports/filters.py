"""How figures and texts are written on a page: the templates' filters. `cut` is the one place
a text is shortened, escaped on the way (the "cut" note is the only markup it adds)."""

from __future__ import annotations

import math
from decimal import Decimal

from markupsafe import Markup, escape

from evalsvc.usage import Usage


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
