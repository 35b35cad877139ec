"""How pairs are laid out in items: order keys and the split of pairs too large for one item."""

from __future__ import annotations

import json
import zlib

from evalsvc.models.datasets import Pair
from evalsvc.storage.datasets import INLINE_LIMIT, _pair_from_item, _pair_items, make_ord, next_ord
from evalsvc.storage.dynamo import item_size


def test_ord_sorts_by_time_then_sequence() -> None:
    assert make_ord(5, 2) < make_ord(5, 10) < make_ord(6, 0)
    assert make_ord(1_795_999_999_123, 3) == "1795999999123#00000003"


def test_next_ord_never_goes_back_even_when_the_clock_does() -> None:
    last = make_ord(1000, 7)
    assert next_ord(last, 2000) == make_ord(2000, 0)
    assert next_ord(last, 1000) == make_ord(1000, 8)
    assert next_ord(last, 900) == make_ord(1000, 8)
    assert next_ord("", 42) == make_ord(42, 0)


def test_small_pair_is_one_item_with_its_fields_inline() -> None:
    pair = Pair(id="p1", input="in", output="out", labels=["a"], system_prompt_template="T")

    items = _pair_items("pk", pair, make_ord(1, 0))

    assert len(items) == 1
    restored = _pair_from_item(items[0])
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

    head, *parts = _pair_items("pk", pair, make_ord(1, 0))

    assert int(head["parts"]["N"]) == len(parts) >= 1
    assert "input" not in head
    assert all(item_size(item) < 400_000 for item in [head, *parts])
    body = json.loads(zlib.decompress(b"".join(p["blob"]["B"] for p in parts)))
    assert body == {"input": text, "output": text, "input_media": "A" * 262_144}


def test_pair_just_under_the_inline_limit_stays_inline() -> None:
    pair = Pair(id="p", input="x" * (INLINE_LIMIT // 5), output="y")
    assert len(_pair_items("pk", pair, make_ord(1, 0))) == 1
