"""What a page draws of a pair's conversation and tool calls (E11), within its `items` limit:
the helpers the templates call (conversation.html.j2).

A conversation shows its last OPEN_MESSAGES messages open and the earlier ones in one closed
disclosure; of a long one, only the last `items` messages. The calls made and the expected
ones are drawn side by side, row i holding call i of each: the first `items` rows, and the row
of the first difference wherever it is, with a row saying which calls are left out between
and after."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evalsvc.models.conversations import Message
from evalsvc.models.reports import Calls, CallText
from evalsvc.reports.limits import OPEN_MESSAGES


@dataclass(frozen=True, slots=True)
class NumberedMessage:
    number: int  # from 1, in the whole conversation
    message: Message


@dataclass(frozen=True, slots=True)
class ConversationView:
    """`earlier` (closed) and `last` (open) are the messages shown, oldest first; `omitted`
    the oldest ones not shown at all (beyond the page's `items`)."""

    count: int
    omitted: int
    earlier: tuple[NumberedMessage, ...]
    last: tuple[NumberedMessage, ...]


def conversation_view(messages: Sequence[Message], items: int) -> ConversationView:
    count = len(messages)
    first = max(0, count - max(1, items))
    shown = tuple(NumberedMessage(n + 1, messages[n]) for n in range(first, count))
    split = max(0, len(shown) - OPEN_MESSAGES)
    return ConversationView(count, first, shown[:split], shown[split:])


@dataclass(frozen=True, slots=True)
class CallRow:
    """Row `index` (from 0) of the calls side by side: call `index` of each list, None where
    that list has ended (or was not given); `differs` on the first difference's row."""

    index: int
    made: CallText | None
    expected: CallText | None
    differs: bool


@dataclass(frozen=True, slots=True)
class LeftOut:
    """Rows `first` to `last` (from 0, inclusive) are not drawn."""

    first: int
    last: int


def call_rows(calls: Calls, items: int) -> list[CallRow | LeftOut]:
    """The rows a page draws of `calls`: the first `items`, the first difference's wherever it
    is, and what is left out between and after them."""
    made = calls.made or ()
    expected = calls.expected or ()
    total = calls.rows
    wanted = list(range(min(total, max(1, items))))
    differs = calls.first_difference
    if differs is not None and differs >= len(wanted) and differs < total:
        wanted.append(differs)
    rows: list[CallRow | LeftOut] = []
    following = 0
    for index in wanted:
        if index > following:
            rows.append(LeftOut(following, index - 1))
        rows.append(
            CallRow(
                index,
                made[index] if index < len(made) else None,
                expected[index] if index < len(expected) else None,
                index == differs,
            )
        )
        following = index + 1
    if following < total:
        rows.append(LeftOut(following, total - 1))
    return rows
