"""The judge prompt (versioned) and the parsing of its answers."""

from __future__ import annotations

from typing import Any

from evalsvc.scoring.llm import InvalidAnswer, json_objects

PROMPT_VERSION = "judge-v1"

# The most tokens an answer's reason takes: one to three sentences, with room to spare.
REASON_MAX_TOKENS = 224


def answer_max_tokens(skeleton: str) -> int:
    """The most tokens an answer of `skeleton`'s shape takes with its reason written in: the
    skeleton's bytes (a token covers at least one byte) and REASON_MAX_TOKENS. What a call
    asks for at most (max_tokens), so that what it can cost is bounded by what its schema
    needs; an answer cut short there is unusable, and asked again."""
    return len(skeleton.encode()) + REASON_MAX_TOKENS


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
        # An enum, not minimum/maximum: servers that force the answer by grammar
        # (llama-cpp-python's json_object with a schema) hold it to an enum but not to a range.
        "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
    },
    "required": ["reason", "score"],
    "additionalProperties": False,
}
# Every verdict call asks for at most this many tokens.
VERDICT_MAX_TOKENS = answer_max_tokens('{"reason": "", "score": 5}')


def user_message(question: str, system_prompt: str, input_: str, output: str) -> str:
    return (
        f"<question>\n{question}\n</question>\n\n"
        f"<system_prompt>\n{system_prompt or '(none)'}\n</system_prompt>\n\n"
        f"<input>\n{input_}\n</input>\n\n"
        f"<output>\n{output}\n</output>\n\n"
        'Answer with JSON only: {"reason": "<your reasoning>", "score": <1-5>}'
    )


def verdict_from_object(value: Any) -> tuple[int, str]:
    """(score, reason) from a decoded answer; InvalidAnswer unless it is a reason and an
    integer score from 1 to 5."""
    if not isinstance(value, dict):
        raise InvalidAnswer("the answer is not a JSON object")
    score, reason = value.get("score"), value.get("reason")
    if isinstance(score, str) and score.strip().isdigit():
        score = int(score.strip())
    if isinstance(score, float) and score.is_integer():
        score = int(score)
    if isinstance(score, bool) or not isinstance(score, int) or not 1 <= score <= 5:
        raise InvalidAnswer(f"score must be an integer from 1 to 5, not {score!r}")
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidAnswer("reason is missing or empty")
    return score, reason.strip()


def parse_verdict(text: str) -> tuple[int, str]:
    """A (score, reason) from a text answer: plain JSON, JSON in a code fence, or JSON with
    text around it."""
    problem = "no JSON object in the answer"
    for candidate in json_objects(text):
        try:
            return verdict_from_object(candidate)
        except InvalidAnswer as exc:
            problem = str(exc)
    raise InvalidAnswer(problem)
