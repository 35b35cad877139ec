"""How pairs are laid out in items: order keys and the split of pairs too large for one item."""

from __future__ import annotations

import json
import zlib
from collections import Counter
from typing import Any

import pytest
from evalsvc.core.settings import reset_settings
from evalsvc.models.datasets import Pair
from evalsvc.storage.datasets.codec import INLINE_LIMIT, pair_from_item, pair_items
from evalsvc.storage.datasets.keys import (
    SHARD_WRITE_UNITS,
    append_ord,
    append_shards_for,
    make_ord,
    ord_ms,
    shard_of,
    shard_pk,
    shards_for,
    write_units,
)
from evalsvc.storage.dynamo import item_size
from hypothesis import given
from hypothesis import strategies as st

SHARDS = 16


def test_ord_sorts_by_time_then_sequence() -> None:
    assert make_ord(5, 2) < make_ord(5, 10) < make_ord(6, 0)
    assert make_ord(1_795_999_999_123, 3) == "1795999999123#00000003"


@given(
    st.integers(0, 10**13 - 2),  # 13 digits of milliseconds: until the year 2286
    st.integers(0, 10**8 - 1),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}", fullmatch=True),
)
def test_an_appended_ord_never_equals_a_written_one_and_keeps_its_time(
    ms: int, seq: int, pair_id: str
) -> None:
    appended = append_ord(ms, pair_id)
    assert appended != make_ord(ms, seq)
    assert make_ord(ms, seq) < appended < make_ord(ms + 1, 0)
    assert ord_ms(appended) == ms == ord_ms(make_ord(ms, seq))


@given(st.sets(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}", fullmatch=True), max_size=50))
def test_appended_ords_of_distinct_ids_are_distinct_at_the_same_time(ids: set[str]) -> None:
    assert len({append_ord(1_795_000_000_000, pair_id) for pair_id in ids}) == len(ids)


def test_a_pair_always_lives_in_the_same_shard_and_shards_are_used_evenly() -> None:
    ids = [f"pair-{i}" for i in range(16_000)]
    shards = [shard_of(pair_id, SHARDS) for pair_id in ids]
    assert shards == [shard_of(pair_id, SHARDS) for pair_id in ids]
    counts = Counter(shards)
    assert set(counts) == set(range(SHARDS))
    # 1,000 expected per shard; a binomial's sd is about 31.
    assert max(counts.values()) - min(counts.values()) < 300
    assert shard_pk("v", 1, 0) == "v"
    assert {shard_pk("v", SHARDS, k) for k in range(SHARDS)} == {
        f"v#s{k:02d}" for k in range(SHARDS)
    }


def test_a_pair_takes_two_write_units_a_started_kb() -> None:
    # Its item and its by_order entry, each its texts and about 200 bytes of keys
    assert write_units(0) == write_units(824) == 2
    assert write_units(825) == 4
    assert write_units(400_000) == 2 * 391


def test_a_written_version_takes_a_shard_per_thousand_write_units(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALSVC_DATASET_SHARDS", str(SHARDS))
    reset_settings()
    assert SHARD_WRITE_UNITS == 1000
    assert shards_for(0, 0) == 0
    assert shards_for(10, 20) == shards_for(500, 1000) == 1
    assert shards_for(501, 1002) == 2
    assert shards_for(2000, 4000) == 4
    assert shards_for(10_000, 20_000) == SHARDS
    assert shards_for(1, 10**9) == SHARDS
    # Appends spread over the most shards, apart from the written ones when those are fewer
    assert [append_shards_for(k) for k in (0, 1, SHARDS - 1, SHARDS)] == [SHARDS] * 3 + [0]


def test_small_pair_is_one_item_with_its_fields_inline() -> None:
    pair = Pair(id="p1", input="in", output="out", labels=["a"], system_prompt_template="T")

    items = pair_items("pk", pair, make_ord(1, 0))

    assert len(items) == 1
    restored = pair_from_item(items[0])
    assert (restored.id, restored.input, restored.output, restored.labels) == (
        "p1",
        "in",
        "out",
        ["a"],
    )
    assert restored.system_prompt_template == "T"
    assert restored.created_ms == 1


def test_pair_over_the_item_limit_is_split_into_parts_under_400_kb() -> None:
    text = "😀" * 100_000  # 400 KB of UTF-8 on its own
    pair = Pair(id="big", input=text, output=text, input_media="A" * 262_144)

    head, *parts = pair_items("pk", pair, make_ord(1, 0))

    assert int(head["parts"]["N"]) == len(parts) >= 1
    assert "input" not in head
    assert all(item_size(item) < 400_000 for item in [head, *parts])
    body = json.loads(zlib.decompress(b"".join(p["blob"]["B"] for p in parts)))
    assert body == {"input": text, "output": text, "input_media": "A" * 262_144}


def _size_bound(item: dict[str, Any]) -> int:
    total = 0
    for name, value in item.items():
        ((kind, raw),) = value.items()
        raw_size = len(raw) if kind == "B" else len(json.dumps(raw, ensure_ascii=False).encode())
        total += len(name.encode()) + raw_size
    return total


def _utf8(*texts: str) -> int:
    return sum(len(text.encode()) for text in texts)


@pytest.mark.parametrize(
    ("input_", "output"),
    [
        # 300,000 characters of ASCII: a 4-bytes-a-character estimate says "too large", the
        # exact count says one byte under the limit
        ("x" * (INLINE_LIMIT - 2), "y"),
        ("x" * (INLINE_LIMIT - 1), "y"),  # exactly at the limit
        ("\U0001f600" * 74_999, "y"),  # 299,997 bytes
        ("\U0001f600" * 75_000, ""),  # 300,000 bytes
        ("\u20ac" * 99_999, "\u20ac"),  # 300,000 bytes of 3-byte text
        ("\u00e9" * 100_000, "\u00e9" * 49_999),  # 299,998 bytes of 2-byte text
    ],
    ids=["ascii-under", "ascii-at", "4-byte-under", "4-byte-at", "3-byte-at", "2-byte-under"],
)
def test_a_pair_is_inline_exactly_while_its_utf8_bytes_are_under_the_limit(
    input_: str, output: str
) -> None:
    # The rule, counted here independently: inline while the fields' UTF-8 bytes are under it
    inline = _utf8(input_, output) < INLINE_LIMIT
    pair = Pair(id="p", input=input_, output=output, labels=["l" * 128] * 32)

    items = pair_items("T#t#seed#d#v#1", pair, make_ord(1, 0))

    assert (len(items) == 1) is inline
    # And every item is under DynamoDB's 400 KB, by an upper bound of its size that shares
    # nothing with the code: names plus the JSON of each value (raw length for bytes)
    for item in items:
        assert _size_bound(item) < 400 * 1024
    restored = pair_from_item(items[0])
    if inline:
        assert (restored.input, restored.output) == (input_, output)


# ---- E10: reference and contexts ---------------------------------------------------------------


def test_a_pair_without_reference_or_contexts_is_stored_as_before_them() -> None:
    pair = Pair(id="p1", input="in", output="out", labels=["a"], input_media="m")

    (item,) = pair_items("pk", pair, make_ord(1, 0))

    assert set(item) == {"pk", "sk", "ord", "b", "labels", "input", "output", "input_media"}
    restored = pair_from_item(item)
    assert restored.reference is None and restored.contexts is None


@pytest.mark.parametrize("contexts", [None, [], ["first", "second <b>", "third"]])
@pytest.mark.parametrize("reference", [None, "", "the answer"])
def test_reference_and_contexts_are_kept_inline_as_written(
    reference: str | None, contexts: list[str] | None
) -> None:
    pair = Pair(id="p1", input="in", output="out", reference=reference, contexts=contexts)

    (item,) = pair_items("pk", pair, make_ord(1, 0))

    # contexts are a list attribute, in rank order; [] is kept apart from absent
    if contexts is not None:
        assert item["contexts"] == {"L": [{"S": c} for c in contexts]}
    assert ("contexts" in item) is (contexts is not None)
    assert ("reference" in item) is (reference is not None)
    restored = pair_from_item(item)
    assert (restored.reference, restored.contexts) == (reference, contexts)


def _split_body(items: list[dict[str, Any]]) -> dict[str, Any]:
    head, *parts = items
    assert int(head["parts"]["N"]) == len(parts) >= 1
    for name in ("input", "output", "reference", "contexts"):
        assert name not in head
    loaded: dict[str, Any] = json.loads(zlib.decompress(b"".join(p["blob"]["B"] for p in parts)))
    return loaded


def test_a_pair_at_every_e10_limit_in_4_byte_text_is_split_into_parts_under_400_kb() -> None:
    from evalsvc.models.datasets import (
        MAX_CONTEXT_CHARS,
        MAX_CONTEXTS,
        MAX_REFERENCE_CHARS,
        MAX_TEXT_CHARS,
    )

    text = "😀" * MAX_TEXT_CHARS
    contexts = [f"{k:02d}" + "😀" * (MAX_CONTEXT_CHARS - 2) for k in range(MAX_CONTEXTS)]
    pair = Pair(
        id="big",
        input=text,
        output=text,
        reference="😀" * MAX_REFERENCE_CHARS,
        contexts=contexts,
    )

    items = pair_items("pk", pair, make_ord(1, 0))

    assert all(_size_bound(item) < 400 * 1024 for item in items)
    body = _split_body(items)
    assert body["reference"] == pair.reference
    assert body["contexts"] == contexts  # in rank order


def test_empty_contexts_survive_the_split_into_parts() -> None:
    pair = Pair(id="big", input="😀" * 100_000, output="", contexts=[])

    assert _split_body(pair_items("pk", pair, make_ord(1, 0)))["contexts"] == []


def test_reference_and_contexts_count_towards_the_inline_limit() -> None:
    # Alone, input and output are small; the reference and contexts push the pair past it
    under = Pair(id="p", input="i", output="o", reference="r" * (INLINE_LIMIT // 2))
    over = Pair(
        id="p",
        input="i",
        output="o",
        reference="r" * (INLINE_LIMIT // 2),
        contexts=["c" * 20_000] * 8,
    )

    assert len(pair_items("pk", under, make_ord(1, 0))) == 1
    assert len(pair_items("pk", over, make_ord(1, 0))) > 1
