"""The pairwise judge's prompt and the reading of its answers (scoring.preferences)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from evalsvc.scoring import preferences
from evalsvc.scoring.llm import InvalidAnswer
from evalsvc.scoring.llm.provider import schema_problem
from evalsvc.scoring.preferences import WINNERS, cache_key, preference_from_object, winner_of
from hypothesis import given, settings
from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ({"reason": "A is kinder.", "winner": "first"}, (1, "A is kinder.")),
        ({"reason": " Both fine. ", "winner": "tie"}, (0, "Both fine.")),
        ({"reason": "B cites it.", "winner": " Second "}, (2, "B cites it.")),
    ],
)
def test_an_answer_is_a_winner_and_a_reason(
    answer: dict[str, Any], expected: tuple[int, str]
) -> None:
    assert preference_from_object(answer) == expected
    assert winner_of(expected[0]) == answer["winner"].strip().lower()


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ([], "not a JSON object"),
        ({"reason": "x", "winner": "both"}, "winner must be"),
        ({"reason": "x", "winner": 1}, "winner must be"),
        ({"reason": "x"}, "winner must be"),
        ({"reason": "   ", "winner": "first"}, "reason is missing"),
        ({"winner": "first"}, "reason is missing"),
    ],
)
def test_anything_else_is_an_unusable_answer_saying_why(answer: Any, says: str) -> None:
    with pytest.raises(InvalidAnswer, match=says):
        preference_from_object(answer)


@settings(max_examples=300, deadline=None)
@given(value=JSON)
def test_any_decoded_json_is_read_or_refused_never_crashes(value: Any) -> None:
    try:
        code, reason = preference_from_object(value)
    except InvalidAnswer:
        return
    assert WINNERS[code] in WINNERS and reason == reason.strip() and reason


def test_the_schema_admits_exactly_the_three_winners() -> None:
    assert schema_problem(preferences.SCHEMA, {"reason": "r", "winner": "tie"}) is None
    assert schema_problem(preferences.SCHEMA, {"reason": "r", "winner": "draw"}) is not None
    assert schema_problem(preferences.SCHEMA, {"reason": "r", "winner": "first", "x": 1})


def test_the_order_and_the_prompt_version_are_part_of_the_cache_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    one = cache_key("openai:m", "Which is kinder?", "hi", "A", "B")
    assert one != cache_key("openai:m", "Which is kinder?", "hi", "B", "A")
    assert one != cache_key("openai:other", "Which is kinder?", "hi", "A", "B")
    monkeypatch.setattr(preferences, "PROMPT_VERSION", "pairwise-v2")
    assert one != cache_key("openai:m", "Which is kinder?", "hi", "A", "B")


def test_the_user_message_holds_every_text_in_its_own_tag() -> None:
    message = preferences.user_message("Q?", "the input", "out one", "out two")
    for tag, text in (
        ("question", "Q?"),
        ("input", "the input"),
        ("first_output", "out one"),
        ("second_output", "out two"),
    ):
        assert f"<{tag}>\n{text}\n</{tag}>" in message
    assert json.dumps("first") in message and json.dumps("tie") in message
