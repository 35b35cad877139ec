"""Path and query parameters shared by several routes."""

from typing import Annotated

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
