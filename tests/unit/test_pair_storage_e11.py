"""E11's pair fields in storage and in the pairs digest: kept inline as compact JSON or as JSON
values in the parts, read back as written (empty lists apart from absent), a pair without them
stored and digested exactly as before; arguments digested as JSON values (key order aside)."""

from __future__ import annotations

import json
import zlib
from typing import Any

from evalsvc.logic.pairs_digest import pair_digest
from evalsvc.models.conversations import Message, ToolCall
from evalsvc.models.datasets import Pair
from evalsvc.storage.datasets.codec import INLINE_LIMIT, pair_from_item, pair_items
from evalsvc.storage.datasets.keys import make_ord
from hypothesis import given
from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=12,
)
CALLS = st.lists(
    st.builds(
        ToolCall,
        st.text(min_size=1, max_size=8),
        st.dictionaries(st.text(max_size=4), JSON, max_size=3),
    ),
    max_size=4,
)
MESSAGES = st.lists(
    st.builds(
        Message, st.sampled_from(["system", "user", "assistant", "tool"]), st.text(max_size=20)
    ),
    max_size=4,
)


def keys(calls: list[ToolCall] | None) -> list[tuple[str, str]] | None:
    return None if calls is None else [c.key for c in calls]


def same(a: Pair, b: Pair) -> bool:
    return (
        a.messages == b.messages
        and keys(a.tool_calls) == keys(b.tool_calls)
        and keys(a.expected_tool_calls) == keys(b.expected_tool_calls)
        and a.conversation_id == b.conversation_id
    )


@given(
    st.none() | MESSAGES,
    st.none() | CALLS,
    st.none() | CALLS,
    st.none() | st.text(min_size=1, max_size=128),
)
def test_the_fields_are_read_back_inline_as_written(
    messages: list[Message] | None,
    made: list[ToolCall] | None,
    expected: list[ToolCall] | None,
    conversation: str | None,
) -> None:
    pair = Pair(
        "p",
        "in",
        "out",
        messages=messages,
        tool_calls=made,
        expected_tool_calls=expected,
        conversation_id=conversation,
    )

    (item,) = pair_items("pk", pair, make_ord(1, 0))
    restored = pair_from_item(item)

    assert same(pair, restored)
    # Arguments come back with their keys in the order written
    for a, b in zip(made or [], restored.tool_calls or [], strict=True):
        assert json.dumps(a.arguments) == json.dumps(b.arguments)
    # The head says the pair's prompt has more than its input and output
    assert ("d" in item) is bool(messages or made)


def test_the_fields_survive_the_split_into_parts_as_json_values() -> None:
    pair = Pair(
        "big",
        "😀" * (INLINE_LIMIT // 4),
        "",
        messages=[Message("user", "hi")],
        tool_calls=[],
        expected_tool_calls=[ToolCall("t", {"b": 1, "a": [True, None]})],
        conversation_id="c",
    )

    head, *parts = pair_items("pk", pair, make_ord(1, 0))
    body: dict[str, Any] = json.loads(zlib.decompress(b"".join(p["blob"]["B"] for p in parts)))

    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["tool_calls"] == []
    assert body["expected_tool_calls"] == [{"name": "t", "arguments": {"b": 1, "a": [True, None]}}]
    assert body["conversation_id"] == "c"
    assert not {"messages", "tool_calls", "expected_tool_calls"} & set(head)


def test_a_pair_without_them_is_stored_and_digested_as_before() -> None:
    pair = Pair(id="p1", input="in", output="out", labels=["a"])

    (item,) = pair_items("pk", pair, make_ord(1, 0))

    assert set(item) == {"pk", "sk", "ord", "b", "labels", "input", "output"}
    # Pinned: the digest of this pair as the code before E11 computed it
    assert pair_digest(pair).hex() == (
        "4e3561726eeed970af1bfec9afaf9fc3e09ff64bd3e4064a7571b9e98c65f3d8"
    )


def test_arguments_digest_as_json_values_and_every_field_counts() -> None:
    base = Pair("p", "i", "o", tool_calls=[ToolCall("t", {"a": 1, "b": [1.0, "x"]})])
    reordered = Pair("p", "i", "o", tool_calls=[ToolCall("t", {"b": [1, "x"], "a": 1.0})])
    boolean = Pair("p", "i", "o", tool_calls=[ToolCall("t", {"a": True, "b": [1, "x"]})])
    as_expected = Pair("p", "i", "o", expected_tool_calls=[ToolCall("t", {"a": 1, "b": [1, "x"]})])
    empty = Pair("p", "i", "o", tool_calls=[])

    digests = {pair_digest(p) for p in (base, boolean, as_expected, empty, Pair("p", "i", "o"))}

    assert pair_digest(base) == pair_digest(reordered)
    assert len(digests) == 5


def test_message_boundaries_and_roles_count_in_the_digest() -> None:
    one = Pair("p", "i", "o", messages=[Message("user", "ab"), Message("user", "c")])
    two = Pair("p", "i", "o", messages=[Message("user", "a"), Message("user", "bc")])
    role = Pair("p", "i", "o", messages=[Message("user", "ab"), Message("assistant", "c")])

    assert len({pair_digest(p) for p in (one, two, role)}) == 3
