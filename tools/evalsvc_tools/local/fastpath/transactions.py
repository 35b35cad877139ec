"""Transactions (fastpath/__init__.py: "Transactions"): moto deep-copies every table a
TransactWriteItems names, to roll back if it is cancelled; only the items the transaction
names are copied, and put back if it is cancelled. And the key moto indexes an item by."""

from __future__ import annotations

import copy
import threading
from typing import Any

_no_table_copies = threading.local()


def _table_deepcopy(self: Any, memo: dict[int, Any]) -> Any:
    """A Table's deep copy, as copy.deepcopy makes it; the table itself inside a transaction
    (whose items are kept and put back item by item instead)."""
    if getattr(_no_table_copies, "active", False):
        return self
    copied = self.__class__.__new__(self.__class__)
    memo[id(self)] = copied
    for name, value in self.__dict__.items():
        setattr(copied, name, copy.deepcopy(value, memo))
    return copied


def key_of(table: Any, attributes: dict[str, Any]) -> tuple[Any, Any] | None:
    """The (hash, range) key moto's `table` indexes an item by, from an item's or a key's
    attributes; None if one of them is missing."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    hash_value = attributes.get(table.hash_key_attr)
    if hash_value is None:
        return None
    if not table.range_key_attr:
        return DynamoType(hash_value), None
    range_value = attributes.get(table.range_key_attr)
    if range_value is None:
        return None
    return DynamoType(hash_value), DynamoType(range_value)


def _touched_items(backend: Any, transact_items: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """(table, hash, range, a copy of the item or None) for every item a transaction names."""
    saved = []
    for action in transact_items:
        for operation in action.values():
            table = backend.tables.get(operation.get("TableName"))
            key = (
                key_of(table, operation.get("Item") or operation.get("Key") or {})
                if table
                else None
            )
            if key is not None:
                item = table.get_item(*key)
                saved.append((table, *key, copy.deepcopy(item)))
    return saved


def _put_back(saved: list[tuple[Any, ...]]) -> None:
    for table, hash_value, range_value, item in reversed(saved):
        if item is None:
            table.delete_item(hash_value, range_value)
        elif range_value is None:
            table.items[hash_value] = item
        else:
            table.items[hash_value][range_value] = item


def patches() -> list[tuple[Any, str, Any]]:
    """The transactions' patches of moto (which `fastpath._patch` has checked)."""
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.models.table import Table

    transact_write_items = DynamoDBBackend.transact_write_items

    def item_level_transaction(self: Any, transact_items: list[dict[str, Any]]) -> Any:
        try:
            saved = _touched_items(self, transact_items)
        except Exception:  # a malformed transaction: moto's own path says what is wrong
            return transact_write_items(self, transact_items)
        _no_table_copies.active = True
        try:
            return transact_write_items(self, transact_items)
        except BaseException:
            _put_back(saved)
            raise
        finally:
            _no_table_copies.active = False

    return [
        (Table, "__deepcopy__", _table_deepcopy),
        (DynamoDBBackend, "transact_write_items", item_level_transaction),
    ]
