"""How much of each kind of text a page shows. A page stays under MAX_PAGE_BYTES, and under
what one Lambda response carries: long texts are cut to the `Limits`, which are first set from
how many texts the page lists and then halved until the rendered page fits."""

from __future__ import annotations

from typing import NamedTuple

from evalsvc.models.reports import LISTED_ITEMS

MAX_PAGE_BYTES = 5_000_000
# Budgets (bytes of escaped text, at worst 6 bytes a character: `&#34;` or a 4-byte character
# plus slack) for the lists a page may hold; divided among the texts the page lists.
PAIR_TEXT_BUDGET = 2_000_000
REASON_BUDGET = 700_000
COMMENT_BUDGET = 500_000
WORST_BYTES_PER_CHAR = 6
# The shortest a text is cut to by its share of a budget (the render loop may halve it further).
SHORTEST_CUT = 40
# A pair's context (E10) of at most this many characters is shown open; a longer one is a
# closed disclosure, so that twenty long contexts do not bury the page.
SHORT_CONTEXT_CHARS = 300
# How many of the last messages of a pair's conversation (E11) are shown open: the exchange the
# input follows (the turn before it and the reply to it, or a tool's result and the call before
# it). The earlier ones are in one closed disclosure.
OPEN_MESSAGES = 2


class Limits(NamedTuple):
    """The most characters shown of each kind of text."""

    pair_text: int = 2_000
    reason: int = 1_000
    comment: int = 1_000
    definition: int = 2_000
    prompt: int = 4_000
    failure: int = 2_000
    # The most messages of a conversation, and calls of each list, shown of one pair (E11);
    # halved with the others, so that the markup of long conversations and trajectories
    # shrinks too until the page fits.
    items: int = LISTED_ITEMS

    @classmethod
    def for_counts(cls, texts: int, reasons: int, comments: int) -> Limits:
        """Limits that keep `texts` pair texts, `reasons` reasons and `comments` comments
        within their budgets. When even the shortest cut of every pair text would pass the
        budget (a page listing many pairs with long conversations or trajectories, whose
        messages and calls `texts` counts), each pair shows fewer messages and calls, in
        proportion, rather than texts too short to read."""
        most = cls()
        return cls(
            pair_text=_share(PAIR_TEXT_BUDGET, texts, most.pair_text),
            reason=_share(REASON_BUDGET, reasons, most.reason),
            comment=_share(COMMENT_BUDGET, comments, most.comment),
            items=_items(texts, most.items),
        )

    def halved(self) -> Limits:
        return Limits(*(max(1, value // 2) for value in self))


def _share(budget: int, count: int, most: int) -> int:
    if count <= 0:
        return most
    return max(SHORTEST_CUT, min(most, budget // (count * WORST_BYTES_PER_CHAR)))


def _items(texts: int, most: int) -> int:
    fit = PAIR_TEXT_BUDGET // (SHORTEST_CUT * WORST_BYTES_PER_CHAR)
    if texts <= fit:
        return most
    return max(1, most * fit // texts)
