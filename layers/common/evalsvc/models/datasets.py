"""Datasets and pairs: the domain types, and the request models of the dataset routes (their
answers' shapes are models.dataset_out's)."""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import CLIENT_ID_RULE, is_client_id
from evalsvc.models.conversations import (
    MAX_ARGUMENTS_BYTES,
    MAX_CONVERSATION_ID_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_MESSAGES,
    MAX_TOOL_CALLS,
    MAX_TOOL_NAME_CHARS,
    Message,
    Role,
    ToolCall,
    arguments_bytes,
    compact_json,
    messages_out,
    tool_calls_out,
)

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
# The most UTF-8 bytes one pair's texts may take (pair_bytes), whatever its fields: a pair is
# appended in one DynamoDB transaction (4 MB at most) and answered alone in one response. A
# pair at every E10 limit takes about 3.46 MB; E11's fields share what is left.
MAX_PAIR_BYTES = 3_500_000
# Tool call arguments are read back with the standard JSON reader: integers longer than this
# (which it refuses) and deeper nesting are refused when written.
MAX_ARGUMENT_INT_DIGITS = 4_000
MAX_ARGUMENT_DEPTH = 64


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


def optional_fields_out(pair: Pair | None) -> dict[str, object]:
    """A pair's optional fields of E10 (`reference`, `contexts`) and E11 (`messages`,
    `tool_calls`, `expected_tool_calls`, `conversation_id`) as every read of a pair answers
    them: each only when the pair has it, so a pair written without them is answered as
    before."""
    out: dict[str, object] = {}
    if pair is None:
        return out
    if pair.reference is not None:
        out["reference"] = pair.reference
    if pair.contexts is not None:
        out["contexts"] = pair.contexts
    if pair.messages is not None:
        out["messages"] = messages_out(pair.messages)
    if pair.tool_calls is not None:
        out["tool_calls"] = tool_calls_out(pair.tool_calls)
    if pair.expected_tool_calls is not None:
        out["expected_tool_calls"] = tool_calls_out(pair.expected_tool_calls)
    if pair.conversation_id is not None:
        out["conversation_id"] = pair.conversation_id
    return out


def has_extra_blocks(pair: Pair) -> bool:
    """Whether a judge's question about `pair` shows more than its input and output: documents
    (E10) or a conversation and tool calls (E11). Such a pair's head item says so (`d`)."""
    return (
        pair.reference is not None
        or pair.contexts is not None
        or bool(pair.messages)
        or bool(pair.tool_calls)
    )


def text_bytes(text: str) -> int:
    """The UTF-8 size of `text` (a lone surrogate counted as the 3 bytes it is stored as)."""
    return len(text.encode("utf-8", "surrogatepass"))


def pair_bytes(pair: Pair) -> int:
    """What a pair's texts take: id, input, output, labels, media, template, reference and
    contexts, messages (role and content), tool calls (name and arguments as compact JSON) and
    conversation id, in UTF-8. Stored on dataset headers, so a reader knows how large a dataset
    is before reading it."""
    texts = [pair.id, pair.input, pair.output, *pair.labels, *(pair.contexts or ())]
    optional = (
        pair.input_media,
        pair.system_prompt_template,
        pair.reference,
        pair.conversation_id,
    )
    texts += [t for t in optional if t is not None]
    for message in pair.messages or ():
        texts += (message.role, message.content)
    for call in (*(pair.tool_calls or ()), *(pair.expected_tool_calls or ())):
        texts += (call.name, compact_json(call.arguments))
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


class MessageIn(BaseModel):
    """One message of the conversation before a pair's input (E11)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    role: Role
    content: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)]


def _depth_and_digits(value: Any) -> None:
    """Refuse arguments the stored form could not be read back from: nesting deeper than
    MAX_ARGUMENT_DEPTH, an integer longer than MAX_ARGUMENT_INT_DIGITS (iteratively: a hostile
    value cannot exhaust the stack)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > MAX_ARGUMENT_DEPTH:
                raise ValueError(f"arguments are nested more than {MAX_ARGUMENT_DEPTH} levels")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, int) and not isinstance(item, bool):
            # Compared, not converted: str() of a huge int is what is being refused.
            if abs(item) >= _TOO_MANY_DIGITS:
                raise ValueError(
                    f"an integer in the arguments has more than {MAX_ARGUMENT_INT_DIGITS} digits"
                )
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError("arguments hold a number JSON cannot carry (NaN or infinity)")


_TOO_MANY_DIGITS = 10**MAX_ARGUMENT_INT_DIGITS


def _arguments(value: dict[str, Any]) -> dict[str, Any]:
    _depth_and_digits(value)
    size = arguments_bytes(value)
    if size > MAX_ARGUMENTS_BYTES:
        raise PydanticCustomError(
            "too_long",
            "arguments take {size} bytes as JSON; at most {limit} are allowed",
            {"size": size, "limit": MAX_ARGUMENTS_BYTES},
        )
    return value


class ToolCallIn(BaseModel):
    """One call of a tool (E11): its name and its arguments, a JSON object."""

    model_config = ConfigDict(strict=True, extra="ignore")

    name: Annotated[str, Field(min_length=1, max_length=MAX_TOOL_NAME_CHARS)]
    arguments: Annotated[dict[str, Any], AfterValidator(_arguments)]


ToolCallsIn = Annotated[list[ToolCallIn], Field(max_length=MAX_TOOL_CALLS)]


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
    messages: list[MessageIn] | None = Field(
        default=None,
        max_length=MAX_MESSAGES,
        description="The conversation before input, oldest first (at most 200 messages, each a "
        "role of system, user, assistant or tool and a content of at most 100,000 characters): "
        "what a question's judge reads before the input",
    )
    tool_calls: ToolCallsIn | None = Field(
        default=None,
        description="The tools the app called, in order (at most 100; a name of 1-128 "
        "characters and arguments, a JSON object of at most 16 KB): what check:trajectory:* "
        "and check:tool_recall compare with expected_tool_calls",
    )
    expected_tool_calls: ToolCallsIn | None = Field(
        default=None,
        description="The tools the app should have called, in order (as tool_calls); without "
        "it the trajectory checks do not apply to the pair, while [] expects no call",
    )
    conversation_id: (
        Annotated[str, Field(min_length=1, max_length=MAX_CONVERSATION_ID_CHARS)] | None
    ) = Field(
        default=None,
        description="The conversation the pair belongs to (1-128 characters): what "
        'cluster_by "conversation" clusters by',
    )

    @model_validator(mode="after")
    def _within_pair_bytes(self) -> PairIn:
        size = pair_bytes(to_domain_pair(self, self.id or ""))
        if size > MAX_PAIR_BYTES:
            raise PydanticCustomError(
                "too_long",
                "the pair's texts take {size} bytes of UTF-8; one pair may take at most {limit}",
                {"size": size, "limit": MAX_PAIR_BYTES},
            )
        return self


def to_domain_pair(item: PairIn, pair_id: str) -> Pair:
    """The pair `item` describes, under `pair_id`."""
    return Pair(
        id=pair_id,
        input=item.input,
        output=item.output,
        labels=list(item.labels or []),
        input_media=item.input_media,
        system_prompt_template=item.system_prompt_template,
        reference=item.reference,
        contexts=list(item.contexts) if item.contexts is not None else None,
        messages=(
            [Message(m.role, m.content) for m in item.messages]
            if item.messages is not None
            else None
        ),
        tool_calls=_calls(item.tool_calls),
        expected_tool_calls=_calls(item.expected_tool_calls),
        conversation_id=item.conversation_id,
    )


def _calls(items: list[ToolCallIn] | None) -> list[ToolCall] | None:
    return None if items is None else [ToolCall(c.name, c.arguments) for c in items]


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
