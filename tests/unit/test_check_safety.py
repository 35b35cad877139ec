"""Every check is a total function: for any text within the limits it returns a score in
[1, 5] and a reason that can be stored, and it never raises. The wrapper that guarantees this
covers checks added later too."""

from __future__ import annotations

import math

import pytest
from evalsvc.models.datasets import MAX_TEXT_CHARS
from evalsvc.scoring import checks
from evalsvc.scoring.checks import CHECKS, Score, parse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.pathological import DEFINITIONS, outputs

# Any code point, lone surrogates and control characters included.
ANY_CHARACTER = st.characters(codec=None, categories=None)

# Text shaped to hit parsers and patterns: brackets, digits, separators, quotes and escapes,
# "@" and refusal words, repeated into long runs.
PIECES = st.sampled_from(
    ["[", "]", "{", "}", '"', "\\", ",", ":", "9", "0", "-", ".", " ", "+", "(", ")", "@",
     "a", "x", "!", "\n", "\x00", "\ud800", "\U0001f600", "NaN", "1e999", "I'm sorry, but I "]
)  # fmt: skip
SHAPED = st.builds(
    lambda parts, repeat: ("".join(parts) * repeat)[:MAX_TEXT_CHARS],
    st.lists(PIECES, min_size=1, max_size=12),
    st.integers(min_value=1, max_value=5_000),
)
TEXTS = st.one_of(st.text(ANY_CHARACTER, max_size=300), SHAPED)


def assert_usable(score: Score) -> None:
    assert isinstance(score.value, float)
    assert 1.0 <= score.value <= 5.0 and math.isfinite(score.value)
    assert score.reason.strip()
    score.reason.encode("utf-8")  # storable: no lone surrogate


def test_the_definitions_cover_every_check() -> None:
    assert {d.split(":")[1] for d in DEFINITIONS} == set(CHECKS)


@pytest.mark.parametrize("definition", DEFINITIONS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(input_=TEXTS, output=TEXTS)
def test_every_check_scores_any_text(definition: str, input_: str, output: str) -> None:
    assert_usable(parse(definition)(input_, output))


@pytest.mark.parametrize("definition", DEFINITIONS)
def test_every_check_scores_the_pathological_outputs(definition: str) -> None:
    scorer = parse(definition)
    for name, output in outputs().items():
        assert len(output) <= MAX_TEXT_CHARS, name
        assert_usable(scorer("a question about the output", output))


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("[" * 5000, "output could not be read as JSON: it is nested 5000 levels deep"),
        ("9" * 5000, "output could not be read as JSON: it holds an integer of 5000 digits"),
        ("NaN", "output is not valid JSON: NaN is not a JSON value"),
        ("[Infinity]", "output is not valid JSON: Infinity is not a JSON value"),
        ('"a\x01b"', "output is not valid JSON: Invalid control character"),
        ('"\ud800"', "output is valid JSON"),
        ("[" * 64 + "]" * 64, "output is valid JSON"),
        ("[" * 65 + "]" * 65, "output could not be read as JSON: it is nested 65 levels deep"),
        ('["[[[[", "{{{{"]', "output is valid JSON"),
    ],
)
def test_json_is_read_with_bounds(output: str, reason: str) -> None:
    assert parse("check:json_valid")("", output).reason.startswith(reason)


class _Boom(RuntimeError):
    pass


def _raising(argument: str | None) -> checks.Scorer:
    def score(_input: str, output: str) -> Score:
        raise _Boom("secret output text")

    return score


def _odd(argument: str | None) -> checks.Scorer:
    values = {"nan": math.nan, "high": 9.0, "low": -3.0}

    def score(_input: str, output: str) -> Score:
        return Score(values.get(output, 3.0), "" if output == "blank" else "odd \ud800 reason")

    return score


def test_a_check_that_raises_scores_one_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(CHECKS, "future", _raising)
    score = parse("check:future")("in", "out")
    assert score == Score(
        1.0, "check:future could not be applied to this output (_Boom); it is scored as failing"
    )
    assert "secret" not in score.reason


def test_scores_are_clamped_and_reasons_made_storable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(CHECKS, "odd", _odd)
    scorer = parse("check:odd")
    assert scorer("", "nan") == Score(
        1.0, "check:odd gave no usable score; it is scored as failing"
    )
    assert scorer("", "high").value == 5.0
    assert scorer("", "low").value == 1.0
    assert scorer("", "blank").reason == "check:odd gave no reason"
    assert scorer("", "x").reason == "odd \ufffd reason"
