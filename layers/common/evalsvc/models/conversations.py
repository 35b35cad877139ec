"""E11's pair fields: the conversation before a pair's input (`messages`), the tools the app
called (`tool_calls`) and those it should have called (`expected_tool_calls`), and the
conversation the pair belongs to (`conversation_id`).

A tool call's arguments are a JSON object. Two calls are the same call when their names are
equal and their arguments are equal as JSON values: key order aside, a number equal to a number
(1 and 1.0 alike), but never a boolean equal to a number (Python's `True == 1` is not JSON's).
`canonical_json` is that equality as a string, so calls can be counted in dicts and compared in
linear time."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

MAX_MESSAGES = 200
MAX_MESSAGE_CHARS = 100_000
MAX_TOOL_CALLS = 100
MAX_TOOL_NAME_CHARS = 128
# A call's arguments as compact JSON (UTF-8, non-ASCII as is).
MAX_ARGUMENTS_BYTES = 16 * 1024
MAX_CONVERSATION_ID_CHARS = 128

Role = Literal["system", "user", "assistant", "tool"]
ROLES: tuple[Role, ...] = ("system", "user", "assistant", "tool")


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, slots=True, eq=False)
class ToolCall:
    """One call of a tool. Compare calls with `key`, not ==: Python's equality of the arguments
    would take `true` for `1`."""

    name: str
    arguments: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        return (self.name, canonical_json(self.arguments))


def compact_json(value: Any) -> str:
    """`value` as compact JSON, non-ASCII as is (what MAX_ARGUMENTS_BYTES measures)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _canonical(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        # An integral float is the integer it equals (1.0 is 1); others stay as they are.
        if math.isfinite(value) and value.is_integer():
            return int(value)
        return value
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def canonical_json(value: Any) -> str:
    """One string per JSON value: keys sorted, integral numbers written as integers."""
    return json.dumps(
        _canonical(value),
        ensure_ascii=False,
        separators=(",", ":"),
        sort_keys=True,
        allow_nan=False,
    )


def arguments_bytes(arguments: dict[str, Any]) -> int:
    return len(compact_json(arguments).encode("utf-8", "surrogatepass"))


def messages_out(messages: list[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def tool_calls_out(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [{"name": c.name, "arguments": c.arguments} for c in calls]


def first_difference(made: Sequence[ToolCall], expected: Sequence[ToolCall]) -> int | None:
    """The first index at which the calls made and the expected calls differ: where the two
    calls' keys are not equal, or where one list ends before the other; None when the lists are
    the same calls in the same order. Keys are computed up to that index only.

    The review app's firstDifference (functions/review_app/static/conversation.js) is the same
    rule, on the same cases (tests/trajectory_cases.py)."""
    for index, (call, wanted) in enumerate(zip(made, expected, strict=False)):
        if call.key != wanted.key:
            return index
    if len(made) != len(expected):
        return min(len(made), len(expected))
    return None
