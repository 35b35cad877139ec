"""The judge prompt (versioned) and the parsing of its answers."""

from __future__ import annotations

import json
import re
from typing import Any

PROMPT_VERSION = "judge-v1"

SYSTEM = (
    "You are a meticulous evaluator of an AI assistant's answers. You are given a question "
    "about one answer, the assistant's system prompt, the user's input and the assistant's "
    "output. Judge only what the question asks. First explain your reasoning in one to three "
    "sentences, citing the output; then give a score from 1 to 5, where 1 means clearly no, "
    "3 means partly or unclear, and 5 means clearly yes."
)

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "description": "Why, in one to three sentences"},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
    },
    "required": ["reason", "score"],
    "additionalProperties": False,
}


def user_message(question: str, system_prompt: str, input_: str, output: str) -> str:
    return (
        f"<question>\n{question}\n</question>\n\n"
        f"<system_prompt>\n{system_prompt or '(none)'}\n</system_prompt>\n\n"
        f"<input>\n{input_}\n</input>\n\n"
        f"<output>\n{output}\n</output>\n\n"
        'Answer with JSON only: {"reason": "<your reasoning>", "score": <1-5>}'
    )


class InvalidVerdict(ValueError):
    """The judge's answer is not a reason and a score from 1 to 5."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def _objects(text: str) -> list[Any]:
    """Every JSON object that can be decoded from `text`, in order."""
    decoder = json.JSONDecoder()
    found = []
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        found.append(value)
    return found


def verdict_from_object(value: Any) -> tuple[int, str]:
    if not isinstance(value, dict):
        raise InvalidVerdict("the answer is not a JSON object")
    score, reason = value.get("score"), value.get("reason")
    if isinstance(score, str) and score.strip().isdigit():
        score = int(score.strip())
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5:
        raise InvalidVerdict(f"score must be an integer from 1 to 5, not {score!r}")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidVerdict("reason is missing or empty")
    return score, reason.strip()


def parse_verdict(text: str) -> tuple[int, str]:
    """A (score, reason) from a judge's text answer: plain JSON, JSON in a code fence, or JSON
    with text around it."""
    candidates: list[Any] = []
    for fenced in _FENCE.findall(text):
        candidates.extend(_objects(fenced))
    candidates.extend(_objects(text))
    problem = "no JSON object in the answer"
    for candidate in candidates:
        try:
            return verdict_from_object(candidate)
        except InvalidVerdict as exc:
            problem = str(exc)
    raise InvalidVerdict(problem)
