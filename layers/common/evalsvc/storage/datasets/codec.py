"""How dataset headers and pairs are stored as items: a pair too large for one item is a
head item plus compressed parts; a long system prompt is kept apart (storage.texts).

A pair's head item holds its key, order, size and labels, and, while they are small enough
(INLINE_LIMIT), its texts as attributes: `input`, `output`, and when the pair has them
`input_media`, `system_prompt_template`, `reference` (a string) and `contexts` (a list of
strings, kept in order). Past the limit those texts are one JSON object, compressed and cut
into part items. A field the pair does not have is absent from both forms, so a pair written
without the E10 fields is stored exactly as before them; `contexts: []` is kept (an empty list
attribute, or `[]` in the JSON) and read back as [], not as absent.

E11's fields: `conversation_id` a string attribute; `messages` ([{"role", "content"}]),
`tool_calls` and `expected_tool_calls` ([{"name", "arguments"}]) each one compact JSON string
attribute inline, and JSON values in the parts' object (an empty list kept as [], as
contexts)."""

from __future__ import annotations

import json
import zlib
from typing import Any

from evalsvc.models.conversations import (
    Message,
    ToolCall,
    compact_json,
    messages_out,
    tool_calls_out,
)
from evalsvc.models.datasets import (
    DatasetHeader,
    DatasetKind,
    Pair,
    has_extra_blocks,
    pair_bytes,
)
from evalsvc.storage import dynamo, texts
from evalsvc.storage.datasets.keys import HEADER_SK, dataset_pk, ord_ms, table
from evalsvc.storage.dynamo import Item, get_list, get_n, get_s, n, s

# Pairs whose stored form is larger than this are compressed and split into part items, so no
# pair ever meets DynamoDB's 400 KB item limit.
INLINE_LIMIT = 300_000


PART_BYTES = 350_000


def header_from_item(tenant: str, kind: DatasetKind, item: Item) -> DatasetHeader:
    return DatasetHeader(
        tenant=tenant,
        kind=kind,
        dataset_id=get_s(item, "dataset_id") or "",
        system_prompt=texts.read_text(table(), tenant, item, "system_prompt"),
        created_ms=get_n(item, "created_ms"),
        updated_ms=get_n(item, "updated_ms"),
        version=get_s(item, "version") or "",
        pair_count=get_n(item, "pair_count"),
        bytes=get_n(item, "bytes") if "bytes" in item else None,
        shards=get_n(item, "shards", 1),
        append_shards=get_n(item, "append_shards"),
        appended="appended" in item,
        version_kind=get_s(item, "version_kind") or "",
    )


# A header keeps a system prompt of at most this many bytes itself, so it stays one 4 KB read
# unit: every append reads it twice (docs/design.md, "Appends"). A longer prompt is stored
# apart, once, and read from a warm process's cache of texts.
HEADER_PROMPT_BYTES = 2048


def prompt_field(tenant: str, system_prompt: str) -> Item:
    """The attributes that keep a header's system prompt (a long one is stored apart)."""
    return texts.text_field(
        table(), tenant, "system_prompt", system_prompt, inline_bytes=HEADER_PROMPT_BYTES
    )


def header_item(header: DatasetHeader, prompt: Item | None = None) -> Item:
    """The item of a header of a version just written (with no pairs appended yet: `pair_count`
    and `bytes` are those of its write); `prompt` is prompt_field of its system prompt when
    already made."""
    item: Item = {
        "pk": s(dataset_pk(header.tenant, header.kind, header.dataset_id)),
        "sk": s(HEADER_SK),
        "dataset_id": s(header.dataset_id),
        **(prompt or prompt_field(header.tenant, header.system_prompt)),
        "created_ms": n(header.created_ms),
        "updated_ms": n(header.updated_ms),
        "version": s(header.version),
        "pair_count": n(header.pair_count),
        "shards": n(header.shards),
    }
    if header.bytes is not None:
        item["bytes"] = n(header.bytes)
    if header.append_shards:
        item["append_shards"] = n(header.append_shards)
    if header.version_kind:
        item["version_kind"] = s(header.version_kind)
    return item


# E11's structured fields: kept as compact JSON inline, as JSON values in the parts' object.
_STRUCTURED = ("messages", "tool_calls", "expected_tool_calls")


def _structured(pair: Pair) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    if pair.messages is not None:
        out["messages"] = list(messages_out(pair.messages))
    if pair.tool_calls is not None:
        out["tool_calls"] = tool_calls_out(pair.tool_calls)
    if pair.expected_tool_calls is not None:
        out["expected_tool_calls"] = tool_calls_out(pair.expected_tool_calls)
    return out


def _set_structured(pair: Pair, values: dict[str, Any]) -> None:
    messages = values.get("messages")
    pair.messages = (
        None if messages is None else [Message(m["role"], m["content"]) for m in messages]
    )
    pair.tool_calls = _calls(values.get("tool_calls"))
    pair.expected_tool_calls = _calls(values.get("expected_tool_calls"))


def _calls(values: list[dict[str, Any]] | None) -> list[ToolCall] | None:
    return None if values is None else [ToolCall(c["name"], c["arguments"]) for c in values]


def _pair_body(pair: Pair) -> dict[str, str | list[str]]:
    body: dict[str, str | list[str]] = {"input": pair.input, "output": pair.output}
    if pair.input_media is not None:
        body["input_media"] = pair.input_media
    if pair.system_prompt_template is not None:
        body["system_prompt_template"] = pair.system_prompt_template
    if pair.reference is not None:
        body["reference"] = pair.reference
    if pair.contexts is not None:
        body["contexts"] = list(pair.contexts)
    if pair.conversation_id is not None:
        body["conversation_id"] = pair.conversation_id
    body.update({k: compact_json(v) for k, v in _structured(pair).items()})
    return body


def _texts(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def _attribute(value: str | list[str]) -> Item:
    return s(value) if isinstance(value, str) else dynamo.ss_list(value)


def pair_items(pk: str, pair: Pair, ord_: str) -> list[Item]:
    """The item (and, for a very large pair, the part items) that store `pair`."""
    size = pair_bytes(pair)
    head: Item = {"pk": s(pk), "sk": s(f"p#{pair.id}"), "ord": s(ord_), "b": n(size)}
    if has_extra_blocks(pair):
        # E10, E11: a pair with documents or a conversation says so on its head, so that a
        # selection read by keys alone knows how many of its pairs have them (a judge's prompt
        # is larger for them).
        head["d"] = n(size)
    if pair.labels:
        head["labels"] = dynamo.ss_list(pair.labels)
    body = _pair_body(pair)
    texts = [text for value in body.values() for text in _texts(value)]
    # Characters are at most 4 bytes of UTF-8: count exactly only when that bound is too big.
    size = sum(len(v) for v in texts) * 4
    if size >= INLINE_LIMIT:
        size = sum(len(v.encode()) for v in texts)
    if size < INLINE_LIMIT:
        head.update({k: _attribute(v) for k, v in body.items()})
        return [head]
    # In the parts' object the structured fields are JSON values, not JSON in strings.
    whole: dict[str, Any] = {k: v for k, v in body.items() if k not in _STRUCTURED}
    whole.update(_structured(pair))
    blob = zlib.compress(json.dumps(whole, separators=(",", ":")).encode(), 6)
    parts = [blob[i : i + PART_BYTES] for i in range(0, len(blob), PART_BYTES)]
    head["parts"] = n(len(parts))
    return [head] + [
        {"pk": s(pk), "sk": s(f"x#{pair.id}#{k:04d}"), "blob": {"B": part}}
        for k, part in enumerate(parts)
    ]


# What listing a pair in a response adds to its texts: keys, quotes, created_at, its metadata.
LISTED_PAIR_BYTES = 120


def listed_pair_bytes(item: Item) -> int:
    """What the pair a head item stores takes in a listing: pair_bytes (estimated for one
    written before it was kept: its texts, or its compressed parts at most 4 times over) and
    LISTED_PAIR_BYTES."""
    if "b" in item:
        return get_n(item, "b") + LISTED_PAIR_BYTES
    return dynamo.item_size(item) + get_n(item, "parts") * PART_BYTES * 4 + LISTED_PAIR_BYTES


def pair_from_item(item: Item) -> Pair:
    pair = Pair(
        id=item["sk"]["S"][2:],
        input=get_s(item, "input", "") or "",
        output=get_s(item, "output", "") or "",
        labels=get_list(item, "labels"),
        input_media=get_s(item, "input_media"),
        system_prompt_template=get_s(item, "system_prompt_template"),
        created_ms=ord_ms(item["ord"]["S"]),
        reference=get_s(item, "reference"),
        contexts=get_list(item, "contexts") if "contexts" in item else None,
        conversation_id=get_s(item, "conversation_id"),
    )
    structured = {k: get_s(item, k) for k in _STRUCTURED if k in item}
    if structured:
        _set_structured(pair, {k: json.loads(v or "null") for k, v in structured.items()})
    return pair


def load_parts(pk: str, pair: Pair, part_count: int) -> None:
    prefix = f"x#{pair.id}#"
    chunks = [
        item["blob"]["B"]
        for item in dynamo.query_items(
            TableName=table(),
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": s(pk), ":prefix": s(prefix)},
            ConsistentRead=True,
        )
    ]
    if len(chunks) != part_count:
        raise TornRead
    body = json.loads(zlib.decompress(b"".join(chunks)))
    pair.input = body["input"]
    pair.output = body["output"]
    pair.input_media = body.get("input_media")
    pair.system_prompt_template = body.get("system_prompt_template")
    pair.reference = body.get("reference")
    pair.contexts = body.get("contexts")
    pair.conversation_id = body.get("conversation_id")
    _set_structured(pair, body)


class TornRead(Exception):
    """A read raced with the deletion of the version it was reading."""
