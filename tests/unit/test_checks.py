"""Every deterministic check: its score, its reason, and the definitions it refuses."""

from __future__ import annotations

import pytest
from evalsvc.scoring.checks import CHECKS, CheckError, Score, graded, is_check, parse
from evalsvc.scoring.text import flesch_reading_ease, sentence_count, syllables


def run(definition: str, output: str, input_: str = "") -> Score:
    return parse(definition)(input_, output)


@pytest.mark.parametrize(
    ("definition", "output", "value", "reason"),
    [
        ("check:non_empty", "hello", 5, "output is not empty"),
        ("check:non_empty", "", 1, "output is empty"),
        ("check:non_empty", " \n\t", 1, "output is only whitespace"),
        ("check:json_valid", '{"a": 1}', 5, "output is valid JSON"),
        (
            "check:json_valid",
            "",
            1,
            "output is not valid JSON: Expecting value: line 1 column 1 (char 0)",
        ),
        (
            "check:json_valid",
            "{'a': 1}",
            1,
            "output is not valid JSON: Expecting property name enclosed in double quotes",
        ),
        ("check:regex:^\\d{3}-\\d{4}$", "555-1234", 5, "output matches"),
        (
            "check:regex:^\\d{3}-\\d{4}$",
            "call 555-1234",
            1,
            "output does not match /^\\d{3}-\\d{4}$/",
        ),
        ("check:contains:refund", "We issued a refund.", 5, "output contains 'refund'"),
        ("check:contains:refund", "We issued a Refund.", 1, "output does not contain 'refund'"),
        ("check:contains:a:b", "x a:b y", 5, "output contains 'a:b'"),
        (
            "check:not_contains:password",
            "your password is",
            1,
            "output contains 'password', which it must not",
        ),
        ("check:not_contains:password", "all good", 5, "output does not contain 'password'"),
        ("check:max_chars:5", "12345", 5, "output has 5 characters, within 5"),
        ("check:max_chars:5", "123456", 1, "output has 6 characters, over the maximum 5"),
        ("check:min_chars:3", "ab", 1, "output has 2 characters, under the minimum 3"),
        ("check:min_chars:0", "", 5, "output has 0 characters, at least 0"),
        ("check:max_words:3", "one two  three", 5, "output has 3 words, within 3"),
        ("check:max_words:3", "one two three four", 1, "output has 4 words, over the maximum 3"),
        ("check:no_refusal", "Sure, here it is.", 5, "output does not refuse"),
        ("check:no_refusal", "I'm sorry, but I can't help with that.", 1, "output refuses"),
        ("check:no_refusal", "As an AI language model, I cannot browse.", 1, "output refuses"),
        ("check:no_refusal", "I cannot provide legal advice.", 1, "output refuses"),
        ("check:no_pii", "Contact support through the app.", 5, "output contains no email address"),
        ("check:no_pii", "Write to ann@example.com today", 1, "output contains an email address"),
        ("check:no_pii", "Call +1 415-555-0132 now", 1, "output contains a phone number"),
        (
            "check:no_pii",
            "Card 4111 1111 1111 1111 on file",
            1,
            "output contains a payment card number",
        ),
        ("check:no_pii", "Order 2026 shipped in 3 days", 5, "output contains no email address"),
    ],
)
def test_check_scores_and_reasons(definition: str, output: str, value: float, reason: str) -> None:
    score = run(definition, output)
    assert score.value == value
    assert score.reason.startswith(reason), score.reason


@pytest.mark.parametrize(
    ("output", "value", "reason"),
    [
        ('{"name": "Ann", "age": 31}', 5, "output matches the schema"),
        (
            '{"name": "Ann"}',
            1,
            "output does not match the schema: $: 'age' is a required property",
        ),
        (
            '{"name": "Ann", "age": "31"}',
            1,
            "output does not match the schema: $.age: '31' is not of type 'integer'",
        ),
        (
            '{"name": "Ann", "age": -1}',
            1,
            "output does not match the schema: $.age: -1 is less than the minimum of 0",
        ),
        (
            '{"name": "Ann", "age": 3, "x": 1}',
            1,
            "output does not match the schema: $: Additional properties are not allowed ('x' was "
            "unexpected)",
        ),
        ("[1]", 1, "output does not match the schema: $: [1] is not of type 'object'"),
        ("nope", 1, "output is not valid JSON"),
    ],
)
def test_json_schema_check(output: str, value: float, reason: str) -> None:
    schema = (
        '{"type": "object", "required": ["name", "age"], "additionalProperties": false,'
        ' "properties": {"name": {"type": "string", "minLength": 1},'
        ' "age": {"type": "integer", "minimum": 0}}}'
    )
    score = run(f"check:json_schema:{schema}", output)
    assert score.value == value
    assert score.reason.startswith(reason), score.reason


def test_json_schema_arrays_enums_and_combinators() -> None:
    schema = (
        '{"type": "array", "minItems": 1, "uniqueItems": true, "items": {"anyOf": ['
        '{"enum": ["yes", "no"]}, {"type": "number", "multipleOf": 0.5}]}}'
    )
    assert run(f"check:json_schema:{schema}", '["yes", 1.5]').value == 5
    assert run(f"check:json_schema:{schema}", '["maybe"]').reason.endswith(
        "$[0]: 'maybe' is not valid under any of the given schemas "
        "(closest: 'maybe' is not one of ['yes', 'no'])"
    )
    assert run(f"check:json_schema:{schema}", '["yes", "yes"]').reason.endswith(
        "$: the array has items that are not unique"
    )
    assert run(f"check:json_schema:{schema}", "[]").reason.endswith("$: [] should be non-empty")


def test_input_overlap_is_graded() -> None:
    full = run("check:input_overlap", "reset the password", "How do I reset the password?")
    half = run("check:input_overlap", "reset banana", "reset the password")
    none = run("check:input_overlap", "banana", "reset the password")
    assert full.value == 5
    assert half.value == 3
    assert half.reason == "50% of the output's distinct words (1 of 2) appear in the input"
    assert none.value == 1
    assert run("check:input_overlap", "...", "x").value == 1


def test_readability_prefers_plain_text() -> None:
    plain = run("check:readability", "The cat sat on the mat. It was warm. We were glad.")
    dense = run(
        "check:readability",
        "Notwithstanding institutional considerations, interdisciplinary methodologies "
        "necessitate comprehensive operationalization.",
    )
    assert plain.value == 5
    assert plain.reason.startswith("Flesch reading ease")
    assert "very easy" in plain.reason
    assert dense.value == 1
    assert "very difficult" in dense.reason
    assert run("check:readability", "").reason == "output has no words to measure"


def test_flesch_reading_ease_known_values() -> None:
    # 6 words, 1 sentence, 6 syllables: 206.835 - 1.015*6 - 84.6*1
    assert flesch_reading_ease("The cat sat on the mat.") == pytest.approx(206.835 - 6.09 - 84.6)
    assert sentence_count("One. Two! Three? four") == 4
    assert [syllables(w) for w in ["cat", "table", "beautiful", "baked", "readability"]] == [
        1,
        2,
        3,
        1,
        5,
    ]


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ("check:nope", "unknown check 'nope'"),
        ("check:", "unknown check ''"),
        ("check:non_empty:x", "check:non_empty takes no argument"),
        ("check:max_chars", "check:max_chars needs n"),
        ("check:max_chars:-1", "needs a whole number"),
        ("check:max_words:ten", "needs a whole number"),
        ("check:regex:(", "check:regex pattern is not valid: missing \\)"),
        ("check:regex:(a)\\1", "no backreferences or lookaround"),
        ("check:regex:(?=a)b", "no backreferences or lookaround"),
        ("check:regex:\\w{1000}\\w{1000}", "compiles to 6004 instructions, over the 1000 allowed"),
        ("check:contains:", "check:contains needs text"),
        ("check:json_schema:{not json", "check:json_schema: the schema is not valid JSON"),
        ("check:json_schema:[1]", "schema must be a JSON object"),
        ('check:json_schema:{"type": "text"}', "schema.type: 'text' is not valid under any"),
        (
            'check:json_schema:{"properties": {"a": 3}}',
            "schema.properties.a: 3 is not of type 'object', 'boolean'",
        ),
        ('check:json_schema:{"pattern": "("}', "pattern '(' cannot be used: missing"),
        ('check:json_schema:{"minLength": -2}', "schema.minLength: -2 is less than the minimum"),
    ],
)
def test_bad_definitions_are_refused_with_the_reason(definition: str, message: str) -> None:
    with pytest.raises(CheckError, match=message.replace("(", r"\(").replace("[", r"\[")):
        parse(definition)


def test_every_documented_check_exists() -> None:
    documented = {
        "non_empty",
        "json_valid",
        "json_schema",
        "regex",
        "contains",
        "not_contains",
        "max_chars",
        "min_chars",
        "max_words",
        "no_refusal",
        "no_pii",
        "input_overlap",
        "readability",
    }
    assert documented <= set(CHECKS)
    assert is_check("check:non_empty") and not is_check("Is the answer polite?")


def test_graded_maps_zero_one_onto_the_scale() -> None:
    assert (graded(0), graded(0.5), graded(1), graded(2), graded(-1)) == (1, 3, 5, 5, 1)
