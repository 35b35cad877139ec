"""Characters a display obeys rather than shows: the C0 and C1 controls and DEL (NUL, ESC,
U+009B...), the bidirectional controls (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069:
an override such as U+202E shows the text after it reversed) and lone surrogates (a stored
text may hold one; it cannot be sent as UTF-8).

A name the service keeps to show (a monitor's) refuses every one of them (`first_control`);
every tenant text a report page shows has them replaced by U+FFFD (`neutralised`, which keeps
tab, line feed and carriage return: texts of many lines show as such). Zero-width joiners and
other format characters are left as they are: they join emoji and the letters of some scripts,
and reorder nothing. The CLI's terminal_safe (tools/evalsvc_tools/terminal.py) replaces these
and more, for a terminal.
"""

from __future__ import annotations

import re

BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
# As regular expression classes: DEL and C1, the bidirectional controls, the surrogates; then
# the C0 controls, all of them or all but tab (\x09), line feed (\x0a) and carriage return
# (\x0d).
_OTHERS = r"\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_ANY = re.compile(rf"[\x00-\x1f{_OTHERS}]")
_IN_TEXT = re.compile(rf"[\x00-\x08\x0b\x0c\x0e-\x1f{_OTHERS}]")
REPLACEMENT = "\ufffd"


def neutralised(text: str) -> str:
    """`text` with every control character but tab and line breaks, every bidirectional
    control and every lone surrogate replaced by U+FFFD: what a page shows of a tenant text."""
    if _IN_TEXT.search(text) is None:
        return text
    return _IN_TEXT.sub(REPLACEMENT, text)


def code_point(ch: str) -> str:
    """`ch` named as a code point, U+202E: how a message names a character it will not echo."""
    return f"U+{ord(ch):04X}"


def first_control(text: str) -> tuple[int, str] | None:
    """Where the first character `neutralised` would replace is in `text` (tab and line breaks
    included: a name is one line), counted from 1, and what it is in words; None when none is.
    """
    found = _ANY.search(text)
    if found is None:
        return None
    ch = found.group()
    if ch in BIDI_CONTROLS:
        kind = "a bidirectional control"
    elif "\ud800" <= ch <= "\udfff":
        kind = "a lone surrogate"
    else:
        kind = "a control character"
    return found.start() + 1, f"{code_point(ch)} ({kind})"
