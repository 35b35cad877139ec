"""Text shown on the user's terminal: what a service or a file said, made safe to show
(terminal_safe, cut), and the rich console the user's commands draw on. `rich` (the `cli`
extra) is imported only when a command draws."""

from __future__ import annotations

import os
import sys
import unicodedata
from typing import TYPE_CHECKING

from evalsvc_tools.client import EXIT_USAGE, ClientError

if TYPE_CHECKING:
    from rich.console import Console


def terminal_safe(text: str) -> str:
    """`text` with what a terminal would obey rather than show (escape sequences and other
    control characters, bidirectional overrides, lone surrogates) replaced by U+FFFD: a
    service's message or a dataset's text is shown, never run."""
    return "".join(
        "\ufffd" if ch not in "\n\t" and unicodedata.category(ch) in ("Cc", "Cf", "Cs") else ch
        for ch in text
    )


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
