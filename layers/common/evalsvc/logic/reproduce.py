"""Reproducible results (E7): what produced a result (`inputs`), the exact pairs it scored read
back from the dataset version it pinned, whatever happened to the dataset since, and the texts
a report shows and pairwise judging compares of them (`scored_texts`).

A result pins the version it read (`inputs`: its id, when it was made, its shards) and the
pairs it took of it (`pieces`: runs of ords with the 8-byte fingerprints of the ords taken, so
pairs appended later are left out), 8 bytes a pair and no text. The version is readable while
the dataset's header names it, or while its record is kept (storage.datasets.history); past its
retention every read is a 410 that names the day it expired.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import evalsvc
from evalsvc.core.errors import Gone, InvalidInput, NotFound
from evalsvc.core.identifiers import check_client_id, format_ms, now_ms
from evalsvc.logic.pairs_digest import definitions_sha256
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import DatasetHeader, Pair, pair_bytes
from evalsvc.models.evaluations import EvaluationResult, ResultInputs
from evalsvc.models.jobs import Piece
from evalsvc.models.metric_sets import is_judged
from evalsvc.spending import prices as pricing
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import results as results_store
from evalsvc.storage.datasets import history

if TYPE_CHECKING:
    from evalsvc.scoring.jury import AnyJudge

# Pairs per piece of a pinned selection: 32 KB of fingerprints.
PIECE_PAIRS = 4_096
# GET /evaluation/{id}/pairs: the pairs a page holds unless asked, the most it holds, and the
# most text it lists (a Lambda answer is at most 6 MB; the texts are JSON-escaped on the way).
DEFAULT_PAGE_PAIRS = 100
MAX_PAGE_PAIRS = 1_000
PAGE_BYTES = 2 * 1024 * 1024


def cut_pieces(ords: Sequence[str]) -> list[Piece]:
    """The pieces that name the pairs of `ords` (in dataset order), PIECE_PAIRS at a time."""
    # Imported here, not with this module: only what stores a result cuts pieces, and it has
    # imported the job engine already; the routes that read results need none of it.
    from evalsvc.logic import jobs

    return jobs.pieces(ords, PIECE_PAIRS)


def inputs_for(
    definitions: Sequence[str], header: DatasetHeader, judge: AnyJudge | None
) -> ResultInputs:
    """What a result scored with `definitions` over the version `header` was read at, judged
    by `judge`, is produced by (its pairs_digest comes once its pairs are scored)."""
    # Imported here, not with this module: only what scores (and so has imported the judge)
    # asks what produces a result; the routes that read results need no scoring module.
    from evalsvc.scoring import verdicts

    stored = datasets_store.stored_as_read(header)
    judged = judge is not None and any(is_judged(d) for d in definitions)
    return ResultInputs(
        dataset_version=stored.version,
        version_ms=header.updated_ms,
        shards=stored.shards,
        append_shards=stored.append_shards,
        definitions_sha256=definitions_sha256(definitions),
        # A jury's judges, comma-separated (E13).
        judge_model=",".join(judge.names) if judged and judge is not None else None,
        judge_prompt_version=verdicts.PROMPT_VERSION if judged else None,
        service_version=evalsvc.__version__,
        prices_date=pricing.PRICES_AS_OF,
    )


# ---- the version a result pinned ---------------------------------------------------------------


def _expired(result: EvaluationResult, expired_ms: int | None) -> Gone:
    inputs = result.inputs
    assert inputs is not None
    when = f"on {format_ms(expired_ms)[:10]}" if expired_ms is not None else "before this read"
    return Gone(
        f"the version {inputs.dataset_version!r} of {result.dataset_kind.value} dataset "
        f"{result.dataset_id!r} that evaluation {result.results_id!r} scored was replaced, kept "
        f"for its retention, and expired {when}: its pairs are no longer kept"
    )


def pinned_header(tenant: str, result: EvaluationResult) -> DatasetHeader:
    """A header that reads the version `result` scored, with the result's system prompt; Gone
    when the result was stored before it pinned one, or the version is past its retention."""
    inputs = result.inputs
    if inputs is None:
        raise Gone(
            f"evaluation {result.results_id!r} was stored before results kept the pairs they "
            "scored: evaluate the dataset again"
        )
    still_readable(tenant, result)
    stored = datasets_store.Stored(inputs.dataset_version, inputs.shards, inputs.append_shards)
    header = datasets_store.stored_header(tenant, result.dataset_kind, result.dataset_id, stored)
    header.system_prompt = result.system_prompt
    header.updated_ms = inputs.version_ms
    return header


def still_readable(tenant: str, result: EvaluationResult) -> None:
    """Whether the version `result` pinned (it has inputs) can be read now: the header names
    it, or its record is kept and not expired (TTL removes the record before any of its pairs
    goes). Else Gone, naming the day it expired: before a read, or after one (what was read may
    be part-way purged)."""
    inputs = result.inputs
    assert inputs is not None
    kind, dataset_id, version = result.dataset_kind, result.dataset_id, inputs.dataset_version
    if datasets_store.current_version(tenant, kind, dataset_id) == version:
        return
    record = history.get_record(tenant, kind, dataset_id, version, inputs.version_ms)
    if record is not None and not record.expired(now_ms()):
        return
    if record is not None:
        raise _expired(result, record.expires_ms)
    gone = history.get_gone(tenant, kind, dataset_id, version)
    raise _expired(result, gone.expired_ms if gone else None)


# ---- GET /evaluation/{id}/pairs ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PairsPage:
    pairs: list[Pair]
    next_cursor: str | None


def _cursor(results_id: str, piece: int, after_ord: str | None) -> str:
    """Where the next page of `results_id`'s pairs starts: after `after_ord` in piece `piece`
    (None: at its start). It names the result, so no other result's pairs read on from it."""
    raw = f"{results_id}|{piece}|{after_ord or ''}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _parse_cursor(cursor: str, results_id: str, pieces: Sequence[Piece]) -> tuple[int, str | None]:
    bad = InvalidInput(
        "cursor is not one this evaluation's pairs gave: pass next_cursor as it was returned"
    )
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raise bad from None
    named, _, rest = raw.partition("|")
    piece_text, _, after = rest.partition("|")
    if named != results_id:
        raise bad
    if not piece_text.isdigit() or len(piece_text) > 6 or int(piece_text) >= len(pieces):
        raise bad
    piece = pieces[int(piece_text)]
    if after and not piece.first_ord <= after <= piece.last_ord:
        raise bad
    return int(piece_text), after or None


def scored_result(tenant: str, results_id: str) -> EvaluationResult:
    """The result whose pairs are asked for (400 for an id no result can have, 404 for none)."""
    check_client_id(results_id, "result id")
    result = results_store.get(tenant, results_id)
    if result is None:
        raise NotFound(f"no evaluation result with id {results_id!r}")
    return result


def pairs_page(identity: Identity, results_id: str, limit: int, cursor: str | None) -> PairsPage:
    """A page of the pairs evaluation `results_id` scored, in dataset order, as they were when
    it scored them: at most `limit`, and PAGE_BYTES of text (at least one pair)."""
    tenant = identity.tenant
    result = scored_result(tenant, results_id)
    header = pinned_header(tenant, result)
    pieces = pieces_of(tenant, result)
    index, after = (0, None) if cursor is None else _parse_cursor(cursor, results_id, pieces)
    pairs: list[Pair] = []
    left_bytes = PAGE_BYTES
    next_cursor = None
    while index < len(pieces):
        piece = pieces[index]
        got, ords, more = datasets_store.range_page(
            header,
            piece.first_ord,
            piece.last_ord,
            piece.member_set(),
            after_ord=after,
            limit=limit - len(pairs),
            page_bytes=left_bytes,
        )
        pairs += got
        left_bytes -= sum(pair_bytes(p) + datasets_store.LISTED_PAIR_BYTES for p in got)
        if more:
            next_cursor = _cursor(results_id, index, ords[-1] if ords else after)
            break
        index, after = index + 1, None
        if len(pairs) >= limit or left_bytes <= 0:
            next_cursor = _cursor(results_id, index, None) if index < len(pieces) else None
            break
    still_readable(tenant, result)
    return PairsPage(pairs, next_cursor)


def pieces_of(tenant: str, result: EvaluationResult) -> list[Piece]:
    """The pieces of what `result` scored; Gone for a result stored before they were kept."""
    pieces = results_store.selection(tenant, result.results_id)
    if not pieces:
        raise Gone(
            f"evaluation {result.results_id!r} was stored before results kept the pairs they "
            "scored: evaluate the dataset again"
        )
    return pieces


def read_pinned(
    tenant: str,
    result: EvaluationResult,
    header: DatasetHeader,
    pieces: Sequence[Piece],
    *,
    keys_only: bool,
) -> tuple[list[Pair], list[str], int]:
    """Every pair `result` scored (ids alone when `keys_only`), in dataset order, from its
    pinned version (`header`: pinned_header): the pairs, their ords and their pair_bytes in
    all. Gone when the version expired while it was read."""
    runs = [(p.first_ord, p.last_ord, p.member_set()) for p in pieces]
    try:
        pairs, ords, size = datasets_store.read_runs(header, runs, keys_only=keys_only)
    except datasets_store.TornRead:
        pairs, ords, size = [], [], 0
    if len(pairs) != sum(p.count for p in pieces):
        still_readable(tenant, result)
        raise Gone(
            f"the pairs evaluation {result.results_id!r} scored are no longer all kept: "
            f"{len(pairs)} of {sum(p.count for p in pieces)} were found"
        )
    return pairs, ords, size


# ---- the texts a result scored (reports, pairwise judging) ---------------------------------------


@dataclass(frozen=True, slots=True)
class ScoredTexts:
    """The pairs a result scored among some of its pair ids, as it scored them, by id;
    `unread`: those left unread, past the bytes the read may take; `changed`: those written
    again since it scored them, so not in `pairs` (only for a result stored before it pinned
    its version, whose texts are not known otherwise). An id in none of them is no longer
    there."""

    pairs: dict[str, Pair]
    unread: set[str]
    changed: set[str]


def scored_texts(
    tenant: str, result: EvaluationResult, pair_ids: Sequence[str], max_bytes: int
) -> ScoredTexts:
    """The texts `result` scored of `pair_ids` (ids it scored), as far as `max_bytes` of text
    goes. Read by key from the dataset version the result pinned: a version's pairs are never
    written again (an overwrite makes a new version, an append a new id), so they are the
    texts scored, whatever happened to the dataset since. Gone, naming the day, when that
    version is past its retention or expired while it was read."""
    if result.inputs is None:
        return _texts_by_time(tenant, result, pair_ids, max_bytes)
    header = pinned_header(tenant, result)
    found, unread = datasets_store.get_pairs_within(header, pair_ids, max_bytes)
    still_readable(tenant, result)
    return ScoredTexts(found, unread, set())


def _texts_by_time(
    tenant: str, result: EvaluationResult, pair_ids: Sequence[str], max_bytes: int
) -> ScoredTexts:
    """A result stored before results pinned the version they read (`inputs` None) has only
    times to go by: the dataset's current version, each pair taken only when written before
    the evaluation began. Those are two Lambdas' clocks (the pair's writer's, the
    evaluation's), so a skew between them can take a pair written after for one written
    before; every result stored since is read from its version instead."""
    header = datasets_store.get_header(tenant, result.dataset_kind, result.dataset_id)
    if header is None:
        return ScoredTexts({}, set(), set())
    found, unread = datasets_store.get_pairs_within(header, pair_ids, max_bytes)
    changed = {pid for pid, pair in found.items() if pair.created_ms > result.created_ms}
    kept = {pid: pair for pid, pair in found.items() if pid not in changed}
    return ScoredTexts(kept, unread, changed)
