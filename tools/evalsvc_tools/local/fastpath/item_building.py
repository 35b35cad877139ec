"""How moto builds an item (fastpath/__init__.py: "Items", "Projections"): a new item is
checked against the 400 KB limit once, on its total, rather than as each attribute is added;
a projection of top-level attributes only takes them as they are."""

from __future__ import annotations

from typing import Any

# moto's own item size limit (LimitedSizeDict): DynamoDB's 400 KB, as moto measures it.
ITEM_SIZE_LIMIT = 405_000


def patches() -> list[tuple[Any, str, Any]]:
    """The item building patches of moto (which `fastpath._patch` has checked)."""
    from moto.dynamodb.exceptions import ItemSizeTooLarge
    from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
    from moto.dynamodb.models.utilities import bytesize

    project = Item.project

    def item_checked_once(self: Any, hash_key: Any, range_key: Any, attrs: dict[str, Any]) -> None:
        self.hash_key = hash_key
        self.range_key = range_key
        self.attrs = LimitedSizeDict()
        size = 0
        for name, value in attrs.items():
            typed = DynamoType(value)
            size += bytesize(name) + typed.size()
            dict.__setitem__(self.attrs, name, typed)
        if size > ITEM_SIZE_LIMIT:
            raise ItemSizeTooLarge

    def top_level_project(self: Any, projection_expressions: list[list[str]]) -> Any:
        names = [path[0] for path in projection_expressions if len(path) == 1]
        if len(names) != len(projection_expressions) or any("[" in name for name in names):
            return project(self, projection_expressions)
        projected = Item(self.hash_key, self.range_key, {})
        for name in names:
            if name in self.attrs:
                dict.__setitem__(projected.attrs, name, self.attrs[name])
        return projected

    return [
        (Item, "project", top_level_project),
        (Item, "__init__", item_checked_once),
    ]
