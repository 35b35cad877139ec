"""The messages of a GenAI span, read from its attributes in either form of the conventions.

1.37 and later: `gen_ai.input.messages` and `gen_ai.output.messages` hold a JSON array (in a
string value; an array value of kvlists is read too) of `{"role", "parts": [...]}`, and
`gen_ai.system_instructions` an array of parts, read as a leading `system` message. A message's
text is its `text` parts' `content` joined with "\\n"; a `tool` message's text also takes its
`tool_call_response` parts' `response`, a string as it is and any other value as compact JSON,
in the order of the parts. An output message's `tool_call` parts are its tool calls. A message
whose role is none of system, user, assistant, tool is left out, and so is a part of a type
not named here: neither makes the span unreadable. A message with no parts but a string
`content` is read as that text.

The older form: `gen_ai.prompt.N.role` / `.content` and `gen_ai.completion.N.role` / `.content`,
N in numeric order (a prompt without a role is the user's, a completion without one the
assistant's), and `gen_ai.completion.N.tool_calls.M.name` / `.arguments`. Where a span has both
forms, the newer is read.

A tool call's arguments are a JSON object (an object value, or a string of one); anything else,
unreadable JSON included, is `{}`. An attribute whose JSON cannot be read within the bounds
(json_text) raises Unreadable naming it: the span is left out, not the export.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from evalsvc.logic.otlp.json_text import MAX_DEPTH, NotJson, read_json
from evalsvc.models.conversations import ROLES, Message, Role, arguments_bytes, compact_json

INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
PROMPT = "gen_ai.prompt."
COMPLETION = "gen_ai.completion."
# An index N of the older form has at most this many digits (more cannot be a real index).
_MAX_INDEX_DIGITS = 9

Attributes = Mapping[str, AnyValue]


class Unreadable(Exception):
    """The span's attribute `name` holds what cannot be read as the conventions say."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


@dataclass(frozen=True, slots=True)
class RawCall:
    """A tool call as a span tells it, before the pair's limits are applied; `size`: its
    arguments as compact JSON, in bytes (what MAX_ARGUMENTS_BYTES bounds), measured once."""

    name: str
    arguments: dict[str, Any]
    size: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "size", arguments_bytes(self.arguments))


@dataclass(slots=True)
class Turn:
    role: Role
    text: str
    tool_calls: list[RawCall] = field(default_factory=list)


class _NotAJsonValue(Exception):
    """Arrays and kvlists nested past MAX_DEPTH, or a double that is not finite."""


def python_value(value: AnyValue, depth: int = 0) -> Any:
    """An attribute value as the JSON value it stands for (bytes as None); _NotAJsonValue past
    MAX_DEPTH levels of arrays and kvlists, or for a double that is not finite."""
    if depth > MAX_DEPTH:
        raise _NotAJsonValue
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [python_value(item, depth + 1) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: python_value(kv.value, depth + 1) for kv in value.kvlist_value.values}
    if kind == "double_value" and not math.isfinite(value.double_value):
        raise _NotAJsonValue
    if kind in ("string_value", "bool_value", "int_value", "double_value"):
        return getattr(value, kind)
    return None


def string_value(attributes: Attributes, name: str) -> str | None:
    """The attribute `name` when it is a non-empty string."""
    value = attributes.get(name)
    if value is None or value.WhichOneof("value") != "string_value":
        return None
    return value.string_value or None


def _json_attribute(attributes: Attributes, name: str) -> Any:
    """The JSON value of the attribute `name` (None when absent); Unreadable when it is not."""
    value = attributes.get(name)
    if value is None:
        return None
    try:
        if value.WhichOneof("value") == "string_value":
            return read_json(value.string_value)
        return python_value(value)
    except (NotJson, _NotAJsonValue) as exc:
        raise Unreadable(name) from exc


def arguments_object(value: Any) -> dict[str, Any]:
    """A tool call's arguments: an object, or a string holding one; anything else is {}."""
    if isinstance(value, str):
        try:
            value = read_json(value)
        except NotJson:
            return {}
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def arguments_attribute(attributes: Attributes, name: str) -> dict[str, Any]:
    """The tool call arguments the attribute `name` holds (arguments_object of its value)."""
    value = attributes.get(name)
    try:
        return arguments_object(None if value is None else python_value(value))
    except _NotAJsonValue:
        return {}


def _response_text(response: Any) -> str | None:
    if isinstance(response, str):
        return response
    return None if response is None else compact_json(response)


def _text(parts: Any, role: Role) -> str:
    pieces: list[str] = []
    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("content"), str):
            pieces.append(part["content"])
        elif kind == "tool_call_response" and role == "tool":
            text = _response_text(part.get("response"))
            if text is not None:
                pieces.append(text)
    return "\n".join(pieces)


def _tool_calls(parts: Any) -> list[RawCall]:
    calls: list[RawCall] = []
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict) and part.get("type") == "tool_call":
            name = part.get("name")
            if isinstance(name, str) and name:
                calls.append(RawCall(name, arguments_object(part.get("arguments"))))
    return calls


def _role(value: Any) -> Role | None:
    return cast(Role, value) if value in ROLES else None


def _turns(attributes: Attributes, name: str) -> list[Turn] | None:
    """The messages of a 1.37+ attribute (None when the span does not have it)."""
    messages = _json_attribute(attributes, name)
    if messages is None:
        return None
    if not isinstance(messages, list):
        raise Unreadable(name)
    turns: list[Turn] = []
    for message in messages:
        if not isinstance(message, dict) or (role := _role(message.get("role"))) is None:
            continue
        parts = message.get("parts")
        if parts is None and isinstance(message.get("content"), str):
            parts = [{"type": "text", "content": message["content"]}]
        turns.append(Turn(role, _text(parts, role), _tool_calls(parts)))
    return turns


def _system_instructions(attributes: Attributes) -> list[Message]:
    parts = _json_attribute(attributes, SYSTEM_INSTRUCTIONS)
    if parts is None:
        return []
    if isinstance(parts, str):
        return [Message("system", parts)]
    if not isinstance(parts, list):
        raise Unreadable(SYSTEM_INSTRUCTIONS)
    return [Message("system", _text(parts, "system"))]


def _index(text: str) -> int | None:
    """N of the older form's keys, when `text` is one."""
    if text.isascii() and text.isdigit() and len(text) <= _MAX_INDEX_DIGITS:
        return int(text)
    return None


def _numbered(attributes: Attributes, prefix: str) -> dict[int, dict[str, AnyValue]]:
    """The older form's entries under `prefix`: N -> the rest of the key -> value."""
    found: dict[int, dict[str, AnyValue]] = {}
    for key, value in attributes.items():
        if key.startswith(prefix):
            number, _, rest = key[len(prefix) :].partition(".")
            if rest and (index := _index(number)) is not None:
                found.setdefault(index, {})[rest] = value
    return found


def _older_calls(entry: Mapping[str, AnyValue]) -> list[RawCall]:
    """The calls `tool_calls.M.name` / `.arguments` of an entry, M in numeric order."""
    numbered: dict[int, dict[str, AnyValue]] = {}
    for key, value in entry.items():
        head, _, rest = key.partition(".")
        number, _, what = rest.partition(".")
        index = _index(number) if head == "tool_calls" else None
        if index is not None and what in ("name", "arguments"):
            numbered.setdefault(index, {})[what] = value
    return [
        RawCall(name, arguments_attribute(call, "arguments"))
        for _, call in sorted(numbered.items())
        if (name := string_value(call, "name")) is not None
    ]


def _older_turns(attributes: Attributes, prefix: str, default_role: Role) -> list[Turn]:
    turns: list[Turn] = []
    for _, entry in sorted(_numbered(attributes, prefix).items()):
        role = _role(string_value(entry, "role") or default_role)
        if role is not None:
            turns.append(Turn(role, string_value(entry, "content") or "", _older_calls(entry)))
    return turns


def input_messages(attributes: Attributes) -> list[Message]:
    """The span's input: its system instructions, then its input messages. Unreadable when an
    attribute holding them cannot be read."""
    turns = _turns(attributes, INPUT_MESSAGES)
    if turns is None:
        turns = _older_turns(attributes, PROMPT, "user")
    return _system_instructions(attributes) + [Message(t.role, t.text) for t in turns]


def output_messages(attributes: Attributes) -> list[Turn]:
    """The span's output messages, with their tool calls. Unreadable when the attribute holding
    them cannot be read."""
    turns = _turns(attributes, OUTPUT_MESSAGES)
    if turns is None:
        turns = _older_turns(attributes, COMPLETION, "assistant")
    return turns


def is_gen_ai(attributes: Attributes) -> bool:
    """Whether a span's attributes make it a GenAI span."""
    return any(
        key in (INPUT_MESSAGES, OUTPUT_MESSAGES, "gen_ai.operation.name")
        or key.startswith((PROMPT, COMPLETION))
        for key in attributes
    )
