"""Validation errors become one readable message, with 413 for size limits."""

from __future__ import annotations

import pytest
from evalsvc.api.errors import describe_validation_errors
from evalsvc.models.datasets import PairIn, SeedDatasetIn
from pydantic import ValidationError


def errors_of(model: type, data: object) -> list[dict]:  # type: ignore[type-arg]
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)  # type: ignore[attr-defined]
    return caught.value.errors()  # type: ignore[return-value]


def test_wrong_type_names_the_field_with_its_position() -> None:
    status, message = describe_validation_errors(
        errors_of(SeedDatasetIn, {"data": [{"input": "a", "output": 1}]})
    )
    assert status == 400
    assert message == "data[0].output: Input should be a valid string"


def test_strict_models_refuse_booleans_and_numbers_for_strings() -> None:
    assert errors_of(PairIn, {"input": False, "output": "o"})[0]["type"] == "string_type"
    assert errors_of(PairIn, {"input": "i", "output": "o", "labels": ["a", 2]})[0]["loc"] == (
        "labels",
        1,
    )


def test_size_limits_answer_413() -> None:
    status, message = describe_validation_errors(
        errors_of(PairIn, {"input": "x" * 100_001, "output": ""})
    )
    assert status == 413
    assert message.startswith("input: String should have at most 100000 characters")


def test_many_errors_are_summarised() -> None:
    data = {"data": [{"input": i} for i in range(8)]}
    status, message = describe_validation_errors(errors_of(SeedDatasetIn, data))
    assert status == 400
    assert message.endswith("and 11 more")


def test_json_errors_explain_the_syntax_problem() -> None:
    errors = [
        {
            "type": "json_invalid",
            "loc": ("body", 9),
            "msg": "JSON decode error",
            "ctx": {"error": "Expecting value"},
        }
    ]
    assert describe_validation_errors(errors) == (
        400,
        "request body is not valid JSON (Expecting value)",
    )


@pytest.mark.parametrize(
    ("fields", "status", "message"),
    [
        (
            {"reference": "r" * 100_001},
            413,
            "data[0].reference: String should have at most 100000 characters",
        ),
        ({"reference": 7}, 400, "data[0].reference: Input should be a valid string"),
        (
            {"contexts": ["c"] * 21},
            413,
            "data[0].contexts: List should have at most 20 items after validation, not 21",
        ),
        (
            {"contexts": ["c", ""]},
            400,
            "data[0].contexts[1]: String should have at least 1 character",
        ),
        (
            {"contexts": ["c" * 20_001]},
            413,
            "data[0].contexts[0]: String should have at most 20000 characters",
        ),
        ({"contexts": "c"}, 400, "data[0].contexts: Input should be a valid list"),
        ({"contexts": ["c", 2]}, 400, "data[0].contexts[1]: Input should be a valid string"),
    ],
    ids=[
        "reference-too-long",
        "reference-not-text",
        "21-contexts",
        "empty-context",
        "context-too-long",
        "contexts-not-a-list",
        "context-not-text",
    ],
)
def test_reference_and_contexts_limits_name_the_field_and_the_limit(
    fields: dict[str, object], status: int, message: str
) -> None:
    data = {"data": [{"input": "i", "output": "o", **fields}]}
    assert describe_validation_errors(errors_of(SeedDatasetIn, data)) == (status, message)


def test_reference_and_contexts_at_their_limits_are_accepted() -> None:
    pair = PairIn.model_validate(
        {"input": "i", "output": "o", "reference": "r" * 100_000, "contexts": ["c" * 20_000] * 20}
    )
    assert pair.reference is not None and pair.contexts is not None
    assert len(pair.contexts) == 20
    # Absent, null and an empty list: the first two are no contexts, the last is kept as []
    assert PairIn.model_validate({"input": "i", "output": "o"}).contexts is None
    assert PairIn.model_validate({"input": "i", "output": "o", "contexts": None}).contexts is None
    assert PairIn.model_validate({"input": "i", "output": "o", "contexts": []}).contexts == []
