"""check:json_schema is Draft 2020-12 (the jsonschema library), safe for tenant schemas: no
fetching, RE2 patterns, linear uniqueness, a budget per validation, schemas refused at
creation with the place and the problem."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from evalsvc.scoring import json_schema
from evalsvc.scoring.checks import CheckError, Score, parse


def score(schema: object, output: str) -> Score:
    return parse(f"check:json_schema:{json.dumps(schema)}")("", output)


PERSON = {
    "$defs": {"age": {"type": "integer", "minimum": 0}},
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"$ref": "#/$defs/age"}},
    "required": ["name"],
}


@pytest.mark.parametrize(
    ("schema", "output", "passes", "reason"),
    [
        # $ref into $defs is followed (the in-house validator ignored it)
        (PERSON, '{"name": "Ann", "age": 3}', True, "output matches the schema"),
        (PERSON, '{"name": "Ann", "age": -3}', False, "$.age: -3 is less than the minimum of 0"),
        # patternProperties and minProperties
        (
            {"patternProperties": {"^x-": {"type": "integer"}}},
            '{"x-a": "one"}',
            False,
            "$['x-a']: 'one' is not of type 'integer'",
        ),
        ({"minProperties": 2}, '{"a": 1}', False, "$: {'a': 1} does not have enough properties"),
        # enum compares as JSON does: true is not 1, 1.0 is 1
        ({"enum": [1]}, "true", False, "$: True is not one of [1]"),
        ({"enum": [1]}, "1.0", True, "output matches the schema"),
        # uniqueItems: 1 and 1.0 are equal, true and 1 are not, objects by their members
        ({"uniqueItems": True}, "[1, 1.0]", False, "$: the array has items that are not unique"),
        ({"uniqueItems": True}, "[1, true]", True, "output matches the schema"),
        (
            {"uniqueItems": True},
            '[{"a": [1, 2]}, {"a": [1, 2.0]}]',
            False,
            "$: the array has items that are not unique",
        ),
        ({"uniqueItems": True}, '[{"a": 1}, {"a": 2}]', True, "output matches the schema"),
        # unevaluatedProperties sees what properties and patternProperties evaluated
        (
            {
                "properties": {"a": True},
                "patternProperties": {"^b": True},
                "unevaluatedProperties": False,
            },
            '{"a": 1, "bb": 2, "c": 3}',
            False,
            "$: Unevaluated properties are not allowed ('c' was unexpected)",
        ),
        ({"prefixItems": [True], "unevaluatedItems": False}, "[1]", True, "matches the schema"),
        (
            {"prefixItems": [True], "unevaluatedItems": False},
            "[1, 2]",
            False,
            "$: Unevaluated items are not allowed (2 was unexpected)",
        ),
        # pydantic's style of schema
        (
            {
                "$defs": {
                    "Item": {
                        "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-\\d+$"}},
                        "required": ["sku"],
                        "type": "object",
                    }
                },
                "properties": {"items": {"items": {"$ref": "#/$defs/Item"}, "type": "array"}},
                "required": ["items"],
                "type": "object",
            },
            '{"items": [{"sku": "ABC-1"}, {"sku": "abc"}]}',
            False,
            "$.items[1].sku: 'abc' does not match '^[A-Z]{3}-\\\\d+$'",
        ),
    ],
)
def test_draft_2020_12_keywords(schema: object, output: str, passes: bool, reason: str) -> None:
    result = score(schema, output)
    assert result.value == (5.0 if passes else 1.0)
    assert result.reason.endswith(reason), result.reason


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"$ref": "https://example.com/person.json"}, "does not resolve"),
        ({"$ref": "#/$defs/missing"}, "does not resolve"),
        ({"$schema": "http://json-schema.org/draft-07/schema#"}, "is not supported"),
        ({"pattern": "(?<=a)b"}, "pattern '(?<=a)b' cannot be used"),
        ({"patternProperties": {"(a)\\1": {}}}, "no backreferences or lookaround"),
        ({"type": "object", "properties": {"a": {"minLength": "3"}}}, "schema.properties.a."),
        ({"items": {"type": ["string", 3]}}, "schema.items.type"),
    ],
)
def test_bad_schemas_are_refused_naming_the_problem(schema: object, message: str) -> None:
    with pytest.raises(CheckError) as refused:
        parse(f"check:json_schema:{json.dumps(schema)}")
    assert message in str(refused.value)


def test_the_metaschema_may_be_referenced() -> None:
    ref = {"$ref": "https://json-schema.org/draft/2020-12/schema"}
    assert score(ref, '{"type": "string"}').value == 5.0
    assert score(ref, '{"type": 3}').value == 1.0


def test_enum_data_that_looks_like_a_schema_is_not_checked_as_one() -> None:
    assert score({"enum": [{"pattern": "("}]}, '{"pattern": "("}').value == 5.0


def test_catastrophic_patterns_answer_correctly() -> None:
    long_key = json.dumps({"x" * 5000: 1})
    assert score({"patternProperties": {"(x+x+)+y": False}}, long_key).value == 5.0
    assert score({"patternProperties": {"(x+x+)+": False}}, long_key).value == 1.0
    text = json.dumps("a" * 5000 + "!")
    assert score({"pattern": "^(a+)+$"}, text).value == 1.0
    assert score({"pattern": "^(a+)+!$"}, text).value == 5.0


def test_a_schema_that_multiplies_work_fails_within_its_budget() -> None:
    doubling = {
        "$defs": {
            "n": {
                "anyOf": [
                    {"type": "array", "items": {"$ref": "#/$defs/n"}, "minItems": 2},
                    {"type": "array", "items": {"$ref": "#/$defs/n"}},
                ]
            }
        },
        "$ref": "#/$defs/n",
    }
    result = score(doubling, "[" * 60 + "]" * 60)
    assert result.value == 1.0
    assert result.reason.startswith("the schema could not be checked on this output within its")
    assert "simplify nested anyOf/oneOf" in result.reason


def test_a_reference_loop_fails_saying_so() -> None:
    result = score({"$ref": "#"}, "{}")
    assert result == Score(
        1.0, "the schema could not be checked on this output: its $ref chain does not end"
    )


def test_validators_are_compiled_once_per_schema() -> None:
    text = json.dumps(PERSON)
    assert json_schema.compile_schema(text) is json_schema.compile_schema(text)


def test_jsonschema_is_imported_only_when_a_schema_check_is_made() -> None:
    program = (
        "import sys\n"
        "from evalsvc.scoring import checks\n"
        "checks.parse('check:regex:a'); checks.parse('check:json_valid')\n"
        "assert 'jsonschema' not in sys.modules, 'imported too early'\n"
        "checks.parse('check:json_schema:{}')\n"
        "assert 'jsonschema' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True)
