"""Metric questions from a system prompt: one yes/no question per requirement, by the LLM when
one is configured, otherwise by a deterministic extraction of the prompt's requirement
sentences."""

from __future__ import annotations

import math
import re
from typing import Any

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import GenerationFailed, InvalidInput, OutOfTime
from evalsvc.core.observability import logger
from evalsvc.logic import spending
from evalsvc.logic.metric_set_create import create_metrics_set
from evalsvc.models.api_keys import Identity
from evalsvc.models.metric_sets import MAX_DEFINITION_CHARS, MAX_DEFINITIONS, MetricsSet
from evalsvc.scoring.llm import LLM, InvalidAnswer, LLMFailed, LLMOutOfTime, configured_llm
from evalsvc.spending.meter import Usage, guard

_REQUIREMENT = re.compile(
    r"\b(must|should|shall|always|never|do not|don't|does not|avoid|ensure|make sure|only|"
    r"required?|need to|needs to|cannot|can't|no more than|at most|at least|limit|keep|"
    r"prefer|refuse|include|respond|answer|use)\b",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s*")

# Time kept back from the request's deadline to store the metrics set and answer.
STORING_SECONDS = 2.0
# The most tokens the questions may take (MAX_DEFINITIONS short questions, about 20 tokens
# each), and what they are expected to. More only lets a looping model run on: SmolLM2-135M,
# forced into the schema by llama-server, wrote one question until the request's time ran out.
QUESTIONS_MAX_TOKENS = 1024
EXPECTED_QUESTIONS_TOKENS = 400

# Short, with one example of the answer: a small model (SmolLM2-135M, tests/real_llm) follows an
# example where it loses itself in a longer instruction (it looped until max_tokens).
SYSTEM = (
    "You write yes/no evaluation questions. For each requirement in a system prompt, write one "
    "short question that is answered yes when an answer meets it. No duplicates, nothing the "
    f"prompt does not ask for, at most {MAX_DEFINITIONS} questions."
)
EXAMPLE = (
    'Example. System prompt: "Answer in French. Keep answers under 50 words."\n'
    'Answer: {"questions": ["Is the answer in French?", "Is the answer under 50 words?"]}'
)


def questions_request(system_prompt: str) -> str:
    """The user message that asks for the questions of `system_prompt`."""
    return f'{EXAMPLE}\n\nSystem prompt: "{system_prompt}"\nAnswer:'


SCHEMA: dict[str, Any] = {
    "type": "object",
    # At least one: a server that forces the answer by grammar lets a small model answer an
    # empty list for a short prompt otherwise. No maxItems: more than MAX_DEFINITIONS are
    # cut, not refused.
    "properties": {
        "questions": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string"},
        }
    },
    "required": ["questions"],
    "additionalProperties": False,
}


def requirement_sentences(system_prompt: str) -> list[str]:
    """The sentences (and bullet lines) of the prompt that state a requirement, in order."""
    sentences = []
    for piece in _SPLIT.split(system_prompt):
        sentence = _BULLET.sub("", piece).strip()
        if len(sentence) >= 3 and _REQUIREMENT.search(sentence):
            sentences.append(sentence)
    return list(dict.fromkeys(sentences))


def question_for(sentence: str) -> str:
    text = sentence.rstrip(" .;:")
    question = f'Does the answer follow this instruction: "{text}"?'
    if len(question) > MAX_DEFINITION_CHARS:
        question = (
            f'Does the answer follow this instruction: "{text[: MAX_DEFINITION_CHARS - 60]}..."?'
        )
    return question


def deterministic_questions(system_prompt: str) -> list[str]:
    return [question_for(s) for s in requirement_sentences(system_prompt)][:MAX_DEFINITIONS]


def _accept(value: Any) -> list[str]:
    if not isinstance(value, dict) or not isinstance(value.get("questions"), list):
        raise InvalidAnswer("expected an object with a list of questions")
    questions = [q.strip() for q in value["questions"] if isinstance(q, str) and q.strip()]
    questions = [q for q in dict.fromkeys(questions) if len(q) <= MAX_DEFINITION_CHARS]
    if not questions:
        raise InvalidAnswer("no usable question")
    return questions[:MAX_DEFINITIONS]


def llm_questions(llm: LLM, system_prompt: str) -> list[str]:
    user = questions_request(system_prompt)
    guard(
        llm.bound(
            SYSTEM,
            user,
            SCHEMA,
            "record_questions",
            QUESTIONS_MAX_TOKENS,
            expected_output=EXPECTED_QUESTIONS_TOKENS,
        )
    )
    try:
        return llm.ask(
            SYSTEM, user, SCHEMA, "record_questions", _accept, max_tokens=QUESTIONS_MAX_TOKENS
        )
    except LLMOutOfTime as exc:
        raise OutOfTime(
            f"the LLM gave no usable questions within the request's time limit ({exc.problem}); "
            "nothing was stored: retry",
            retry_after_seconds=max(1, math.ceil(exc.retry_after or 1)),
        ) from exc
    except LLMFailed as exc:
        raise GenerationFailed(
            f"the LLM gave no usable questions after {exc.attempts} attempts: {exc.problem}; "
            "nothing was stored"
        ) from exc


def questions_from_prompt(
    identity: Identity, system_prompt: str, deadline: Deadline
) -> tuple[MetricsSet, Usage]:
    """A new metrics set of yes/no questions for the requirements of `system_prompt`, the LLM's
    before `deadline` (less the time to store them); and the LLM usage it took."""
    if not system_prompt.strip():
        raise InvalidInput("system_prompt is empty: send the prompt to derive questions from")
    with spending.session(identity.tenant, "POST /questions", deadline.left()) as spend:
        metrics_set = _questions(identity, system_prompt, deadline)
    return metrics_set, spend.usage()


def _questions(identity: Identity, system_prompt: str, deadline: Deadline) -> MetricsSet:
    llm = configured_llm(deadline.earlier(STORING_SECONDS))
    questions = llm_questions(llm, system_prompt) if llm else deterministic_questions(system_prompt)
    if not questions:
        raise InvalidInput(
            "no requirement found in the system prompt (sentences with must, should, always, "
            "never, avoid, ensure…); define metrics yourself with POST /specify_questions"
        )
    logger.info(
        "questions derived", extra={"count": len(questions), "by": "llm" if llm else "rules"}
    )
    return create_metrics_set(identity, questions, system_prompt=system_prompt)
