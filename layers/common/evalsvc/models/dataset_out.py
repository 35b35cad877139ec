"""The v1 shapes of the dataset routes' answers (a dataset written, a pair added, a dataset read,
its versions). Apart from models.datasets, which every route imports (through logic.datasets
and the pair queries), so that only the dataset routes build these models at their start."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from evalsvc.models.common import ListNextCursor
from evalsvc.models.pair_fields_out import OptionalPairFields

# ---- responses ---------------------------------------------------------------------------------


class DatasetWritten(BaseModel):
    id: str


class PairAdded(BaseModel):
    dataset_id: str
    pair_id: str


class PairMetadata(BaseModel):
    created_at: str
    labels: list[str]


NextCursor = Annotated[
    str | None,
    Field(
        description="Only with `limit` or `cursor`: the cursor of the next page, null on the last"
    ),
]


class SeedPairOut(OptionalPairFields):
    id: str
    input: str
    output: str
    metadata: PairMetadata
    input_media: str | None = None
    system_prompt_template: str | None = None


class SeedDatasetOut(BaseModel):
    id: str
    data: list[SeedPairOut]
    system_prompt: str
    created_at: str
    next_cursor: NextCursor = None


class SyntheticPairOut(OptionalPairFields):
    id: str
    input: str
    output: str


class SyntheticDatasetOut(BaseModel):
    id: str
    data: list[SyntheticPairOut]
    system_prompt: str
    created_at: str
    next_cursor: NextCursor = None


class DatasetVersionOut(BaseModel):
    """One version of a dataset (E7)."""

    version: str = Field(
        description="The version's id, as an evaluation's inputs.dataset_version names it"
    )
    created_at: str = Field(description="When it was written: ISO 8601 UTC with milliseconds")
    kind: Literal["create", "overwrite"] = Field(
        description="How it was written: the dataset's first write, or an overwrite of it"
    )
    pairs: int = Field(
        description="Its pairs: the current version's now (appended ones included), a replaced "
        "one's when it was replaced"
    )
    replaced_at: str | None = Field(
        description="When an overwrite replaced it; null for the current version"
    )
    expires_at: str | None = Field(
        description="When its retention (EVALSVC_VERSION_RETENTION_DAYS after it was replaced) "
        "ends: then the results that scored it can no longer list their pairs or be run again; "
        "null for the current version"
    )


class DatasetVersionsOut(BaseModel):
    """A page of a dataset's versions."""

    versions: list[DatasetVersionOut] = Field(
        description="Newest first: the current version (first on the first page), then those "
        "overwrites replaced, while they are kept"
    )
    next_cursor: ListNextCursor
