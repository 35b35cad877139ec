"""How much of each kind of text a page shows. A page stays under MAX_PAGE_BYTES, and under
what one Lambda response carries: long texts are cut to the `Limits`, which are first set from
how many texts the page lists and then halved until the rendered page fits."""

from __future__ import annotations

from typing import NamedTuple

MAX_PAGE_BYTES = 5_000_000
# Budgets (bytes of escaped text, at worst 6 bytes a character: `&#34;` or a 4-byte character
# plus slack) for the lists a page may hold; divided among the texts the page lists.
PAIR_TEXT_BUDGET = 2_000_000
REASON_BUDGET = 700_000
COMMENT_BUDGET = 500_000
WORST_BYTES_PER_CHAR = 6
# A pair's context (E10) of at most this many characters is shown open; a longer one is a
# closed disclosure, so that twenty long contexts do not bury the page.
SHORT_CONTEXT_CHARS = 300


class Limits(NamedTuple):
    """The most characters shown of each kind of text."""

    pair_text: int = 2_000
    reason: int = 1_000
    comment: int = 1_000
    definition: int = 2_000
    prompt: int = 4_000
    failure: int = 2_000

    @classmethod
    def for_counts(cls, texts: int, reasons: int, comments: int) -> Limits:
        """Limits that keep `texts` pair texts, `reasons` reasons and `comments` comments
        within their budgets."""
        most = cls()
        return cls(
            pair_text=_share(PAIR_TEXT_BUDGET, texts, most.pair_text),
            reason=_share(REASON_BUDGET, reasons, most.reason),
            comment=_share(COMMENT_BUDGET, comments, most.comment),
        )

    def halved(self) -> Limits:
        return Limits(*(max(1, value // 2) for value in self))


def _share(budget: int, count: int, most: int) -> int:
    if count <= 0:
        return most
    return max(40, min(most, budget // (count * WORST_BYTES_PER_CHAR)))
