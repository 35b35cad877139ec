"""Parsing a judge's answer: JSON, fenced JSON, JSON inside text; refusing anything else."""

from __future__ import annotations

import pytest
from evalsvc.scoring.llm import InvalidAnswer
from evalsvc.scoring.verdicts import PROMPT_VERSION, parse_verdict, user_message


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('{"reason": "Clear.", "score": 5}', (5, "Clear.")),
        ('{"score": 1, "reason": "No."}', (1, "No.")),
        ('```json\n{"reason": "Fenced.", "score": 3}\n```', (3, "Fenced.")),
        ('Here you go: {"reason": "Inline.", "score": 2} -- done', (2, "Inline.")),
        ('{"reason": "Float score.", "score": 4.0}', (4, "Float score.")),
        ('{"reason": "String score.", "score": "4"}', (4, "String score.")),
        ('{"bad": 1} then {"reason": "Second object.", "score": 5}', (5, "Second object.")),
        ('{"reason": "Nested {braces} in text.", "score": 4}', (4, "Nested {braces} in text.")),
    ],
)
def test_answers_that_parse(text: str, verdict: tuple[int, str]) -> None:
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Looks good to me.", "no JSON object"),
        ('{"reason": "x", "score": 0}', "score must be an integer from 1 to 5"),
        ('{"reason": "x", "score": 6}', "score must be an integer from 1 to 5"),
        ('{"reason": "x", "score": true}', "score must be an integer"),
        ('{"reason": "x", "score": 3.5}', "score must be an integer"),
        ('{"reason": "", "score": 3}', "reason is missing or empty"),
        ('{"score": 3}', "reason is missing"),
        ("[1, 2]", "no JSON object"),
    ],
)
def test_answers_that_do_not(text: str, problem: str) -> None:
    with pytest.raises(InvalidAnswer, match=problem):
        parse_verdict(text)


def test_prompt_shows_question_system_prompt_input_and_output_and_is_versioned() -> None:
    message = user_message("Is it kind?", "", "hello", "go away")
    assert "<question>\nIs it kind?\n</question>" in message
    assert "<system_prompt>\n(none)\n</system_prompt>" in message
    assert message.index("<input>") < message.index("<output>")
    assert '"reason"' in message and message.index('"reason"') < message.index('"score"')
    assert PROMPT_VERSION == "judge-v1"
