"""Hostile content for the checks, shared by the property tests (tests/unit/test_check_safety.py)
and the worst-time benchmark (bench/checks.py): a definition of every check, with arguments
chosen to be expensive, and outputs at the limits that have broken parsers and regex engines."""

from __future__ import annotations

import json
import random

from evalsvc.models.datasets import MAX_TEXT_CHARS

N = MAX_TEXT_CHARS

# Every check at least once; the schema and pattern arguments are the expensive kinds.
DEFINITIONS = [
    "check:non_empty",
    "check:json_valid",
    'check:json_schema:{"type": "object", "required": ["a"], "properties": {"a": {"type": '
    '"string", "pattern": "^[a-z]+$"}}}',
    'check:json_schema:{"$defs": {"n": {"anyOf": [{"type": "array", "items": {"$ref": '
    '"#/$defs/n"}, "minItems": 2}, {"type": "array", "items": {"$ref": "#/$defs/n"}}]}}, '
    '"$ref": "#/$defs/n"}',
    'check:json_schema:{"$ref": "#"}',
    'check:json_schema:{"type": "array", "uniqueItems": true}',
    'check:json_schema:{"patternProperties": {"(x+x+)+y": {}}, "unevaluatedProperties": false}',
    'check:json_schema:{"type": "string", "pattern": "(a|aa)*b"}',
    "check:regex:^(a+)+$",
    "check:regex:(x+x+)+y",
    "check:regex:a[ab]{990}x",
    "check:regex:\\x{1F600}[\\x{1F600}a]{190}x",
    "check:regex:(\\w+\\s?)*$",
    "check:contains:" + "ab" * 999,
    "check:not_contains:" + "a" * 1999,
    "check:max_chars:10",
    "check:min_chars:100000",
    "check:max_words:3",
    "check:no_refusal",
    "check:no_pii",
    "check:input_overlap",
    "check:readability",
]


def _random(alphabet: list[str], n: int) -> str:
    generator = random.Random(7)
    return "".join(generator.choice(alphabet) for _ in range(n))


def outputs() -> dict[str, str]:
    """Named outputs, each within the 100,000-character limit."""
    emoji = "\U0001f600"
    return {
        "empty": "",
        "deep brackets": "[" * N,
        "deep objects": '{"a":' * (N // 5),
        "deep but allowed": "[" * 64 + "]" * 64,
        "huge integer": "9" * N,
        "huge float": "1" + "0" * (N - 10) + ".5e99999",
        "NaN": "NaN",
        "control characters": "".join(chr(i) for i in range(32)) * (N // 32),
        "lone surrogates": "\ud800a\udfff" * (N // 3),
        "4-byte characters": emoji * N,
        "a times n, then !": "a" * (N - 1) + "!",
        "x times n": "x" * N,
        "random a and b": _random(["a", "b"], N),
        "random a and emoji": _random(["a", emoji], N),
        "at signs": "a@" * (N // 2),
        "email-like": ("a" * 60 + "@" + "b." * 10) * (N // 81),
        "digits": "1" * N,
        "spaced digits": "1 " * (N // 2),
        "dashed digits": "12-" * (N // 3),
        "dotted numbers": "1.2.3.4 " * (N // 8),
        "exclamations": "!" * (N - 1) + "x",
        "one long word": "supercalifragilistic" * (N // 20),
        "refusal-like": "I am sorry, but I " * (N // 18),
        "long JSON string": json.dumps("a" * (N - 2)),
        "many JSON objects": "[" + ",".join(["{}"] * (N // 3 - 1)) + "]",
        "many JSON keys": json.dumps({f"x{i}": i for i in range(N // 12)})[: N - 1] + "}",
        "many integers": json.dumps(list(range(N // 7))),
    }
