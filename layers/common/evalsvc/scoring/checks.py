"""Deterministic metrics: `check:<name>` or `check:<name>:<argument>`, scored with no model.

A check scores 5 when it passes and 1 when it fails; graded checks (input_overlap,
readability) map their 0..1 measure onto 1..5. Every score carries a reason a person can act
on. Definitions are parsed once, when a metrics set is created, so a bad name or argument is a
400 then and never a surprise during an evaluation.

Every check is total: `parse` wraps each scorer so that, for any text, it returns a score in
[1, 5] with a non-empty reason, and never raises. A check that fails unexpectedly scores 1 and
says so. Every check's time is linear in the text (tenant patterns run on RE2, JSON is read
with bounds, schemas are validated within a budget): bench/checks.py measures the worst case.

Two families read more of a pair than its input and output, and are scored through
`parse_for_pairs` only on pairs that have what they need (models.metric_sets.NEEDS): the
reference checks (E10, scoring.reference: `check:exact_match`, `token_f1`, `rouge_l`, `chrf`)
and the tool-call checks (E11, scoring.trajectory: `check:trajectory:strict`, `unordered`,
`subset`, `superset` and `check:tool_recall`). Neither takes an argument.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from evalsvc.core.observability import logger
from evalsvc.models.datasets import Pair
from evalsvc.models.metric_sets import CHECK_PREFIX
from evalsvc.models.metric_sets import is_check as is_check
from evalsvc.scoring import bounded_json
from evalsvc.scoring.patterns import PatternError, compile_pattern
from evalsvc.scoring.pii import find_pii
from evalsvc.scoring.text import flesch_reading_ease, storable, tokens, words

PREFIX = CHECK_PREFIX
PASS, FAIL = 5.0, 1.0


@dataclass(frozen=True, slots=True)
class Score:
    value: float
    reason: str


class CheckError(ValueError):
    """A check definition that cannot be used (unknown name or bad argument)."""


def graded(fraction: float) -> float:
    """0..1 onto the 1..5 scale."""
    return round(1.0 + 4.0 * min(1.0, max(0.0, fraction)), 4)


def _preview(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- the checks --------------------------------------------------------------------------------
# Each factory takes the argument text (None when absent), validates it, and returns the scorer.

Scorer = Callable[[str, str], Score]


def _no_argument(name: str, argument: str | None) -> None:
    if argument is not None:
        raise CheckError(f"check:{name} takes no argument")


def _required(name: str, argument: str | None, what: str) -> str:
    if argument is None or argument == "":
        raise CheckError(f"check:{name} needs {what}: write check:{name}:<{what}>")
    return argument


def _count(name: str, argument: str | None) -> int:
    text = _required(name, argument, "n")
    if not text.isdigit():
        raise CheckError(f"check:{name} needs a whole number, not {text!r}")
    return int(text)


def non_empty(argument: str | None) -> Scorer:
    _no_argument("non_empty", argument)

    def score(_input: str, output: str) -> Score:
        if output.strip():
            return Score(PASS, "output is not empty")
        return Score(FAIL, "output is empty" if not output else "output is only whitespace")

    return score


def json_valid(argument: str | None) -> Scorer:
    _no_argument("json_valid", argument)

    def score(_input: str, output: str) -> Score:
        try:
            bounded_json.loads(output)
        except bounded_json.NotJson as exc:
            return Score(FAIL, exc.reason)
        return Score(PASS, "output is valid JSON")

    return score


def json_schema_check(argument: str | None) -> Scorer:
    from evalsvc.scoring import json_schema

    text = _required("json_schema", argument, "JSON schema")
    try:
        schema = json_schema.compile_schema(text)
    except json_schema.SchemaError as exc:
        raise CheckError(f"check:json_schema: {exc}") from exc

    def score(_input: str, output: str) -> Score:
        try:
            instance = bounded_json.loads(output)
        except bounded_json.NotJson as exc:
            return Score(FAIL, exc.reason)
        try:
            error = schema.first_error(instance)
        except json_schema.TooMuchWork as exc:
            return Score(
                FAIL,
                f"the schema could not be checked on this output within its budget ({exc}): "
                "simplify nested anyOf/oneOf or shorten the output",
            )
        except RecursionError:
            return Score(
                FAIL,
                "the schema could not be checked on this output: its $ref chain does not end",
            )
        if error:
            return Score(FAIL, f"output does not match the schema: {error}")
        return Score(PASS, "output matches the schema")

    return score


def regex(argument: str | None) -> Scorer:
    text = _required("regex", argument, "pattern")
    try:
        pattern = compile_pattern(text)
    except PatternError as exc:
        raise CheckError(f"check:regex pattern is not valid: {exc}") from exc

    def score(_input: str, output: str) -> Score:
        if pattern.search(output):
            return Score(PASS, f"output matches /{_preview(text)}/")
        return Score(FAIL, f"output does not match /{_preview(text)}/")

    return score


def contains(argument: str | None) -> Scorer:
    needle = _required("contains", argument, "text")

    def score(_input: str, output: str) -> Score:
        if needle in output:
            return Score(PASS, f"output contains {_preview(needle)!r}")
        return Score(FAIL, f"output does not contain {_preview(needle)!r}")

    return score


def not_contains(argument: str | None) -> Scorer:
    needle = _required("not_contains", argument, "text")

    def score(_input: str, output: str) -> Score:
        if needle in output:
            return Score(FAIL, f"output contains {_preview(needle)!r}, which it must not")
        return Score(PASS, f"output does not contain {_preview(needle)!r}")

    return score


def max_chars(argument: str | None) -> Scorer:
    limit = _count("max_chars", argument)

    def score(_input: str, output: str) -> Score:
        if len(output) <= limit:
            return Score(PASS, f"output has {len(output)} characters, within {limit}")
        return Score(FAIL, f"output has {len(output)} characters, over the maximum {limit}")

    return score


def min_chars(argument: str | None) -> Scorer:
    limit = _count("min_chars", argument)

    def score(_input: str, output: str) -> Score:
        if len(output) >= limit:
            return Score(PASS, f"output has {len(output)} characters, at least {limit}")
        return Score(FAIL, f"output has {len(output)} characters, under the minimum {limit}")

    return score


def max_words(argument: str | None) -> Scorer:
    limit = _count("max_words", argument)

    def score(_input: str, output: str) -> Score:
        count = len(output.split())
        if count <= limit:
            return Score(PASS, f"output has {count} words, within {limit}")
        return Score(FAIL, f"output has {count} words, over the maximum {limit}")

    return score


_REFUSALS = re.compile(
    r"\b(?:I(?:'m| am) (?:sorry|afraid),? (?:but )?I (?:can(?:no|')t|am unable|won't)"
    r"|I (?:can(?:no|')t|am unable to|won't be able to|will not) "
    r"(?:help|assist|comply|provide|do that|answer)"
    r"|as an AI(?: language model)?,? I (?:can(?:no|')t|don't|do not|am not able)"
    r"|I must (?:decline|refuse)"
    r"|I'm not able to (?:help|assist|provide))",
    re.IGNORECASE,
)


def no_refusal(argument: str | None) -> Scorer:
    _no_argument("no_refusal", argument)

    def score(_input: str, output: str) -> Score:
        found = _REFUSALS.search(output)
        if found:
            return Score(FAIL, f"output refuses: {_preview(found.group(0), 60)!r}")
        return Score(PASS, "output does not refuse")

    return score


def no_pii(argument: str | None) -> Scorer:
    _no_argument("no_pii", argument)

    def score(_input: str, output: str) -> Score:
        found = find_pii(output)
        if found:
            return Score(FAIL, f"output contains {found}")
        return Score(PASS, "output contains no email address, phone or card number")

    return score


def input_overlap(argument: str | None) -> Scorer:
    _no_argument("input_overlap", argument)

    def score(input_: str, output: str) -> Score:
        output_tokens = set(tokens(output))
        if not output_tokens:
            return Score(FAIL, "output has no words to compare with the input")
        shared = output_tokens & set(tokens(input_))
        fraction = len(shared) / len(output_tokens)
        return Score(
            graded(fraction),
            f"{fraction:.0%} of the output's distinct words ({len(shared)} of "
            f"{len(output_tokens)}) appear in the input",
        )

    return score


def readability(argument: str | None) -> Scorer:
    _no_argument("readability", argument)

    def score(_input: str, output: str) -> Score:
        ease = flesch_reading_ease(output)
        if ease is None:
            return Score(FAIL, "output has no words to measure")
        band = (
            "very easy"
            if ease >= 90
            else "easy"
            if ease >= 70
            else "plain"
            if ease >= 60
            else "fairly difficult"
            if ease >= 50
            else "difficult"
            if ease >= 30
            else "very difficult"
        )
        return Score(
            graded(ease / 100.0),
            f"Flesch reading ease {ease:.1f} ({band}) over {len(words(output))} words",
        )

    return score


CHECKS: dict[str, Callable[[str | None], Scorer]] = {
    "non_empty": non_empty,
    "json_valid": json_valid,
    "json_schema": json_schema_check,
    "regex": regex,
    "contains": contains,
    "not_contains": not_contains,
    "max_chars": max_chars,
    "min_chars": min_chars,
    "max_words": max_words,
    "no_refusal": no_refusal,
    "no_pii": no_pii,
    "input_overlap": input_overlap,
    "readability": readability,
}


# E10: checks of the output against the pair's reference (scoring.reference), each scored only
# on pairs that have one (models.metric_sets.NEEDS).
REFERENCE_CHECKS = ("exact_match", "token_f1", "rouge_l", "chrf")

# E11: checks of the tools the app called against those it should have called
# (scoring.trajectory), each scored only on pairs with expected_tool_calls
# (models.metric_sets.NEEDS). `trajectory` is always followed by one of its modes.
TRAJECTORY_MODES = ("strict", "unordered", "subset", "superset")
TRAJECTORY_CHECKS = (*(f"trajectory:{mode}" for mode in TRAJECTORY_MODES), "tool_recall")
_TOOL_CALL_NAMES = ("trajectory", "tool_recall")

# A check of one pair, whatever it reads of it (input, output, reference, tool calls).
PairScorer = Callable[[Pair], Score]


def _name_and_argument(definition: str) -> tuple[str, str | None]:
    body = definition[len(PREFIX) :]
    name, separator, argument = body.partition(":")
    if name not in CHECKS and name not in REFERENCE_CHECKS and name not in _TOOL_CALL_NAMES:
        known = ", ".join(sorted((*CHECKS, *REFERENCE_CHECKS, *TRAJECTORY_CHECKS)))
        raise CheckError(
            f"unknown check {name!r} in {_preview(definition, 60)!r}; known checks: {known}"
        )
    return name, argument if separator else None


def _tool_call_check(name: str, argument: str | None) -> str:
    """The name of a tool-call check after `check:` (a key of scoring.trajectory.BY_NAME):
    `trajectory:<mode>` or `tool_recall`; CheckError for an unknown mode or an argument."""
    if name == "tool_recall":
        _no_argument(name, argument)
        return name
    known = ", ".join(f"check:trajectory:{mode}" for mode in TRAJECTORY_MODES)
    if argument is None or argument == "":
        raise CheckError(f"check:trajectory needs a mode: write one of {known}")
    mode, separator, rest = argument.partition(":")
    if mode not in TRAJECTORY_MODES:
        raise CheckError(f"unknown trajectory check {_preview(mode)!r}; known: {known}")
    _no_argument(f"trajectory:{mode}", rest if separator else None)
    return f"trajectory:{mode}"


def parse(definition: str) -> Scorer:
    """The scorer of a `check:` definition of the input and output; CheckError naming what is
    wrong otherwise (a reference or tool-call check is parse_for_pairs')."""
    name, argument = _name_and_argument(definition)
    if name in REFERENCE_CHECKS:
        raise CheckError(f"check:{name} compares with a reference: score it on whole pairs")
    if name in _TOOL_CALL_NAMES:
        check = _tool_call_check(name, argument)
        raise CheckError(f"check:{check} compares tool calls: score it on whole pairs")
    return total(name, CHECKS[name](argument))


def parse_for_pairs(definition: str) -> PairScorer:
    """The scorer of any `check:` definition, given whole pairs; CheckError naming what is wrong
    otherwise. A reference check is called only for pairs with a reference, a tool-call check
    only for pairs with expected_tool_calls (a pair without tool_calls made none)."""
    name, argument = _name_and_argument(definition)
    if name in REFERENCE_CHECKS:
        _no_argument(name, argument)
        from evalsvc.scoring import reference

        compare = total(name, reference.BY_NAME[name])

        def against_reference(pair: Pair) -> Score:
            return compare(pair.output, pair.reference or "")

        return against_reference
    if name in _TOOL_CALL_NAMES:
        check = _tool_call_check(name, argument)
        from evalsvc.scoring import trajectory

        compare_calls = total(check, trajectory.BY_NAME[check])

        def against_expected_calls(pair: Pair) -> Score:
            return compare_calls(pair.tool_calls or [], pair.expected_tool_calls or [])

        return against_expected_calls
    scorer = total(name, CHECKS[name](argument))

    def of_pair(pair: Pair) -> Score:
        return scorer(pair.input, pair.output)

    return of_pair


# What a scorer reads: (input, output), (output, reference) or (calls made, calls expected).
_First = TypeVar("_First")
_Second = TypeVar("_Second")


def total(
    name: str, scorer: Callable[[_First, _Second], Score]
) -> Callable[[_First, _Second], Score]:
    """`scorer` made total: whatever it reads, a score in [1, 5] and a non-empty reason that can
    be stored (a lone surrogate in it becomes U+FFFD). A scorer that raises scores 1, and the
    reason says the check could not be applied; the error is logged without the text."""

    def score(first: _First, second: _Second) -> Score:
        try:
            result = scorer(first, second)
            value, reason = float(result.value), str(result.reason)
        except Exception as exc:
            logger.warning("check raised", extra={"check": name, "error": exc.__class__.__name__})
            return Score(
                FAIL,
                f"check:{name} could not be applied to this output "
                f"({exc.__class__.__name__}); it is scored as failing",
            )
        if not math.isfinite(value):
            return Score(FAIL, f"check:{name} gave no usable score; it is scored as failing")
        reason = storable(reason).strip() or f"check:{name} gave no reason"
        return Score(min(PASS, max(FAIL, value)), reason)

    return score
