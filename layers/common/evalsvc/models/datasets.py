"""Datasets and pairs: the domain types, and the request models of the dataset routes (their
answers' shapes are models.dataset_out's)."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import CLIENT_ID_RULE, is_client_id
from evalsvc.models.conversations import Message, ToolCall

MAX_TEXT_CHARS = 100_000
# The most bytes a pair's texts take: input and output at the limit, 4-byte UTF-8 each.
MAX_PAIR_TEXT_BYTES = 2 * MAX_TEXT_CHARS * 4
MAX_PAIRS = 100_000
MAX_LABELS = 32
MAX_LABEL_CHARS = 128
MAX_INPUT_MEDIA_CHARS = 256 * 1024
# E10: the answer a pair should give, and what the app retrieved to answer (in rank order).
MAX_REFERENCE_CHARS = 100_000
MAX_CONTEXTS = 20
MAX_CONTEXT_CHARS = 20_000


class DatasetKind(StrEnum):
    SEED = "seed"
    SYNTHETIC = "synthetic"


@dataclass(slots=True)
class Pair:
    id: str
    input: str
    output: str
    labels: list[str] = field(default_factory=list)
    input_media: str | None = None
    system_prompt_template: str | None = None
    created_ms: int = 0
    # E10: absent (None) on a pair written without them; a metric that needs one is then not
    # applicable to the pair (models.metric_sets.missing).
    reference: str | None = None
    contexts: list[str] | None = None
    # E11: the conversation before `input`, the tools the app called and those it should have
    # called, and the conversation the pair belongs to; absent (None) on a pair without them.
    messages: list[Message] | None = None
    tool_calls: list[ToolCall] | None = None
    expected_tool_calls: list[ToolCall] | None = None
    conversation_id: str | None = None


def documents_out(reference: str | None, contexts: list[str] | None) -> dict[str, object]:
    """A pair's `reference` and `contexts` (E10) as every read of a pair answers them: each only
    when the pair has it, so a pair written without them is answered as before."""
    out: dict[str, object] = {}
    if reference is not None:
        out["reference"] = reference
    if contexts is not None:
        out["contexts"] = contexts
    return out


def text_bytes(text: str) -> int:
    """The UTF-8 size of `text` (a lone surrogate counted as the 3 bytes it is stored as)."""
    return len(text.encode("utf-8", "surrogatepass"))


def pair_bytes(pair: Pair) -> int:
    """What a pair's texts take: id, input, output, labels, media, template, reference and
    contexts, in UTF-8. Stored on dataset headers, so a reader knows how large a dataset is
    before reading it."""
    texts = [pair.id, pair.input, pair.output, *pair.labels, *(pair.contexts or ())]
    optional = (pair.input_media, pair.system_prompt_template, pair.reference)
    texts += [t for t in optional if t is not None]
    return sum(text_bytes(t) for t in texts)


@dataclass(slots=True)
class DatasetHeader:
    tenant: str
    kind: DatasetKind
    dataset_id: str
    system_prompt: str
    created_ms: int
    updated_ms: int
    version: str
    # The version's pairs: those written with it and those appended since (counted apart from
    # the header, storage.datasets.appends).
    pair_count: int
    # pair_bytes of every pair; None for a header written before it was kept.
    bytes: int | None = None
    # Partition keys the pairs written with the version are spread over, as many as its write
    # needed (0 for none; 1 for a version written before they were spread).
    shards: int = 1
    # Partition keys the pairs appended to the version are spread over, apart from the written
    # ones (0: appended into the written ones, as for every version stored before versions were
    # sized). storage.datasets.keys.
    append_shards: int = 0
    # Whether pairs were appended to the version (their counts are then read apart).
    appended: bool = False
    # How the version was made: "create" or "overwrite" ("": a header stored before it was
    # kept; storage.datasets.history.header_kind tells).
    version_kind: str = ""

    @property
    def bytes_per_pair(self) -> float | None:
        if self.bytes is None:
            return None
        return self.bytes / self.pair_count if self.pair_count else 0.0


@dataclass(slots=True)
class Dataset:
    header: DatasetHeader
    pairs: list[Pair]
    # Set when the pairs are one page of the dataset and more follow.
    next_cursor: PageCursor | None = None


@dataclass(frozen=True, slots=True)
class PageCursor:
    """Where a page of a dataset ended: the version read, and the last pair's order key and id.
    Clients see it as an opaque string."""

    version: str
    ord: str
    pair_id: str

    def encode(self) -> str:
        raw = f"{self.version}|{self.ord}|{self.pair_id}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> PageCursor:
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode()
            version, ord_, pair_id = raw.split("|")
        except ValueError as exc:
            raise InvalidInput(
                "cursor is not valid: pass the next_cursor of the previous page as it was"
            ) from exc
        if not (version and ord_ and pair_id):
            raise InvalidInput(
                "cursor is not valid: pass the next_cursor of the previous page as it was"
            )
        return cls(version, ord_, pair_id)


# ---- requests ----------------------------------------------------------------------------------


def _client_id(value: str) -> str:
    if not is_client_id(value):
        raise ValueError(f"must be {CLIENT_ID_RULE}")
    return value


ClientId = Annotated[str, AfterValidator(_client_id)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
Label = Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]


class PairIn(BaseModel):
    """One pair as a client writes it."""

    model_config = ConfigDict(strict=True, extra="ignore")

    id: ClientId | None = None
    input: Text
    output: Text
    labels: list[Label] | None = Field(default=None, max_length=MAX_LABELS)
    input_media: Annotated[str, Field(max_length=MAX_INPUT_MEDIA_CHARS)] | None = None
    system_prompt_template: Text | None = None
    reference: Annotated[str, Field(max_length=MAX_REFERENCE_CHARS)] | None = Field(
        default=None,
        description="The answer the pair should give (at most 100,000 characters): what "
        "check:exact_match, token_f1, rouge_l, chrf, embed:similarity and rag:context_recall "
        "compare with",
    )
    contexts: list[Annotated[str, Field(min_length=1, max_length=MAX_CONTEXT_CHARS)]] | None = (
        Field(
            default=None,
            max_length=MAX_CONTEXTS,
            description="What the app retrieved to answer, in rank order (at most 20 texts of "
            "1-20,000 characters): what rag:faithfulness and rag:context_recall check against",
        )
    )


class SeedDatasetIn(BaseModel):
    """The whole of a seed dataset, as written by insert/overwrite."""

    model_config = ConfigDict(strict=True, extra="ignore")

    data: list[PairIn] = Field(max_length=MAX_PAIRS)
    system_prompt: Text | None = None

    @model_validator(mode="after")
    def _unique_pair_ids(self) -> SeedDatasetIn:
        seen: set[str] = set()
        for index, pair in enumerate(self.data):
            if pair.id is None:
                continue
            if pair.id in seen:
                raise ValueError(f"pair id {pair.id!r} appears more than once (data[{index}])")
            seen.add(pair.id)
        return self


class PairWithPromptIn(PairIn):
    """A pair filed under the dataset whose system prompt equals its template."""

    system_prompt_template: Text


# The most seconds a pair query's last_n_seconds reaches back.
MAX_LAST_N_SECONDS = 10 * 366 * 24 * 3600


# Here, with the dataset shapes, rather than with the evaluation models: what reads pairs by
# query (logic.datasets, a monitor, an augmentation) need not build those.
class PairQuery(BaseModel):
    """Which pairs to evaluate; the filters combine with AND."""

    model_config = ConfigDict(strict=True, extra="ignore")

    latest_n_pairs: int | None = Field(default=None, ge=1, le=MAX_PAIRS)
    pair_labels: list[Annotated[str, Field(min_length=1, max_length=MAX_LABEL_CHARS)]] | None = (
        Field(default=None, max_length=MAX_LABELS)
    )
    last_n_seconds: int | None = Field(default=None, ge=1, le=MAX_LAST_N_SECONDS)


class VersionKind(StrEnum):
    CREATE = "create"
    OVERWRITE = "overwrite"


@dataclass(frozen=True, slots=True)
class VersionRecord:
    """One version of a dataset: `created_ms` when it was made, by `kind`; `pairs` and `bytes`
    (pair_bytes; None when not kept) those it held (when replaced, as last counted); where they
    are (`shards`, `append_shards`); for a replaced version when (`replaced_ms`) and when it
    expires (`expires_ms`)."""

    version: str
    created_ms: int
    kind: VersionKind
    pairs: int
    bytes: int | None
    shards: int
    append_shards: int
    replaced_ms: int | None = None
    expires_ms: int | None = None

    def expired(self, now_ms: int) -> bool:
        return self.expires_ms is not None and self.expires_ms <= now_ms
