"""JSON parsing with bounds, for checks that read model output as JSON.

Python's `json.loads` accepts things that are not JSON (`NaN`, `Infinity`), raises
RecursionError on deep nesting, and ValueError on integers of more than 4,300 digits. Here a
text is read only if it is strict JSON nested at most MAX_DEPTH levels with integers of at most
MAX_INT_DIGITS digits; anything else raises NotJson with a sentence that says what is wrong.
Every step is linear in the length of the text.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 64
MAX_INT_DIGITS = 4_000

# A JSON string (or the unterminated rest of one): removed before brackets are counted. The runs
# between escapes are matched possessively, a run at a time: a character at a time, a string of
# 30 MB took 9 s.
_STRING = re.compile(r'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


class NotJson(ValueError):
    """The text is not JSON this module reads; `reason` says why, as a sentence about it."""

    @property
    def reason(self) -> str:
        return f"output is not valid JSON: {self}"


class BeyondLimits(NotJson):
    """JSON nested deeper, or with longer integers, than this module reads."""

    @property
    def reason(self) -> str:
        return f"output could not be read as JSON: {self}"


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting outside strings (0 for a scalar). Brackets that close more
    than they open are ignored: the parser reports those."""
    depth = deepest = 0
    for bracket in _BRACKETS.findall(_STRING.sub("", text)):
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


def integer(digits: str) -> int:
    """JSONDecoder's parse_int within MAX_INT_DIGITS (BeyondLimits past it)."""
    if len(digits.lstrip("-")) > MAX_INT_DIGITS:
        raise BeyondLimits(
            f"it holds an integer of {len(digits.lstrip('-'))} digits; at most "
            f"{MAX_INT_DIGITS} are read"
        )
    return int(digits)


def constant(name: str) -> Any:
    """JSONDecoder's parse_constant: NaN and the infinities are not JSON."""
    raise NotJson(f"{name} is not a JSON value")


_DECODER = json.JSONDecoder(parse_int=integer, parse_constant=constant)


def loads(text: str) -> Any:
    """The JSON value of `text`; NotJson saying why it cannot be read."""
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise BeyondLimits(f"it is nested {depth} levels deep; at most {MAX_DEPTH} are read")
    try:
        return _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise NotJson(str(exc)) from exc
