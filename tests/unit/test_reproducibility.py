"""pairs_digest (E7): the same pairs give the same digest in any order and any chunking; any
change to any text, label, or to which pairs there are, gives another; the encoding cannot be
confused (length prefixes, absent is not empty)."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import random
import tomllib
from pathlib import Path

import evalsvc
import pytest
from evalsvc.logic import reproduce
from evalsvc.logic.pairs_digest import definitions_sha256, pair_digest, pairs_digest
from evalsvc.models.datasets import Pair
from evalsvc.storage.datasets import fingerprint
from hypothesis import given, settings
from hypothesis import strategies as st

texts = st.text(max_size=40)
pairs = st.builds(
    Pair,
    id=st.text(min_size=1, max_size=12),
    input=texts,
    output=texts,
    labels=st.lists(st.text(max_size=8), max_size=3),
    input_media=st.none() | texts,
    system_prompt_template=st.none() | texts,
    reference=st.none() | texts,
    contexts=st.none() | st.lists(st.text(min_size=1, max_size=8), max_size=3),
)


def digest_of(items: list[Pair]) -> str:
    return pairs_digest(pair_digest(p) for p in items)


@settings(max_examples=200)
@given(st.lists(pairs, max_size=12), st.randoms())
def test_order_and_chunking_do_not_matter(items: list[Pair], rng: random.Random) -> None:
    shuffled = list(items)
    rng.shuffle(shuffled)
    cut = rng.randint(0, len(items))
    chunks = [[pair_digest(p) for p in shuffled[:cut]], [pair_digest(p) for p in shuffled[cut:]]]
    assert pairs_digest(d for chunk in chunks for d in chunk) == digest_of(items)


@settings(max_examples=200)
@given(pairs, st.sampled_from(["id", "input", "output"]), st.text(min_size=1, max_size=3))
def test_any_change_to_a_text_changes_the_digest(pair: Pair, name: str, extra: str) -> None:
    changed = dataclasses.replace(pair, **{name: getattr(pair, name) + extra})
    assert digest_of([changed]) != digest_of([pair])


def test_the_encoding_cannot_be_confused() -> None:
    base = Pair("p1", "ab", "c")
    assert digest_of([base]) != digest_of([Pair("p1", "a", "bc")])
    assert digest_of([Pair("p1", "x", "y", labels=["a", "b"])]) != digest_of(
        [Pair("p1", "x", "y", labels=["ab"])]
    )
    assert digest_of([Pair("p1", "x", "y", input_media=None)]) != digest_of(
        [Pair("p1", "x", "y", input_media="")]
    )
    assert digest_of([Pair("p1", "x", "y", labels=["b", "a"])]) != digest_of(
        [Pair("p1", "x", "y", labels=["a", "b"])]
    )  # a pair's first label is its cluster: label order is part of the pair


def test_which_pairs_and_how_many_matter() -> None:
    a, b = Pair("a", "i", "o"), Pair("b", "i", "o")
    assert digest_of([a, b]) != digest_of([a])
    assert digest_of([a, a]) != digest_of([a])  # a count, not a set
    assert digest_of([]) == hashlib.sha256(b"evalsvc-pairs-v1\x00" + bytes(8)).hexdigest()


def test_the_documented_form_by_hand() -> None:
    pair = Pair("p", "in", "out", labels=["l"])
    field = lambda t: len(t.encode()).to_bytes(8, "big") + t.encode()  # noqa: E731
    expected = hashlib.sha256(
        b"evalsvc-pair-v1\x00"
        + field("p")
        + field("in")
        + field("out")
        + (1).to_bytes(4, "big")
        + field("l")
        + b"\x00\x00"
    ).digest()
    assert pair_digest(pair) == expected
    assert (
        pairs_digest([expected])
        == hashlib.sha256(b"evalsvc-pairs-v1\x00" + (1).to_bytes(8, "big") + expected).hexdigest()
    )


def test_texts_at_the_limits_in_4_byte_utf8_and_lone_surrogates() -> None:
    long = "𝄞" * 100_000
    assert len(pair_digest(Pair("p", long, long))) == 32
    assert pair_digest(Pair("p", "\ud800", "x")) != pair_digest(Pair("p", "\udc00", "x"))


def test_a_digest_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError):
        pairs_digest([b"short"])


def test_the_definitions_digest_is_sha256_of_their_json_list() -> None:
    definitions = ["Is it polite?", "contains:é"]
    expected = hashlib.sha256('["Is it polite?","contains:é"]'.encode()).hexdigest()
    assert definitions_sha256(definitions) == expected
    # Order is part of what was scored: metric k is the k-th definition
    assert definitions_sha256(list(reversed(definitions))) != expected
    assert definitions_sha256(["a", "b"]) != definitions_sha256(["a,b"])


def test_the_service_version_is_the_one_pyproject_names() -> None:
    with open(Path(__file__).parents[2] / "pyproject.toml", "rb") as f:
        assert tomllib.load(f)["project"]["version"] == evalsvc.__version__


@settings(max_examples=100)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=40, unique=True), st.integers(1, 7))
def test_pieces_name_every_pair_once_in_order(seqs: list[int], size: int) -> None:
    ords = [f"{1700000000000:013d}#{s:08d}" for s in sorted(seqs)]
    original = reproduce.PIECE_PAIRS
    reproduce.PIECE_PAIRS = size
    try:
        pieces = reproduce.cut_pieces(ords)
    finally:
        reproduce.PIECE_PAIRS = original
    assert sum(p.count for p in pieces) == len(ords)
    assert all(p.count <= size and len(p.members) == 8 * p.count for p in pieces)
    start = 0
    for piece in pieces:
        taken = ords[start : start + piece.count]
        assert (piece.first_ord, piece.last_ord) == (taken[0], taken[-1])
        assert piece.members == b"".join(fingerprint(o) for o in taken)
        start += piece.count
    assert all(a.last_ord < b.first_ord for a, b in itertools.pairwise(pieces))


# ---- E10: reference and contexts ---------------------------------------------------------------


def test_a_pair_without_reference_or_contexts_keeps_the_digest_it_had_before_them() -> None:
    # Pinned: computed by the canonical form before E10 added its fields
    pairs = [
        Pair("q1", "What is 2+2?", "4", labels=["math", "easy"]),
        Pair("p", "in", "out", input_media="data:x", system_prompt_template="T"),
    ]
    assert [pair_digest(p).hex() for p in pairs] == [
        "90f3352cc5c60f177066233fbc463161dc9a911a2ad23745d578ee793713f38b",
        "dad94f50c1e47d8c9a2fa8813bfaf749db4c47dbf09a7c43e27e3f45493857a8",
    ]
    assert digest_of(pairs) == "df5c97e2fe24fd9289fd2ecc617b0f817f34a000c08773667581ab6ffaed63b0"


def test_a_reference_or_contexts_change_the_digest_and_cannot_be_confused() -> None:
    plain = Pair("p1", "x", "y")
    distinct = [
        plain,
        dataclasses.replace(plain, reference=""),
        dataclasses.replace(plain, reference="the answer"),
        dataclasses.replace(plain, reference="the answer "),
        dataclasses.replace(plain, contexts=[]),
        dataclasses.replace(plain, contexts=["ab", "c"]),
        dataclasses.replace(plain, contexts=["a", "bc"]),  # boundaries matter
        dataclasses.replace(plain, contexts=["c", "ab"]),  # rank order matters
        dataclasses.replace(plain, contexts=["abc"]),
        dataclasses.replace(plain, contexts=["the answer"]),  # not the same as a reference
        dataclasses.replace(plain, reference="the answer", contexts=["the answer"]),
        dataclasses.replace(plain, reference="the answer", contexts=[]),
        # Nor is a template's text a reference's
        dataclasses.replace(plain, system_prompt_template="the answer"),
    ]
    assert len({pair_digest(p) for p in distinct}) == len(distinct)


@settings(max_examples=200)
@given(pairs, st.text(min_size=1, max_size=3))
def test_any_change_to_a_reference_or_a_context_changes_the_digest(pair: Pair, extra: str) -> None:
    with_reference = dataclasses.replace(pair, reference=(pair.reference or "") + extra)
    assert digest_of([with_reference]) != digest_of([pair])
    contexts = [*(pair.contexts or []), extra]
    assert digest_of([dataclasses.replace(pair, contexts=contexts)]) != digest_of([pair])


def test_the_documented_form_of_reference_and_contexts_by_hand() -> None:
    pair = Pair("p", "in", "out", reference="ref", contexts=["c1", "c2"])
    field = lambda t: len(t.encode()).to_bytes(8, "big") + t.encode()  # noqa: E731
    expected = hashlib.sha256(
        b"evalsvc-pair-v1\x00"
        + field("p")
        + field("in")
        + field("out")
        + (0).to_bytes(4, "big")
        + b"\x00\x00"
        + field("reference")
        + field("ref")
        + field("contexts")
        + (2).to_bytes(4, "big")
        + field("c1")
        + field("c2")
    ).digest()
    assert pair_digest(pair) == expected
