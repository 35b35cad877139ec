"""The first difference between the calls made and the expected ones (E11): on the cases the
review app's firstDifference is tested on too (tests/trajectory_cases.py), and against an
oracle that compares the two lists' keys whole."""

from __future__ import annotations

import pytest
from evalsvc.models.conversations import ToolCall, first_difference
from hypothesis import given
from hypothesis import strategies as st

from tests.trajectory_cases import CASES, Case, tool_calls


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_first_difference_of_each_case(case: Case) -> None:
    made, expected = tool_calls(case.made), tool_calls(case.expected)
    assert first_difference(made, expected) == case.first
    # The same index whichever list is which
    assert first_difference(expected, made) == case.first


# Small names and arguments, so that equal calls are common.
values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([1.0, 0.5, -0.0]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("ab"), inner),
    max_leaves=4,
)
calls = st.lists(
    st.builds(
        ToolCall,
        st.sampled_from(["f", "g"]),
        st.dictionaries(st.sampled_from("xy"), values, max_size=2),
    ),
    max_size=4,
)


@given(made=calls, expected=calls)
def test_the_first_difference_is_where_the_keys_first_part(
    made: list[ToolCall], expected: list[ToolCall]
) -> None:
    keys = [c.key for c in made], [c.key for c in expected]
    found = first_difference(made, expected)
    if found is None:
        assert keys[0] == keys[1]
    else:
        assert keys[0][:found] == keys[1][:found]
        assert found == min(len(made), len(expected)) or keys[0][found] != keys[1][found]
