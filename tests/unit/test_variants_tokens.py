"""How many tokens an answer of variants may take: bounded by what its seed's variants need."""

from __future__ import annotations

from evalsvc.logic.variants import (
    VARIANTS_MAX_TOKENS,
    VARIANTS_MIN_TOKENS,
    variants_max_tokens,
)
from evalsvc.models.datasets import Pair


def test_a_short_seed_takes_the_floor_and_a_long_one_the_ceiling() -> None:
    short = Pair(id="a", input="How do I reset my password?", output="Settings, then Security.")
    long = Pair(id="b", input="x" * 4_000, output="y" * 4_000)

    assert variants_max_tokens(short, 2) == VARIANTS_MIN_TOKENS
    assert variants_max_tokens(long, 2) == VARIANTS_MAX_TOKENS


def test_in_between_it_grows_with_the_seed_and_the_variants_wanted() -> None:
    seed = Pair(id="a", input="q" * 300, output="a" * 500)  # 800 bytes: 40 + 400 a variant

    assert variants_max_tokens(seed, 1) == 2 * 440
    assert variants_max_tokens(seed, 3) == 2 * 3 * 440
    # Four-byte characters count as bytes: a seed in another script is not cut shorter.
    wide = Pair(id="w", input="\U0001f600" * 100, output="\U0001f600" * 100)
    assert variants_max_tokens(wide, 1) == 2 * (40 + 400)
