"""What a result scored, as one digest (E7's `pairs_digest`): equal for two results over the
same pairs, whatever happened to the dataset between them, and whatever chunks a queued
evaluation cut them into.

The canonical form, version 1:

    field(t)       = len(t in UTF-8) as 8 bytes big-endian, then t in UTF-8 (a lone surrogate
                     as the 3 bytes it is stored as)
    optional(t)    = b"\\x00" when t is absent, else b"\\x01" + field(t)
    pair_digest(p) = SHA-256(b"evalsvc-pair-v1\\x00" + field(id) + field(input) + field(output)
                             + len(labels) as 4 bytes big-endian + field(label) for each label,
                             in order + optional(input_media)
                             + optional(system_prompt_template)
                             + field("reference") + field(reference), only when it has one
                             + field("contexts") + len(contexts) as 4 bytes big-endian
                               + field(context) for each context, in order, only when it has
                               them
                             + field("messages") + len(messages) as 4 bytes big-endian
                               + field(role) + field(content) for each message, in order, only
                               when it has them
                             + field(name) + len(calls) as 4 bytes big-endian
                               + field(call name) + field(canonical JSON of its arguments) for
                               each call, in order, for name "tool_calls" then
                               "expected_tool_calls", each only when it has them
                             + field("conversation_id") + field(conversation_id), only when it
                               has one)
    pairs_digest   = hex SHA-256(b"evalsvc-pairs-v1\\x00" + n as 8 bytes big-endian
                                 + the n pair digests sorted bytewise, concatenated)

Every text is length-prefixed, so no two different pairs share an encoding ("ab" + "c" is not
"a" + "bc", nor are contexts ["ab", "c"] contexts ["a", "bc"]); an absent text is not an empty
one, and absent contexts are not an empty list. E10's fields (reference, contexts) come after
the rest, each named, and only when the pair has them, and E11's (messages, tool calls,
conversation id) after those, alike: a pair without them has the digest it had before they
existed, and a result's pairs_digest stays what it was. A call's arguments are digested in
their canonical JSON (models.conversations: keys sorted, 1.0 as 1), so the same call written
with its keys in another order digests the same. The pair digests are
sorted, so the order the pairs were read or chunked in does not matter: each chunk of a queued
evaluation keeps its pairs' 32-byte digests, and the finish sorts them all (3.2 MB for 100,000
pairs).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence

from evalsvc.models.conversations import ToolCall, canonical_json
from evalsvc.models.datasets import Pair

PAIR_PREFIX = b"evalsvc-pair-v1\x00"
PAIRS_PREFIX = b"evalsvc-pairs-v1\x00"
DIGEST_BYTES = 32


def _field(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogatepass")
    return len(raw).to_bytes(8, "big") + raw


def _optional(text: str | None) -> bytes:
    return b"\x00" if text is None else b"\x01" + _field(text)


def pair_digest(pair: Pair) -> bytes:
    """The 32-byte SHA-256 of one pair's canonical form (the module's docstring)."""
    h = hashlib.sha256(PAIR_PREFIX)
    for text in (pair.id, pair.input, pair.output):
        h.update(_field(text))
    h.update(len(pair.labels).to_bytes(4, "big"))
    for label in pair.labels:
        h.update(_field(label))
    h.update(_optional(pair.input_media))
    h.update(_optional(pair.system_prompt_template))
    # E10: named and only when present, so a pair without them keeps its digest.
    if pair.reference is not None:
        h.update(_field("reference") + _field(pair.reference))
    if pair.contexts is not None:
        h.update(_field("contexts") + len(pair.contexts).to_bytes(4, "big"))
        for context in pair.contexts:
            h.update(_field(context))
    # E11: alike, after E10's.
    if pair.messages is not None:
        h.update(_field("messages") + len(pair.messages).to_bytes(4, "big"))
        for message in pair.messages:
            h.update(_field(message.role) + _field(message.content))
    _calls(h, "tool_calls", pair.tool_calls)
    _calls(h, "expected_tool_calls", pair.expected_tool_calls)
    if pair.conversation_id is not None:
        h.update(_field("conversation_id") + _field(pair.conversation_id))
    return h.digest()


def _calls(h: hashlib._Hash, name: str, calls: list[ToolCall] | None) -> None:
    if calls is None:
        return
    h.update(_field(name) + len(calls).to_bytes(4, "big"))
    for call in calls:
        h.update(_field(call.name) + _field(canonical_json(call.arguments)))


def pairs_digest(digests: Iterable[bytes]) -> str:
    """The hex SHA-256 of a set of pairs from their pair digests, in any order."""
    ordered = sorted(digests)
    if any(len(d) != DIGEST_BYTES for d in ordered):
        raise ValueError("a pair digest is 32 bytes")
    h = hashlib.sha256(PAIRS_PREFIX)
    h.update(len(ordered).to_bytes(8, "big"))
    for digest in ordered:
        h.update(digest)
    return h.hexdigest()


def definitions_sha256(definitions: Sequence[str]) -> str:
    """The hex SHA-256 of metric definitions as scored: their JSON list (UTF-8, no spaces,
    non-ASCII as is), in the set's order."""
    text = json.dumps(list(definitions), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
