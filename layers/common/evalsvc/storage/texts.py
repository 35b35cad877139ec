"""Texts too large to keep inside the item that uses them (a 100,000-character system prompt
is 400 KB in 4-byte UTF-8, DynamoDB's whole item limit), stored once per tenant and table under
their SHA-256 and referred to by it.

    pk                          sk          what
    T#<tenant>#text#<sha256>    part#0000   the first PART_BYTES of the zlib-compressed text
    T#<tenant>#text#<sha256>    part#0001   the next…

A referring item holds a small text itself, as the attribute `<name>`; a text of more than
INLINE_BYTES is written first (so no reader meets a reference to nothing) and the item holds
`<name>_ref` instead: {sha, bytes, parts}. A list of texts (a metrics set's definitions) is
stored the same way as its JSON.

Texts are immutable and content-addressed: writing the same text again writes the same items,
so two results scored with one long prompt share it, and a retried write is harmless. They are
never deleted (they are the inputs of stored results).
"""

from __future__ import annotations

import hashlib
import json
import threading
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from evalsvc.core.errors import StorageUnavailable
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_list, get_s, n, s

# A text of more UTF-8 bytes than this is stored apart from the item that uses it: an item
# then holds at most a few such fields inline (tens of KB), far under the 400 KB limit.
INLINE_BYTES = 32 * 1024
# Binary parts stay well under the item limit with their keys.
PART_BYTES = 350_000


@dataclass(frozen=True, slots=True)
class TextRef:
    sha: str
    bytes: int
    parts: int


def _pk(tenant: str, sha: str) -> str:
    return f"T#{tenant}#text#{sha}"


def _sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def put(table: str, tenant: str, text: str) -> TextRef:
    """Store `text` (idempotently) and return its reference."""
    raw = text.encode()
    sha = _sha(raw)
    blob = zlib.compress(raw, 6)
    pieces = [blob[i : i + PART_BYTES] for i in range(0, len(blob), PART_BYTES)] or [b""]
    pk = _pk(tenant, sha)
    dynamo.batch_write(
        table,
        [
            {"PutRequest": {"Item": {"pk": s(pk), "sk": s(f"part#{k:04d}"), "blob": {"B": part}}}}
            for k, part in enumerate(pieces)
        ],
    )
    return TextRef(sha, len(raw), len(pieces))


# Texts read lately, by table, tenant and sha: a text never changes under its sha, so a warm
# process need not read it again (every append reads its dataset's header, and so its prompt).
CACHE_BYTES = 16 * 1024 * 1024
_cache: OrderedDict[tuple[str, str, str], tuple[str, int]] = OrderedDict()
_cached_bytes = 0
_cache_lock = threading.Lock()


def _remember(key: tuple[str, str, str], text: str, size: int) -> None:
    global _cached_bytes
    if size > CACHE_BYTES // 4:
        return
    with _cache_lock:
        if key in _cache:
            return
        _cache[key] = (text, size)
        _cached_bytes += size
        while _cached_bytes > CACHE_BYTES:
            _, (_, dropped) = _cache.popitem(last=False)
            _cached_bytes -= dropped


def get(table: str, tenant: str, ref: TextRef) -> str:
    """The text `ref` names. StorageUnavailable if its parts are not all there (they are
    written before any reference to them, so only a fault makes that happen)."""
    key = (table, tenant, ref.sha)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key][0]
    items = dynamo.query_items(
        TableName=table,
        KeyConditionExpression="pk = :pk AND begins_with(sk, :part)",
        ExpressionAttributeValues={":pk": s(_pk(tenant, ref.sha)), ":part": s("part#")},
        ConsistentRead=True,
    )
    blob = b"".join(item["blob"]["B"] for item in items)
    try:
        raw = zlib.decompress(blob)
    except zlib.error:
        raw = b""
    if _sha(raw) != ref.sha:
        raise StorageUnavailable("a stored text could not be read whole; retry shortly")
    text = raw.decode()
    _remember(key, text, len(raw))
    return text


# ---- fields of referring items -----------------------------------------------------------------


def _ref_value(ref: TextRef) -> Item:
    return {"M": {"sha": s(ref.sha), "bytes": n(ref.bytes), "parts": n(ref.parts)}}


def _ref_of(item: Item, name: str) -> TextRef | None:
    value = item.get(f"{name}_ref")
    if value is None:
        return None
    ref = value["M"]
    return TextRef(ref["sha"]["S"], int(ref["bytes"]["N"]), int(ref["parts"]["N"]))


def text_field(
    table: str, tenant: str, name: str, text: str, inline_bytes: int = INLINE_BYTES
) -> Item:
    """The attributes that keep `text` as field `name` of an item (writing it apart first when
    it is over `inline_bytes`)."""
    if len(text) * 4 <= inline_bytes or len(text.encode()) <= inline_bytes:
        return {name: s(text)}
    return {f"{name}_ref": _ref_value(put(table, tenant, text))}


def list_field(table: str, tenant: str, name: str, texts: Sequence[str]) -> Item:
    """The attributes that keep the list `texts` as field `name` of an item."""
    if sum(len(t) for t in texts) * 4 <= INLINE_BYTES:
        return {name: dynamo.ss_list(texts)}
    joined = json.dumps(list(texts), ensure_ascii=False, separators=(",", ":"))
    if len(joined.encode()) <= INLINE_BYTES:
        return {name: dynamo.ss_list(texts)}
    return {f"{name}_ref": _ref_value(put(table, tenant, joined))}


def read_text(table: str, tenant: str, item: Item, name: str) -> str:
    """Field `name` of `item`, read from where it is kept ("" when absent)."""
    ref = _ref_of(item, name)
    if ref is None:
        return get_s(item, name, "") or ""
    return get(table, tenant, ref)


def read_list(table: str, tenant: str, item: Item, name: str) -> list[str]:
    """List field `name` of `item`, read from where it is kept ([] when absent)."""
    ref = _ref_of(item, name)
    if ref is None:
        return get_list(item, name)
    values = json.loads(get(table, tenant, ref))
    return [str(v) for v in values]


def field_bytes(item: Item, name: str) -> int:
    """The UTF-8 bytes of text field `name`, known without reading it when kept apart."""
    ref = _ref_of(item, name)
    if ref is not None:
        return ref.bytes
    return len((get_s(item, name, "") or "").encode())


def list_bytes(item: Item, name: str) -> int:
    """The UTF-8 bytes of list field `name` (its JSON when kept apart)."""
    ref = _ref_of(item, name)
    if ref is not None:
        return ref.bytes
    return sum(len(v.encode()) for v in get_list(item, name))
