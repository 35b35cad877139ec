"""Writes that commit together. The storage modules make them (each a domain operation: "the
job ends complete", "the result is complete", "the dataset appears"), logic combines them with
`+` and has them committed in one DynamoDB transaction, without seeing an item."""

from __future__ import annotations

from collections.abc import Sequence

from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item


class Writes:
    """Some writes, each of which may carry a condition; `commit` makes all of them or none."""

    __slots__ = ("_actions",)

    def __init__(self, actions: Sequence[Item] = ()) -> None:
        self._actions = tuple(actions)

    def __add__(self, other: Writes) -> Writes:
        return Writes((*self._actions, *other._actions))

    def __len__(self) -> int:
        return len(self._actions)

    def actions(self) -> list[Item]:
        """The transaction's actions (for the storage modules)."""
        return list(self._actions)


NONE = Writes()


def commit(writes: Writes) -> bool:
    """Make every write or none: False, changing nothing, when a condition was false."""
    if not len(writes):
        return True
    return dynamo.transact(writes.actions())
