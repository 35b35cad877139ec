"""Tenant regular expressions (`check:regex`, the `pattern` keywords of `check:json_schema`),
matched by RE2: time linear in the text, no backtracking, and the GIL released while it runs.

Linear is not yet bounded: RE2's cost per byte grows with the size of the compiled program
(`\\w{1000}` compiles to thousands of instructions), so a pattern whose program exceeds
MAX_PROGRAM_SIZE is refused when the metric is created. What RE2 cannot do in linear time
(backreferences, lookaround) is refused then too, with RE2's reason. See docs/design.md
("Tenant regular expressions") for why RE2 rather than a backtracking engine with a timeout.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from evalsvc.scoring.text import utf8

# The compiled program of a pattern may hold at most this many instructions. The worst search
# of a 100,000-character output costs about (bytes x instructions) steps: bench/checks.py
# measures it, docs/performance.md records it.
MAX_PROGRAM_SIZE = 1_000
# Memory RE2 may use for one pattern (program and DFA cache).
MAX_MEMORY_BYTES = 8 << 20


class PatternError(ValueError):
    """The pattern cannot be used; the message says why, in words a tenant can act on."""


class Pattern:
    """A compiled tenant pattern. `search` is True when it matches anywhere in the text."""

    __slots__ = ("_regexp", "program_size", "source")

    def __init__(self, source: str, regexp: Any, program_size: int) -> None:
        self.source = source
        self._regexp = regexp
        self.program_size = program_size

    def search(self, text: str) -> bool:
        return self._regexp.search(utf8(text)) is not None

    def cost(self, text: str) -> int:
        """An upper bound on the work of one search of `text`, in byte-instruction steps."""
        return (len(text) * 4 + 1) * self.program_size


@lru_cache(maxsize=256)
def compile_pattern(source: str) -> Pattern:
    """The compiled pattern; PatternError naming what RE2 refused or why it is too large."""
    import re2  # imported on first use: only metrics with patterns pay for it

    options = re2.Options()
    options.max_mem = MAX_MEMORY_BYTES
    options.log_errors = False
    try:
        regexp = re2.compile(utf8(source), options)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        raise PatternError(
            f"{detail} (patterns are matched by RE2: no backreferences or lookaround)"
        ) from exc
    size = int(regexp._regexp.ProgramSize())
    if size > MAX_PROGRAM_SIZE:
        raise PatternError(
            f"the pattern compiles to {size} instructions, over the {MAX_PROGRAM_SIZE} allowed: "
            "use smaller repetition counts (e.g. \\w+ instead of \\w{1000})"
        )
    return Pattern(source, regexp, size)
