"""Items in moto's tables as the embedded store reads and writes them straight, bypassing the
API: an item's image (DynamoDB JSON, binary values as bytes), set or removed, and the images
read back from the data directory at a start, loaded without checking them again."""

from __future__ import annotations

from typing import Any

from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict

from evalsvc_tools.local import fastpath


def image_of(table: Any, key: dict[str, Any]) -> dict[str, Any] | None:
    """The item at `key` as DynamoDB JSON (binary values as bytes), or None."""
    found = fastpath.key_of(table, key)
    item = table.get_item(*found) if found is not None else None
    if item is None:
        return None
    image: dict[str, Any] = item.to_json()["Attributes"]
    return image


def set_item(table: Any, key: dict[str, Any], image: dict[str, Any] | None) -> None:
    """Make the item at `key` be `image` (None: absent), straight in moto's table."""
    if image is not None:
        table.put_item(image, overwrite=True)
        return
    found = fastpath.key_of(table, key)
    if found is not None:
        table.delete_item(*found)


def load_item(table: Any, image: dict[str, Any]) -> None:
    """Put an item image read from the data directory straight into moto's table, as
    `table.put_item(image, overwrite=True)` leaves it, without checking it again: moto accepted
    it before it was journaled (its types, key sizes and 400 KB), and a start loads hundreds of
    thousands of them."""
    hash_value = image.get(table.hash_key_attr)
    range_value = image.get(table.range_key_attr) if table.range_key_attr else None
    if hash_value is None or range_value is None or table.stream_shard is not None:
        table.put_item(image, overwrite=True)  # moto's own way, streams and all
        return
    item: Any = Item.__new__(Item)
    # As put_item does: the item's key values are the ones its table indexes it by, and its
    # attributes values of their own.
    item.hash_key = hash_key = _typed(hash_value)
    item.range_key = range_key = _typed(range_value)
    attrs = LimitedSizeDict()
    new = DynamoType.__new__
    for name, value in image.items():
        # DynamoType(value), made directly for a value holding no other (all but lists and
        # maps, whose members moto types one by one).
        if len(value) == 1:
            ((kind, raw),) = value.items()
            if kind != "L" and kind != "M":
                typed = new(DynamoType)
                typed.type = kind
                typed.value = raw
                dict.__setitem__(attrs, name, typed)
                continue
        dict.__setitem__(attrs, name, DynamoType(value))
    item.attrs = attrs
    table.items[hash_key][range_key] = item


def _typed(value: dict[str, Any]) -> Any:
    """DynamoType(value) (as `load_item` makes it)."""
    if len(value) == 1:
        ((kind, raw),) = value.items()
        if kind != "L" and kind != "M":
            typed = DynamoType.__new__(DynamoType)
            typed.type = kind
            typed.value = raw
            return typed
    return DynamoType(value)


def replay_item(table: Any, key: dict[str, Any], image: dict[str, Any] | None) -> None:
    """`set_item` for a start: an image is loaded as `load_item` loads it."""
    if image is None:
        set_item(table, key, None)
    else:
        load_item(table, image)
