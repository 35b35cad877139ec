"""Queries and their pages (fastpath/__init__.py: "Queries", "Pages"): a query is given a view
of the table holding the one partition it asks for, and for a tracked table only the run of
items its key condition and start key can match, cut where moto's page loop would stop; its
items are not deep-copied, their sizes are kept until the table changes, and string keys sort
as themselves."""

from __future__ import annotations

import bisect
import copy
import logging
import threading
from typing import Any

log = logging.getLogger("evalsvc.local")
_no_item_copies = threading.local()
# While a query of a tracked table runs: the sizes of its items, kept until the table changes.
_item_sizes = threading.local()


def track(table: Any) -> None:
    """Keep page orders for `table`: every write to it must be followed by `changed(table)`."""
    if not hasattr(table, "_evalsvc_writes"):
        table._evalsvc_writes = 0
        table._evalsvc_orders = {}


def _sizes_of(table: Any) -> dict[int, tuple[Any, int]]:
    """The item sizes of a tracked table worked out since its last write, by item."""
    sizes: dict[int, tuple[Any, int]] = table._evalsvc_orders.setdefault("sizes", {})
    return sizes


def changed(table: Any) -> None:
    """A write to `table` happened: forget its page orders."""
    if hasattr(table, "_evalsvc_writes"):
        table._evalsvc_writes += 1
        table._evalsvc_orders = {}


def _ordered(
    table: Any, value: Any, index_name: str | None
) -> tuple[list[Any], dict[Any, int], list[Any], str]:
    """The partition's items in the order moto's query returns them (forward), each one's
    position by its table sort key, their sort key values in that order, and the sort key's
    name; kept until the table changes."""
    orders: dict[Any, Any] = table._evalsvc_orders
    found = orders.get((value, index_name))
    if found is None:
        partition = table.items.get(value) or {}
        if index_name is None:
            sort_key = table.range_key_attr
            items = sorted(partition.values(), key=lambda item: item.range_key)
        else:
            index = next(i for i in table.indexes if i.name == index_name)
            sort_key = next(k["AttributeName"] for k in index.schema if k["KeyType"] == "RANGE")
            items = [item for item in partition.values() if item.attrs.get(sort_key)]
            items = table.sorted_items(
                [table.hash_key_attr, table.hash_key_attr], [sort_key, table.range_key_attr], items
            )
        positions = {item.range_key: k for k, item in enumerate(items)}
        found = items, positions, [item.attrs[sort_key] for item in items], sort_key
        orders[(value, index_name)] = found
    return found


def _run(keys: list[Any], comparison: str | None, values: list[Any]) -> tuple[int, int]:
    """Bounds of a run of `keys` (sorted) holding every key that can meet the condition: a
    superset where unsure (moto tests each item again)."""
    whole = 0, len(keys)
    if not comparison or not values:
        return whole
    try:
        first = values[0]
        if comparison in ("=", "EQ"):
            return bisect.bisect_left(keys, first), bisect.bisect_right(keys, first)
        if comparison in ("<", "LT"):
            return 0, bisect.bisect_left(keys, first)
        if comparison in ("<=", "LE"):
            return 0, bisect.bisect_right(keys, first)
        if comparison in (">", "GT"):
            return bisect.bisect_right(keys, first), len(keys)
        if comparison in (">=", "GE", "BEGINS_WITH", "begins_with"):
            return bisect.bisect_left(keys, first), len(keys)
        if comparison == "BETWEEN" and len(values) == 2:
            return bisect.bisect_left(keys, first), bisect.bisect_right(keys, values[1])
    except TypeError:
        pass
    return whole


def _narrowed(
    table: Any, value: Any, index_name: str | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> list[Any] | None:
    """The items of a tracked table's partition that a query can return, in order, after its
    start key; None to leave the query to moto as it is."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    comparison, values, _, start, forward = args[:5]
    items, positions, keys, sort_key = _ordered(table, value, index_name)
    conditions = kwargs.get("range_key_conditions") or []
    if comparison and (len(conditions) != 1 or conditions[0][0] != sort_key):
        return None
    low, high = _run(keys, comparison, values)
    if start:
        if table.range_key_attr not in start:
            return None
        position = positions.get(DynamoType(start[table.range_key_attr]))
        if position is None:
            return None  # the start item is gone: moto's own walk decides
        if forward is False:
            high = min(high, position)
        else:
            low = max(low, position + 1)
    return items[low:high]


def _global_partitions(table: Any, index: Any) -> dict[Any, tuple[list[Any], list[Any], list[Any]]]:
    """Every partition of the global index `index` (hash and range key, one each): by its hash
    value, its items in the order moto's query returns them (forward), their index sort key
    values in that order, and their whole sort tuples (index sort key, table hash and range
    key, as moto orders and pages them); kept until the table changes. Items lacking either
    index key are in no partition, as moto leaves them out."""
    orders: dict[Any, Any] = table._evalsvc_orders
    found = orders.get(("global", index.name))
    if found is None:
        hash_name, sort_key = _global_keys(index)
        members: dict[Any, list[Any]] = {}
        for partition in table.items.values():
            for item in partition.values():
                value = item.attrs.get(hash_name)
                if value is not None and item.attrs.get(sort_key) is not None:
                    members.setdefault(value, []).append(item)
        found = {}
        hash_names = [hash_name, table.hash_key_attr]
        range_names = [sort_key, table.range_key_attr]
        for value, items in members.items():
            items = table.sorted_items(hash_names, range_names, items)
            tuples = [
                (
                    item.attrs[sort_key],
                    item.attrs[table.hash_key_attr],
                    item.attrs[table.range_key_attr],
                )
                for item in items
            ]
            found[value] = items, [t[0] for t in tuples], tuples
        orders[("global", index.name)] = found
    return found


def _global_keys(index: Any) -> tuple[str, str]:
    (hash_name,) = [k["AttributeName"] for k in index.schema if k["KeyType"] == "HASH"]
    (sort_key,) = [k["AttributeName"] for k in index.schema if k["KeyType"] == "RANGE"]
    return hash_name, sort_key


def _global_run(
    table: Any, index_name: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], str] | None:
    """For a query of a tracked table's global index: the items of the index's partition it
    can return, in order, after its start key, and the index's sort key; None to leave the
    query to moto as it is."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    index = next(i for i in table.global_indexes if i.name == index_name)
    kinds = [k["KeyType"] for k in index.schema]
    if sorted(kinds) != ["HASH", "RANGE"]:
        return None  # a key of several attributes, or no sort key: moto's own walk
    hash_name, sort_key = _global_keys(index)
    conditions = kwargs.get("hash_key_conditions") or []
    if len(conditions) != 1 or conditions[0][0] != hash_name:
        return None
    value = conditions[0][1]
    comparison, values, _, start, forward = args[:5]
    range_conditions = kwargs.get("range_key_conditions") or []
    if comparison and (len(range_conditions) != 1 or range_conditions[0][0] != sort_key):
        return None
    try:
        partitions = _global_partitions(table, index)
    except TypeError:  # sort keys of types that do not compare: moto fails as it does
        table._evalsvc_orders.pop(("global", index_name), None)
        return None
    items, keys, tuples = partitions.get(value) or ([], [], [])
    low, high = _run(keys, comparison, values)
    if start:
        names = (sort_key, table.hash_key_attr, table.range_key_attr)
        if any(name not in start for name in (hash_name, *names)):
            return None
        if DynamoType(start[hash_name]) != value:
            return None
        # moto skips every item up to and including the start key in its order: bisection
        # over the same order finds where it stops skipping.
        position = tuple(DynamoType(start[name]) for name in names)
        try:
            if forward is False:
                high = min(high, bisect.bisect_left(tuples, position))
            else:
                low = max(low, bisect.bisect_right(tuples, position))
        except TypeError:
            return None
    return items[low:high], sort_key


def _page_cut(
    run: list[Any], sort_key: str, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> int | None:
    """How many items of `run` (from its start, or its end for a backward query) moto's page
    loop reaches before it stops at its Limit or 1 MB, counted as it counts them: None when it
    would reach the end, or when it counts in a way not followed here (legacy filters)."""
    from moto.dynamodb.models import table as table_module

    if set(kwargs) - _KNOWN_QUERY_KWARGS:
        return None
    comparison, values, limit = args[0], args[1], args[2]
    forward = args[4] is not False
    most = table_module.RESULT_SIZE_LIMIT
    accepted = 0
    total = 0
    for seen, item in enumerate(run if forward else reversed(run)):
        if limit is not None and accepted == limit:
            return seen + 1
        size = item.size()
        if total + size > most:
            return seen + 1
        if comparison:
            value = item.attrs.get(sort_key)
            if value is None or not value.compare(comparison, values):
                continue
        accepted += 1
        total += size
    return None


# Keyword arguments of moto's Table.query that do not change how its page loop counts.
_KNOWN_QUERY_KWARGS = frozenset(
    {
        "index_name",
        "consistent_read",
        "filter_expression",
        "hash_key_conditions",
        "range_key_conditions",
    }
)


def _sized_query(
    query: Any, self: Any, tracked: bool, hash_key: Any, *args: Any, **kwargs: Any
) -> Any:
    """moto's `query` of a table's partition, or of the run of it a page can reach."""
    index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
    table = self
    cut_at: Any = None
    narrowed: tuple[list[Any], str] | None = None
    if index_name and index_name in {index.name for index in self.global_indexes or []}:
        if tracked and self.range_key_attr:
            narrowed = _global_run(self, index_name, args, kwargs)
    else:
        value = hash_key
        if index_name:
            local = {index.name for index in self.indexes or []}
            conditions = dict(kwargs.get("hash_key_conditions") or [])
            value = conditions.get(self.hash_key_attr) if index_name in local else None
        if value is not None and self.range_key_attr:
            table = copy.copy(self)
            partition = self.items.get(value)
            table.items = {value: partition} if partition else {}
            if tracked:
                run = _narrowed(self, value, index_name, args, kwargs)
                if run is not None:
                    narrowed = run, _ordered(self, value, index_name)[3]
    if narrowed is not None:
        run, sort_key = narrowed
        cut = _page_cut(run, sort_key, args, kwargs)
        if cut is not None:
            # Only the items this page can reach: the rest of the partition (or of the
            # index's partition) is neither copied nor sorted again for every page.
            run = run[:cut] if args[4] is not False else run[len(run) - cut :]
            cut_at = run[-1] if args[4] is not False else run[0]
        if table is self:
            table = copy.copy(self)
        grouped: dict[Any, dict[Any, Any]] = {}
        for item in run:
            grouped.setdefault(item.hash_key, {})[item.range_key] = item
        table.items = grouped
        args = (*args[:3], None, *args[4:])
    _no_item_copies.active = True
    try:
        results, scanned, last = query(table, hash_key, *args, **kwargs)
    finally:
        _no_item_copies.active = False
    if cut_at is not None and last is None:
        # The page ended at the cut, not at moto's limit (this cannot happen when the cut is
        # where moto's loop stops): the next page goes on after the cut.
        log.warning("a cut query page ended early; the next page goes on from the cut")
        last = self._get_last_evaluated_key(cut_at, index_name)
    return results, scanned, last


def patches() -> list[tuple[Any, str, Any]]:
    """The queries' patches of moto, each (owner, name, replacement); `fastpath._patch` has
    checked moto has what they replace."""
    from moto.dynamodb.models.dynamo_type import DynamoType, Item
    from moto.dynamodb.models.table import Table

    query = Table.query
    item_deepcopy = Item.__deepcopy__

    def query_item_deepcopy(self: Any, memo: dict[int, Any]) -> Any:
        if getattr(_no_item_copies, "active", False):
            return self
        return item_deepcopy(self, memo)

    def partition_query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        tracked = hasattr(self, "_evalsvc_writes") and len(args) > 4
        _item_sizes.known = _sizes_of(self) if tracked else None
        try:
            return _sized_query(query, self, tracked, hash_key, *args, **kwargs)
        finally:
            _item_sizes.known = None

    cast_value = DynamoType.__dict__["cast_value"]

    def string_cast_value(self: Any) -> Any:
        # A string is its own value; every other type as moto casts it. Sorting a page's items
        # compares their keys through this.
        if self.type == "S":
            return self.value
        return cast_value.fget(self)

    item_size = Item.size

    def known_size(self: Any) -> int:
        # An item's size is summed over every attribute value, nested ones too; a page of a
        # query asks for it twice, and the next page and query again, while nothing changed.
        known = getattr(_item_sizes, "known", None)
        if known is None:
            return item_size(self)
        found = known.get(id(self))
        if found is None or found[0] is not self:
            found = known[id(self)] = self, item_size(self)
        return found[1]  # type: ignore[no-any-return]

    return [
        (Item, "__deepcopy__", query_item_deepcopy),
        (Table, "query", partition_query),
        (Item, "size", known_size),
        (DynamoType, "cast_value", property(string_cast_value)),
    ]
