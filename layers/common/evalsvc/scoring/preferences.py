"""The pairwise judge prompt (E5, versioned) and the parsing of its answers: which of two
outputs for the same input better meets a criterion.

The judge sees the input, the two outputs labelled "first" and "second", and the question, and
answers `{"reason": ..., "winner": "first" | "second" | "tie"}`. Whoever asks puts each
comparison to it in both orders, so that a preference for a position cancels (logic, not
here). An answer is cached like a verdict (storage.judge_cache keeps an integer and a reason):
the winner as its index in WINNERS.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from evalsvc.scoring.llm import InvalidAnswer
from evalsvc.scoring.verdicts import answer_max_tokens

# Changes whenever SYSTEM, the schema or user_message changes: cached answers to another
# prompt are not reused.
PROMPT_VERSION = "pairwise-v1"
TOOL_NAME = "record_preference"
# The most tokens an answer may take: every pairwise call asks for at most this many.
MAX_TOKENS = answer_max_tokens('{"reason": "", "winner": "second"}')
# What an answer is expected to take (the estimate's expected cost, not its bound).
EXPECTED_TOKENS = 120
# The winners, cached as their index.
WINNERS = ("tie", "first", "second")

SYSTEM = (
    "You compare two answers an AI assistant gave to the same user input. You are given a "
    "question (the criterion), the input, and the two outputs, labelled first and second. "
    "Judge only what the question asks, on the outputs' content: the order they are shown in "
    "means nothing, and neither length nor style is a merit unless the question asks for it. "
    "First explain your reasoning in one to three sentences, citing the outputs; then say "
    'which output is better: "first", "second", or "tie" when neither is better.'
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "description": "Why, in one to three sentences"},
        "winner": {"type": "string", "enum": ["first", "second", "tie"]},
    },
    "required": ["reason", "winner"],
    "additionalProperties": False,
}


def user_message(question: str, input_: str, first: str, second: str) -> str:
    return (
        f"<question>\n{question}\n</question>\n\n"
        f"<input>\n{input_}\n</input>\n\n"
        f"<first_output>\n{first}\n</first_output>\n\n"
        f"<second_output>\n{second}\n</second_output>\n\n"
        'Answer with JSON only: {"reason": "<your reasoning>", '
        '"winner": "first" | "second" | "tie"}'
    )


def cache_key(provider: str, question: str, input_: str, first: str, second: str) -> str:
    """The judge cache's key of one comparison in one order (the order is part of it)."""
    material = json.dumps([provider, PROMPT_VERSION, question, input_, first, second])
    return hashlib.sha256(material.encode()).hexdigest()


def preference_from_object(value: Any) -> tuple[int, str]:
    """(winner's index in WINNERS, reason) from a decoded answer; InvalidAnswer unless it is a
    reason and one of the three winners (letter case and spaces around it are forgiven)."""
    if not isinstance(value, dict):
        raise InvalidAnswer("the answer is not a JSON object")
    winner, reason = value.get("winner"), value.get("reason")
    said = winner.strip().lower() if isinstance(winner, str) else None
    if said not in WINNERS:
        raise InvalidAnswer(f'winner must be "first", "second" or "tie", not {winner!r:.60}')
    if not isinstance(reason, str) or not reason.strip():
        raise InvalidAnswer("reason is missing or empty")
    return WINNERS.index(said), reason.strip()


def winner_of(code: int) -> str:
    """The winner a cached answer holds ("tie", "first" or "second")."""
    if not 0 <= code < len(WINNERS):
        raise ValueError(f"no winner is cached as {code}")
    return WINNERS[code]
