"""JSON read within scoring.bounded_json's bounds (strict JSON, nested at most MAX_DEPTH levels,
integers of at most MAX_INT_DIGITS digits), for texts as large as an export body (32 MiB).

bounded_json counts the nesting a bracket at a time, to say how deep a text is; on 32 MiB of
brackets that takes many seconds. Here only whether a text is deeper than MAX_DEPTH is asked, and
answered by str.replace passes: each removes every innermost pair of brackets, so the number of
passes that remove something is the nesting depth once every opening bracket is closed (closing
brackets are appended for those that are not). At most MAX_DEPTH + 1 passes over the text: linear.
Numbers too large for a float (1e999) are refused too: they would be infinities, not JSON values.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from evalsvc.scoring.bounded_json import (
    MAX_DEPTH,
    BeyondLimits,
    NotJson,
    constant,
    integer,
)

__all__ = ["MAX_DEPTH", "BeyondLimits", "NotJson", "deeper_than", "read_json"]

# A JSON string (or the unterminated rest of one), as bounded_json removes it before counting.
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]++")
_AS_PARENTHESES = str.maketrans("[]{}", "()()")


def _innermost_removed(brackets: str, limit: int) -> tuple[str, int]:
    """`brackets` after passes removing every "()" (at most limit + 1), and how many removed."""
    passes = 0
    while passes <= limit and "()" in brackets:
        brackets = brackets.replace("()", "")
        passes += 1
    return brackets, passes


def deeper_than(text: str, limit: int) -> bool:
    """Whether `text` nests brackets (outside strings) more than `limit` levels deep, as
    bounded_json.nesting_depth counts them (a closing bracket that closes nothing is ignored)."""
    brackets = _NOT_BRACKETS.sub("", _STRING.sub("", text)).translate(_AS_PARENTHESES)
    rest, passes = _innermost_removed(brackets, limit)
    if passes > limit:
        return True
    # What is left is closers that close nothing, then openers that are never closed: each of
    # those is one level more from where it stands on.
    unclosed = rest.count("(")
    if unclosed > limit:
        return True
    if not unclosed:
        return False
    return _innermost_removed(brackets + ")" * unclosed, limit)[1] > limit


def _float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise BeyondLimits(f"the number {literal[:40]} is too large for a double")
    return value


_DECODER = json.JSONDecoder(parse_int=integer, parse_float=_float, parse_constant=constant)


def read_json(text: str) -> Any:
    """The JSON value of `text`; NotJson (BeyondLimits past the bounds) saying why not."""
    if deeper_than(text, MAX_DEPTH):
        raise BeyondLimits(f"it is nested more than {MAX_DEPTH} levels deep")
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise NotJson(str(exc)) from exc
