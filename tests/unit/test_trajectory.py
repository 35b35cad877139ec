"""The tool-call checks (scoring/trajectory.py, E11): each rule on the contract's examples,
arguments equal as JSON values and never by Python's ==, not applicable without
expected_tool_calls, the rules against an oracle that matches calls by removing them from a
list, the relations between the rules, reasons bounded whatever the tool names, and the
definitions a metrics set refuses."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from evalsvc.core.errors import InvalidInput
from evalsvc.logic.improve_prompt import requirement_for
from evalsvc.logic.metric_set_create import validate_definitions
from evalsvc.logic.scored_pairs import score_pairs
from evalsvc.models import conversations
from evalsvc.models.conversations import MAX_TOOL_CALLS, MAX_TOOL_NAME_CHARS, ToolCall
from evalsvc.models.datasets import Pair
from evalsvc.models.evaluations import MAX_REASON_CHARS
from evalsvc.models.metric_sets import NEEDS, missing
from evalsvc.scoring.checks import (
    TRAJECTORY_CHECKS,
    CheckError,
    Score,
    parse,
    parse_for_pairs,
)
from evalsvc.scoring.metric import scorers_for
from evalsvc.scoring.trajectory import (
    BY_NAME,
    REASON_MAX_CHARS,
    strict,
    subset,
    superset,
    tool_recall,
    unordered,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

Metric = Callable[[Sequence[ToolCall], Sequence[ToolCall]], Score]
METRICS: list[Metric] = [strict, unordered, subset, superset, tool_recall]
DEFINITIONS = [f"check:{name}" for name in TRAJECTORY_CHECKS]


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name, arguments)


SEARCH = call("search", q="weather", days=3)
FETCH = call("fetch", url="https://example.org")
BOOK = call("book", room=12, nights=2)


def assert_usable(score: Score) -> None:
    assert isinstance(score.value, float)
    assert math.isfinite(score.value) and 1.0 <= score.value <= 5.0
    assert score.reason.strip()
    assert len(score.reason) <= MAX_REASON_CHARS
    score.reason.encode("utf-8")  # storable: no lone surrogate


def values(made: Sequence[ToolCall], expected: Sequence[ToolCall]) -> list[float]:
    return [metric(made, expected).value for metric in METRICS]


# ---- the rules on the contract's examples -------------------------------------------------------


@pytest.mark.parametrize(
    ("made", "expected", "scores"),
    [
        # strict, unordered, subset, superset, tool_recall
        ([SEARCH, FETCH], [SEARCH, FETCH], [5, 5, 5, 5, 5]),
        # Reordered: the same multiset, not the same sequence.
        ([FETCH, SEARCH], [SEARCH, FETCH], [1, 5, 5, 5, 5]),
        # A call missing: a subset, not a superset; recall 1 of 2.
        ([SEARCH], [SEARCH, FETCH], [1, 1, 5, 1, 3]),
        # A call too many: a superset, not a subset; every expected call made.
        ([SEARCH, FETCH, BOOK], [SEARCH, FETCH], [1, 1, 1, 5, 5]),
        # One call for another: neither.
        ([SEARCH, BOOK], [SEARCH, FETCH], [1, 1, 1, 1, 3]),
        # Nothing made, nothing expected: an empty trajectory matches an empty one.
        ([], [], [5, 5, 5, 5, 5]),
        # Nothing expected, something made: recall 5 (none expected), strict only when none made.
        ([SEARCH], [], [1, 1, 1, 5, 5]),
        # Something expected, nothing made.
        ([], [SEARCH, FETCH, BOOK], [1, 1, 5, 1, 1]),
    ],
)
def test_each_rule(made: list[ToolCall], expected: list[ToolCall], scores: list[float]) -> None:
    assert values(made, expected) == scores


def test_duplicates_count_in_the_multisets() -> None:
    # Twice made, once expected: not the same multiset, and the second search matches no
    # distinct expected call.
    assert values([SEARCH, SEARCH], [SEARCH]) == [1, 1, 1, 5, 5]
    # Once made, twice expected: one of the two expected searches is matched.
    assert values([SEARCH], [SEARCH, SEARCH]) == [1, 1, 5, 1, 3]
    # The same calls as many times each, in another order.
    assert values([SEARCH, FETCH, SEARCH], [SEARCH, SEARCH, FETCH]) == [1, 5, 5, 5, 5]
    # As many calls, but not the same counts: equal as sets, not as multisets.
    assert values([SEARCH, SEARCH, FETCH], [SEARCH, FETCH, FETCH]) == [1, 1, 1, 1, 3.6667]


def test_subset_and_superset_with_repeats() -> None:
    expected = [SEARCH, SEARCH, FETCH]
    assert subset([SEARCH, SEARCH], expected).value == 5
    assert subset([SEARCH, SEARCH, SEARCH], expected).value == 1
    assert superset([SEARCH, FETCH, SEARCH, BOOK], expected).value == 5
    assert superset([SEARCH, FETCH, BOOK, BOOK], expected).value == 1


@pytest.mark.parametrize(
    ("made", "expected", "value", "reason"),
    [
        ([], [SEARCH, FETCH, BOOK, BOOK], 1.0, "0 of 4 expected calls made"),
        ([BOOK], [SEARCH, FETCH, BOOK, BOOK], 2.0, "1 of 4 expected calls made"),
        ([BOOK, FETCH, BOOK], [SEARCH, FETCH, BOOK, BOOK], 4.0, "3 of 4 expected calls made"),
        ([FETCH, FETCH, FETCH], [SEARCH, FETCH, BOOK], 1 + 4 / 3, "1 of 3 expected calls made"),
        ([SEARCH, BOOK], [SEARCH, FETCH, BOOK], 1 + 8 / 3, "2 of 3 expected calls made"),
        ([BOOK, SEARCH, FETCH, FETCH], [SEARCH, FETCH, BOOK], 5.0, "3 of 3 expected calls made"),
        ([SEARCH], [], 5.0, "no call was expected"),
        ([], [], 5.0, "no call was expected"),
    ],
)
def test_tool_recall_fractions(
    made: list[ToolCall], expected: list[ToolCall], value: float, reason: str
) -> None:
    score = tool_recall(made, expected)
    assert score.value == pytest.approx(value, abs=1e-4)
    assert reason in score.reason


def test_tool_recall_is_5_only_when_every_expected_call_is_made_however_many() -> None:
    # (n - 1) / n rounded to 4 decimals would be 1 from n = 80,000.
    many = [call("f", i=i) for i in range(100_000)]
    score = tool_recall(many[1:], many)
    assert 4.999 < score.value < 5.0
    assert "99999 of 100000 expected calls made" in score.reason


def test_an_empty_expected_list_is_a_trajectory_of_no_calls() -> None:
    assert strict([], []).value == 5
    assert strict([SEARCH], []).value == 1
    assert unordered([SEARCH], []).value == 1
    assert tool_recall([SEARCH], []).value == 5
    assert tool_recall([], []).value == 5


# ---- arguments equal as JSON values -------------------------------------------------------------


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        (
            {"a": {"x": [1, {"p": None, "q": "s"}], "y": 2}},
            {"a": {"y": 2, "x": [1, {"q": "s", "p": None}]}},
        ),
        ({"n": 1}, {"n": 1.0}),
        ({"n": [0, -3, 10**20]}, {"n": [0.0, -3.0, 1e20]}),
        ({"n": 2.5}, {"n": 2.5}),
        ({}, {}),
        ({"é": "ü"}, {"é": "ü"}),
    ],
)
def test_equal_arguments_match(first: dict[str, Any], second: dict[str, Any]) -> None:
    assert values([ToolCall("f", first)], [ToolCall("f", second)]) == [5, 5, 5, 5, 5]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"flag": True}, {"flag": 1}),
        ({"flag": False}, {"flag": 0}),
        ({"flag": True}, {"flag": 1.0}),
        ({"n": "1"}, {"n": 1}),
        ({"n": None}, {}),
        ({"n": None}, {"n": 0}),
        ({"n": [1, 2]}, {"n": [2, 1]}),
        ({"n": 1.5}, {"n": 1}),
        ({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}),
        ({"s": "a"}, {"s": "A"}),
    ],
)
def test_unequal_arguments_do_not_match(first: dict[str, Any], second: dict[str, Any]) -> None:
    # Python's == takes True for 1 and 1 for 1.0: the checks never use it.
    assert values([ToolCall("f", first)], [ToolCall("f", second)]) == [1, 1, 1, 1, 1]


def test_names_must_be_equal() -> None:
    assert values([call("Search", q=1)], [call("search", q=1)]) == [1, 1, 1, 1, 1]


def test_each_calls_key_is_computed_once_for_every_check_of_a_pair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    computed: list[object] = []
    canonical = conversations.canonical_json

    def counted(value: Any) -> str:
        computed.append(value)
        return canonical(value)

    monkeypatch.setattr(conversations, "canonical_json", counted)
    made = [call("a", i=1), call("b", i=2), call("a", i=1)]
    expected = [call("a", i=1), call("b", i=3)]
    pair = Pair("p", "q", "o", tool_calls=made, expected_tool_calls=expected)
    for definition in DEFINITIONS:
        parse_for_pairs(definition)(pair)
    assert len(computed) == len(made) + len(expected)


# ---- through the pairs: applicable or not -------------------------------------------------------


def test_a_pair_without_expected_tool_calls_is_not_applicable() -> None:
    bare = Pair("p", "q", "o", tool_calls=[SEARCH])
    expects_none = Pair("n", "q", "o", tool_calls=[SEARCH], expected_tool_calls=[])
    for definition in DEFINITIONS:
        assert NEEDS[definition] == ("expected_tool_calls",)
        assert missing(definition, bare) == "expected_tool_calls"
        # An empty list expects no call: the pair is applicable.
        assert missing(definition, expects_none) is None

    definitions = ["check:non_empty", *DEFINITIONS]
    metrics = scorers_for(definitions, judge=None)
    pairs = [
        bare,
        expects_none,
        Pair("m", "q", "o", expected_tool_calls=[SEARCH]),  # tool_calls absent: none made
        Pair("e", "q", "o"),
        Pair("r", "q", "o", tool_calls=[FETCH, SEARCH], expected_tool_calls=[SEARCH, FETCH]),
    ]
    scoring = score_pairs(metrics, pairs, "")

    assert scoring.complete
    by_id = {p.pair_id: p for p in scoring.scored}
    assert by_id["p"].scores == [5.0, None, None, None, None, None]
    assert by_id["p"].reasons[1] == (
        "not applicable: check:trajectory:strict needs expected_tool_calls, and the pair has none"
    )
    assert by_id["p"].reasons[5] == (
        "not applicable: check:tool_recall needs expected_tool_calls, and the pair has none"
    )
    assert by_id["p"].scores == by_id["e"].scores
    # None expected, one made: strict, unordered and subset fail; superset and recall pass.
    assert by_id["n"].scores == [5.0, 1, 1, 1, 5, 5]
    # tool_calls absent is []: one call expected and none made.
    assert by_id["m"].scores == [5.0, 1, 1, 5, 1, 1]
    assert by_id["r"].scores == [5.0, 1, 5, 5, 5, 5]


def test_a_missing_tool_calls_is_no_call() -> None:
    absent = Pair("p", "q", "o", expected_tool_calls=[])
    for definition in DEFINITIONS:
        assert parse_for_pairs(definition)(absent).value == 5
    expects_one = Pair("p", "q", "o", expected_tool_calls=[SEARCH])
    recall = parse_for_pairs("check:tool_recall")(expects_one)
    assert recall.value == 1
    assert "0 of 1 expected calls made" in recall.reason


# ---- definitions ------------------------------------------------------------------------------


def test_the_checks_module_and_the_trajectory_module_name_the_same_checks() -> None:
    assert tuple(BY_NAME) == TRAJECTORY_CHECKS
    assert set(DEFINITIONS) <= set(NEEDS)
    assert REASON_MAX_CHARS == MAX_REASON_CHARS


def test_a_metrics_set_takes_the_five_checks() -> None:
    assert validate_definitions([f" {d} " for d in DEFINITIONS]) == DEFINITIONS


@pytest.mark.parametrize(
    ("definition", "message"),
    [
        ("check:tool_recall:3", "metrics[0]: check:tool_recall takes no argument"),
        ("check:tool_recall:", "metrics[0]: check:tool_recall takes no argument"),
        (
            "check:trajectory:strict:x",
            "metrics[0]: check:trajectory:strict takes no argument",
        ),
        ("check:trajectory:superset:", "check:trajectory:superset takes no argument"),
        (
            "check:trajectory:xyz",
            "metrics[0]: unknown trajectory check 'xyz'; known: check:trajectory:strict, "
            "check:trajectory:unordered, check:trajectory:subset, check:trajectory:superset",
        ),
        ("check:trajectory:Strict", "unknown trajectory check 'Strict'"),
        (
            "check:trajectory",
            "metrics[0]: check:trajectory needs a mode: write one of check:trajectory:strict, "
            "check:trajectory:unordered, check:trajectory:subset, check:trajectory:superset",
        ),
        ("check:trajectory:", "check:trajectory needs a mode"),
        (
            "check:tool_recal",
            "unknown check 'tool_recal' in 'check:tool_recal'; known checks: chrf, contains, "
            "exact_match,",
        ),
        (
            "check:trajectories:strict",
            "token_f1, tool_recall, trajectory:strict, trajectory:subset, trajectory:superset, "
            "trajectory:unordered",
        ),
    ],
)
def test_a_metrics_set_refuses_a_bad_definition(definition: str, message: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        validate_definitions([definition])
    assert refused.value.status_code == 400
    assert message in str(refused.value)


def test_an_unknown_check_lists_the_tool_call_checks() -> None:
    with pytest.raises(CheckError) as refused:
        parse_for_pairs("check:nope")
    for name in TRAJECTORY_CHECKS:
        assert name in str(refused.value)


def test_the_checks_of_input_and_output_alone_refuse_them() -> None:
    for definition in DEFINITIONS:
        with pytest.raises(CheckError, match="compares tool calls: score it on whole pairs"):
            parse(definition)


def test_each_check_restates_as_a_requirement() -> None:
    for definition in DEFINITIONS:
        assert not requirement_for(definition).startswith("Satisfy the check"), definition


# ---- reasons ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "made", "expected", "reason"),
    [
        (
            strict,
            [SEARCH, BOOK, FETCH],
            [SEARCH, FETCH, BOOK],
            "call 2 differs: made 'book', expected 'fetch'; 3 made, 3 expected",
        ),
        (
            strict,
            [SEARCH, call("fetch", url="elsewhere")],
            [SEARCH, FETCH],
            "call 2 differs: made 'fetch', expected 'fetch' (same name, other arguments); "
            "2 made, 2 expected",
        ),
        (
            strict,
            [SEARCH],
            [SEARCH, FETCH],
            "1 made, 2 expected: the calls made are the first expected ones, in order; "
            "expected call 2, 'fetch', was not made",
        ),
        (
            strict,
            [SEARCH, FETCH, BOOK, BOOK],
            [SEARCH, FETCH],
            "4 made, 2 expected: the expected calls were made, in order, then 2 more from "
            "call 3, 'book'",
        ),
        (strict, [], [FETCH, BOOK], "no call made, and 2 expected, the first 'fetch'"),
        (strict, [FETCH], [], "no call expected, and 1 made, the first 'fetch'"),
        (
            strict,
            [FETCH, SEARCH],
            [FETCH, SEARCH],
            "the 2 calls made are the expected ones, in order",
        ),
        (
            unordered,
            [SEARCH, BOOK, BOOK],
            [FETCH, SEARCH],
            "the calls differ from the expected ones: 1 call expected and not made: 'fetch'; "
            "2 calls made and not expected: 'book' (2 times)",
        ),
        (
            unordered,
            [call("search", q="snow", days=3)],
            [SEARCH],
            "the calls differ from the expected ones: 1 call expected and not made: 'search'; "
            "1 call made and not expected: 'search'; called with other arguments than "
            "expected: 'search'",
        ),
        (
            subset,
            [SEARCH, BOOK, SEARCH],
            [SEARCH, FETCH],
            "2 of the 3 calls made match no distinct expected call (2 expected): 'search', 'book'",
        ),
        (
            superset,
            [SEARCH],
            [SEARCH, FETCH, BOOK],
            "2 of the 3 calls expected were not made (1 made): 'fetch', 'book'",
        ),
        (
            tool_recall,
            [SEARCH, call("book", room=13, nights=2)],
            [SEARCH, FETCH, BOOK],
            "1 of 3 expected calls made (recall 0.333); not made: 'fetch', 'book'; called "
            "with other arguments than expected: 'book'",
        ),
    ],
)
def test_reasons_say_what_differed(
    metric: Metric, made: list[ToolCall], expected: list[ToolCall], reason: str
) -> None:
    assert metric(made, expected).reason == reason


def test_reasons_list_a_few_names_then_how_many_more() -> None:
    expected = [call(f"tool_{i}") for i in range(10)]
    assert superset([], expected).reason == (
        "10 of the 10 calls expected were not made (0 made): 'tool_0', 'tool_1', 'tool_2' "
        "and 7 more"
    )
    assert tool_recall([], [*expected, *expected]).reason.endswith(
        "not made: 'tool_0' (2 times), 'tool_1' (2 times), 'tool_2' (2 times) and 14 more"
    )


HOSTILE_NAMES = [
    "x" * MAX_TOOL_NAME_CHARS,
    "\U0001f600" * MAX_TOOL_NAME_CHARS,
    "\ud800" * MAX_TOOL_NAME_CHARS,  # lone surrogates
    "".join(chr(i) for i in range(32)) * 4,
    "'\"`\\" * 32,
    "\u202e" + "evil" * 31,  # right-to-left override
    "",
]


@pytest.mark.parametrize("metric", METRICS)
def test_reasons_stay_within_the_limit_whatever_the_names(metric: Metric) -> None:
    secret = "SECRET-ARGUMENT"
    made = [
        ToolCall(HOSTILE_NAMES[i % len(HOSTILE_NAMES)] + str(i), {"v": secret * 100, "i": i})
        for i in range(MAX_TOOL_CALLS)
    ]
    expected = [
        ToolCall(HOSTILE_NAMES[i % len(HOSTILE_NAMES)] + str(i), {"v": secret, "i": -i})
        for i in range(MAX_TOOL_CALLS)
    ]
    for first, second in ((made, expected), (expected, made), (made, []), ([], expected)):
        score = metric(first, second)
        assert_usable(score)
        assert secret not in score.reason
        assert len(score.reason) <= 600  # far within the limit: a few names at 40 characters


def test_a_call_whose_arguments_cannot_be_compared_scores_1_and_says_so() -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(sys.getrecursionlimit() + 10):
        inner["a"] = inner = {}
    for metric, name in zip(METRICS, BY_NAME, strict=True):
        score = metric([ToolCall("deep", deep)], [SEARCH])
        assert score == Score(
            1.0,
            f"{name} could not be computed for these tool calls (RecursionError); it is "
            "scored as failing",
        )


# ---- the rules against an oracle, and between themselves ----------------------------------------


def json_equal(first: Any, second: Any) -> bool:
    """JSON's equality, written apart from canonical_json: a boolean equals only a boolean,
    numbers by value, objects whatever their key order."""
    if isinstance(first, bool) or isinstance(second, bool):
        return type(first) is type(second) and first == second
    if isinstance(first, int | float) and isinstance(second, int | float):
        return first == second
    if isinstance(first, list) and isinstance(second, list):
        return len(first) == len(second) and all(
            json_equal(a, b) for a, b in zip(first, second, strict=True)
        )
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(json_equal(first[k], second[k]) for k in first)
    return type(first) is type(second) and first == second


def same_call(first: ToolCall, second: ToolCall) -> bool:
    return first.name == second.name and json_equal(first.arguments, second.arguments)


def matched(made: Sequence[ToolCall], expected: Sequence[ToolCall]) -> int:
    """Expected calls matched by distinct calls made, each made call used once (matching is an
    equivalence, so taking the first match found is a largest matching)."""
    left = list(made)
    count = 0
    for wanted in expected:
        for index, got in enumerate(left):
            if same_call(got, wanted):
                del left[index]
                count += 1
                break
    return count


# Few names and argument values, so that calls often match; each value with another spelling
# of the same JSON value (1.0 for 1, keys in another order) and a Python-equal value that JSON
# does not take as equal (true for 1).
ARGUMENTS = st.sampled_from(
    [
        {},
        {"n": 1},
        {"n": 1.0},
        {"n": True},
        {"n": "1"},
        {"a": [1, {"x": None, "y": "z"}], "b": 2},
        {"b": 2.0, "a": [1.0, {"y": "z", "x": None}]},
    ]
)
CALLS = st.lists(st.builds(ToolCall, st.sampled_from(["a", "b", "c"]), ARGUMENTS), max_size=8)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(made=CALLS, expected=CALLS)
def test_each_rule_agrees_with_the_oracle(made: list[ToolCall], expected: list[ToolCall]) -> None:
    k = matched(made, expected)
    in_order = len(made) == len(expected) and all(
        same_call(a, b) for a, b in zip(made, expected, strict=True)
    )
    assert strict(made, expected).value == (5 if in_order else 1)
    both = k == len(made) == len(expected)
    assert unordered(made, expected).value == (5 if both else 1)
    assert subset(made, expected).value == (5 if k == len(made) else 1)
    assert superset(made, expected).value == (5 if k == len(expected) else 1)
    recall = 1 + 4 * k / len(expected) if expected else 5
    assert tool_recall(made, expected).value == pytest.approx(recall, abs=1e-4)


@settings(max_examples=300, deadline=None)
@given(made=CALLS, expected=CALLS)
def test_the_rules_between_themselves(made: list[ToolCall], expected: list[ToolCall]) -> None:
    scores = {name: metric(made, expected) for name, metric in BY_NAME.items()}
    for score in scores.values():
        assert_usable(score)
    passed = {name: score.value == 5 for name, score in scores.items()}
    if passed["trajectory:strict"]:
        assert passed["trajectory:unordered"]
    assert passed["trajectory:unordered"] == (
        passed["trajectory:subset"] and passed["trajectory:superset"]
    )
    assert passed["tool_recall"] == passed["trajectory:superset"]
    # subset and superset swap with the sides; unordered is symmetric.
    assert subset(made, expected).value == superset(expected, made).value
    assert unordered(made, expected).value == unordered(expected, made).value


@settings(max_examples=200, deadline=None)
@given(calls=CALLS, data=st.data())
def test_a_reordering_keeps_the_multiset_rules(calls: list[ToolCall], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(calls))
    assert [unordered(shuffled, calls).value, subset(shuffled, calls).value] == [5, 5]
    assert [superset(shuffled, calls).value, tool_recall(shuffled, calls).value] == [5, 5]
    identical = all(a.key == b.key for a, b in zip(shuffled, calls, strict=True))
    assert strict(shuffled, calls).value == (5 if identical else 1)


NAMES = st.text(st.characters(codec=None, categories=None), max_size=MAX_TOOL_NAME_CHARS)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    made=st.lists(st.builds(ToolCall, NAMES, ARGUMENTS), max_size=MAX_TOOL_CALLS),
    expected=st.lists(st.builds(ToolCall, NAMES, ARGUMENTS), max_size=MAX_TOOL_CALLS),
)
def test_any_names_give_a_usable_score(made: list[ToolCall], expected: list[ToolCall]) -> None:
    for metric in METRICS:
        assert_usable(metric(made, expected))
