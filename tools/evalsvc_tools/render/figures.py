"""How a figure, or any other value the service gave, is written in the tables (terminal-safe),
and the line of E3's usage that several tables print."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalsvc_tools.terminal import cut

if TYPE_CHECKING:
    from rich.console import Console

# How much of a metric's definition a table shows.
METRIC_WIDTH = 40
# How much of a pair id, or of any other value the service gave, a line shows (an id is at
# most 128 characters).
PAIR_ID_WIDTH = 128
FIELD_WIDTH = 200
# A figure the service gave as null (too few pairs for it).
MISSING = "-"


def format_figure(value: Any, digits: int = 2) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return f"{value:.{digits}f}"


def format_signed(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return f"{value:+.2f}"


def format_p_value(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def field(value: Any) -> str:
    """A value the service gave, to put in a line: on one line and terminal-safe."""
    return cut(str(value), FIELD_WIDTH)


def at(values: Any, index: int) -> Any:
    return values[index] if isinstance(values, list) and index < len(values) else None


def money(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "cost unknown (no price)"
    return f"${value:.6f}"


def format_percent(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return f"{100 * value:.1f}%"


def rows(body: dict[str, Any], name: str) -> list[dict[str, Any]]:
    found = body.get(name)
    return [row for row in found if isinstance(row, dict)] if isinstance(found, list) else []


def print_usage(usage: Any, console: Console) -> None:
    """The line of E3's usage, when any LLM call was made or found in the cache."""
    from rich.text import Text

    if isinstance(usage, dict) and (usage.get("llm_calls") or usage.get("cache_hits")):
        console.print(
            Text(
                f"LLM: {field(usage.get('llm_calls'))} calls, {field(usage.get('cache_hits'))} "
                f"cache hits, {field(usage.get('input_tokens'))} input and "
                f"{field(usage.get('output_tokens'))} output tokens, "
                f"{money(usage.get('cost_usd'))} ({field(usage.get('model'))})"
            )
        )
