"""The cases of the first difference between the calls made and the expected ones (E11), shared
by the layer's `first_difference` (tests/unit) and the review app's `firstDifference`
(tests/browser), so that the two stay one rule.

Each list is JSON text, as the service answers it: read by Python's json and by the app's
exact reader, so that 1.0 stays a float for Python and an integer longer than a double holds
reaches both as written."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from evalsvc.models.conversations import ToolCall


class Case(NamedTuple):
    name: str
    made: str
    expected: str
    first: int | None  # the first index at which they differ; None when they are the same


def _calls(*calls: tuple[str, str]) -> str:
    """A list of calls as JSON text, each (name, its arguments as JSON text)."""
    return "[" + ",".join(f'{{"name":{json.dumps(n)},"arguments":{a}}}' for n, a in calls) + "]"


A = ("search", '{"q":"bridge","limit":3}')
B = ("open", '{"id":7}')
C = ("summarize", '{"style":"short"}')

CASES = [
    Case("equal lists", _calls(A, B, C), _calls(A, B, C), None),
    Case("both empty", "[]", "[]", None),
    Case("a call differs", _calls(A, B, C), _calls(A, ("open", '{"id":8}'), C), 1),
    Case("a name differs", _calls(A, B), _calls(("lookup", A[1]), B), 0),
    Case("made shorter", _calls(A, B), _calls(A, B, C), 2),
    Case("expected shorter", _calls(A, B, C), _calls(A), 1),
    Case("none made", "[]", _calls(A), 0),
    Case("none expected", _calls(A), "[]", 0),
    Case(
        "arguments in another key order",
        _calls(("f", '{"a":1,"b":{"c":2,"d":[3,{"e":4,"f":5}]}}')),
        _calls(("f", '{"b":{"d":[3,{"f":5,"e":4}],"c":2},"a":1}')),
        None,
    ),
    Case("1 and 1.0", _calls(A, ("f", '{"n":1}')), _calls(A, ("f", '{"n":1.0}')), None),
    Case("-0.0 and 0", _calls(("f", '{"n":-0.0}')), _calls(("f", '{"n":0}')), None),
    Case("1.5 and 15e-1", _calls(("f", '{"n":1.5}')), _calls(("f", '{"n":15e-1}')), None),
    Case("true and 1", _calls(A, ("f", '{"flag":true}')), _calls(A, ("f", '{"flag":1}')), 1),
    Case("false and 0", _calls(("f", '{"flag":false}')), _calls(("f", '{"flag":0}')), 0),
    Case('"1" and 1', _calls(("f", '{"n":"1"}')), _calls(("f", '{"n":1}')), 0),
    Case("null and absent", _calls(("f", '{"a":null}')), _calls(("f", "{}")), 0),
    Case("lists in another order", _calls(("f", '{"l":[1,2]}')), _calls(("f", '{"l":[2,1]}')), 0),
    Case(
        "integers beyond a double, one apart",
        _calls(("f", '{"id":12345678901234567890}')),
        _calls(("f", '{"id":12345678901234567891}')),
        0,
    ),
    Case(
        "an integer and the float equal to it",
        _calls(("f", '{"id":10000000000000000}')),
        _calls(("f", '{"id":1e16}')),
        None,
    ),
    Case(
        "an integer beside the float nearest it",
        _calls(("f", '{"id":10000000000000001}')),
        _calls(("f", '{"id":1e16}')),
        0,
    ),
    Case(
        "hostile names, equal",
        _calls(("</details><script>x()</script>", '{"\u202e":"\u2028"}')),
        _calls(("</details><script>x()</script>", '{"\u202e":"\u2028"}')),
        None,
    ),
]


def tool_calls(text: str) -> list[ToolCall]:
    """A case's list as the layer's calls."""
    calls: list[dict[str, Any]] = json.loads(text)
    return [ToolCall(c["name"], c["arguments"]) for c in calls]
