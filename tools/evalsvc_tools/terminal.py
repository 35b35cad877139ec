"""Text shown on the user's terminal: what a service or a file said, made safe to show
(terminal_safe, cut), and the rich console the user's commands draw on. `rich` (the `cli`
extra) is imported only when a command draws."""

from __future__ import annotations

import json
import os
import sys
import unicodedata
from typing import TYPE_CHECKING, Any

from evalsvc_tools.client import EXIT_USAGE, ClientError

if TYPE_CHECKING:
    from rich.console import Console


# What a terminal may obey rather than show: controls (C0, DEL, C1: ESC starts every escape
# sequence, U+009B is a one-character CSI), formats (bidirectional overrides and isolates,
# zero-width characters), lone surrogates; and the line and paragraph separators.
UNSHOWN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _unshown(ch: str) -> bool:
    return unicodedata.category(ch) in UNSHOWN_CATEGORIES


def terminal_safe(text: str) -> str:
    """`text` with what a terminal would obey rather than show (escape sequences and other
    control characters, bidirectional overrides, lone surrogates) replaced by U+FFFD: a
    service's message or a dataset's text is shown, never run. Newlines and tabs stay."""
    return "".join("\ufffd" if ch not in "\n\t" and _unshown(ch) else ch for ch in text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # beyond the BMP: a UTF-16 surrogate pair, as JSON writes one
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def terminal_json(value: Any) -> str:
    """`value` as indented JSON that is safe on a terminal and reads back as json.dumps' does:
    characters stay as they are (not \\u escapes) except those terminal_safe replaces, which
    are written as \\u escapes. json.dumps escapes C0 controls in strings already, but not
    DEL, C1 controls, bidirectional overrides or lone surrogates; outside strings it writes
    only ASCII and the indentation's newlines, so every such character is inside a string."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(_json_escape(ch) if ch != "\n" and _unshown(ch) else ch for ch in text)


def cut(text: str, width: int) -> str:
    """`text` on one line, terminal-safe, in at most `width` characters (… ends a shortened one)."""
    text = terminal_safe(" ".join(text.split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def rich_console(*, stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr); a ClientError saying how to install rich when it is
    missing."""
    try:
        from rich.console import Console
    except ImportError:
        raise ClientError(
            "this command draws with rich, which is not installed: pip install 'evalsvc[cli]'",
            EXIT_USAGE,
        ) from None
    stream = sys.stderr if stderr else sys.stdout
    # Off a terminal (a file, a CI log): no escape codes, and a width readable in a log (120
    # unless COLUMNS says).
    width = None if stream.isatty() or os.environ.get("COLUMNS") else 120
    return Console(file=stream, width=width, highlight=False)
