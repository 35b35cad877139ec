"""Path and query parameters shared by several routes."""

from typing import Annotated, Any

from fastapi import Path, Query

from evalsvc.logic.datasets import MAX_PAGE_SIZE

DatasetIdParam = Annotated[str, Path(alias="id", description="The dataset id")]
PageLimitParam = Annotated[
    int | None,
    Query(
        ge=1,
        le=MAX_PAGE_SIZE,
        description="Read one page of at most this many pairs; the response then carries "
        "next_cursor.",
    ),
]
PageCursorParam = Annotated[
    str | None, Query(max_length=1024, description="The next_cursor of the previous page.")
]


def list_limit(most: int, default: int, things: str, fewer: str = "") -> Any:
    """The `limit` of a list read in pages: 1 to `most` (`default` when left out) of `things`,
    a 400 naming it otherwise, as every list answers. `fewer`: when a page may hold fewer."""
    return Query(
        ge=1,
        le=most,
        description=f"At most this many {things} (1-{most}, {default} by default{fewer})",
    )
