"""Evaluation results as callers read them: the tenant's results newest first, a result with
its statistics and the reasons of its lowest pairs, its scored pairs and critiques (whole or in
pages), and, for a queued result not complete, its job's progress and LLM usage so far.
Storage and models only: a route that reads results (GET /evaluations, GET /evaluation,
compare, reports, agreement) does not import what evaluating takes (scoring, the judge, the
job engine)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from evalsvc.core.errors import Conflict, InvalidInput, NotFound, PayloadTooLarge
from evalsvc.core.identifiers import RESERVED_DATASET_IDS, check_client_id, is_client_id
from evalsvc.logic.datasets import MAX_PAGE_SIZE, PAGE_MAX_BYTES
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import text_bytes
from evalsvc.models.evaluations import (
    EVALUATION_JOBS,
    LOWEST_PER_METRIC,
    MAX_REASON_CHARS,
    Critique,
    EvaluationResult,
    ListedResult,
    ScoredPair,
)
from evalsvc.models.jobs import Status
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import jobs as jobs_store
from evalsvc.storage import results as results_store
from evalsvc.storage.results import LISTED_SCORE_BYTES


def current(tenant: str, results_id: str) -> EvaluationResult | None:
    """The result as it stands; a queued one not complete with its job's progress and the
    LLM usage of its chunks so far."""
    result = results_store.get(tenant, results_id)
    if result is not None and result.status is not Status.COMPLETE:
        job = jobs_store.get(tenant, EVALUATION_JOBS, results_id)
        result.pairs_done = job.pairs_done if job else 0
        if job is not None:  # the chunks' LLM usage so far
            result.usage = (
                result.usage + jobs_store.spent(tenant, EVALUATION_JOBS, results_id).usage
            )
        if job is not None and job.failure and result.status is Status.RUNNING:
            # The job ended between the two reads: its failure is the result's.
            result.status, result.failure = job.status, job.failure.message
            result.failure_error = job.failure.error
    return result


def existing_result(
    identity: Identity, results_id: str, *, require_complete: bool = False
) -> EvaluationResult:
    check_client_id(results_id, "result id")
    result = current(identity.tenant, results_id)
    if result is None:
        raise NotFound(f"no evaluation result with id {results_id!r}")
    if require_complete:
        ensure_complete(result)
    return result


def ensure_complete(result: EvaluationResult) -> None:
    """A 409 for a result that is still running or failed, saying what to do."""
    ensure_not_running(result)
    if result.status is Status.FAILED:
        raise Conflict(
            f"evaluation result {result.results_id!r} failed ({result.failure}): evaluate again"
        )


def ensure_not_running(result: EvaluationResult) -> None:
    """A 409 for a result that is still running (`current`: its progress), saying what to do."""
    if result.status is Status.RUNNING:
        raise Conflict(
            f"evaluation result {result.results_id!r} is still running ({result.pairs_done} of "
            f"{result.pair_count} pairs scored): use it once GET /evaluation/"
            f"{result.results_id} says complete"
        )


@dataclass(slots=True)
class StoredEvaluation:
    result: EvaluationResult
    critiques: list[Critique]
    all_scored: list[ScoredPair] | None


# The most critique text improve_prompt takes from one result (its LLM prompt stays bounded).
IMPROVEMENT_CRITIQUE_BYTES = 256 * 1024


def _page_hint(result: EvaluationResult, include_all: bool) -> str:
    scores = "includeAllScores=true&" if include_all else ""
    return (
        f"read them in pages with GET /evaluation/{result.results_id}?{scores}limit=1000, then "
        "add &cursor=<next_cursor>"
    )


def _fixed_bytes(result: EvaluationResult) -> int:
    """At most what the result takes in a response besides its scored pairs and critiques."""
    texts = [result.system_prompt, *result.definitions]
    lowest_reasons = len(result.definitions) * LOWEST_PER_METRIC * MAX_REASON_CHARS * 4
    return sum(text_bytes(t) for t in texts) + lowest_reasons


def read_evaluation(
    identity: Identity,
    results_id: str,
    *,
    include_all: bool,
    max_bytes: int | None = None,
    require_complete: bool = False,
    critique_sample: bool = False,
) -> StoredEvaluation:
    """The result with the reasons of its lowest-scoring pairs, its critiques, and with
    `include_all` every scored pair (none until it is complete). With `max_bytes` (what one
    response may hold), a 413 saying how to page when the scored pairs would take more (known
    before they are read) or the critiques do (read until they pass it). `critique_sample`:
    only the first IMPROVEMENT_CRITIQUE_BYTES of critiques (in key order), oldest first."""
    result = existing_result(identity, results_id, require_complete=require_complete)
    room = None if max_bytes is None else max_bytes - _fixed_bytes(result)
    all_scored: list[ScoredPair] | None = None
    if include_all and result.status is Status.COMPLETE:
        listed = result.scored_bytes
        if room is not None and listed is not None:
            listed += result.pair_count * len(result.definitions) * LISTED_SCORE_BYTES
            if listed > room:
                raise PayloadTooLarge(
                    f"evaluation result {results_id!r} has {result.pair_count} scored pairs "
                    f"({listed / 1e6:.1f} MB with their reasons), too many for one response: "
                    + _page_hint(result, include_all)
                )
            room -= listed
        all_scored = results_store.list_scored(identity.tenant, results_id)
    elif include_all:
        all_scored = []
    fill_lowest_reasons(
        identity.tenant, result, {p.pair_id: p for p in all_scored} if all_scored else None
    )
    if critique_sample:
        sample, _ = critiques_store.page(
            identity.tenant, results_id, "", MAX_PAGE_SIZE, IMPROVEMENT_CRITIQUE_BYTES
        )
        return StoredEvaluation(result, sorted(sample, key=lambda c: (c.time_ms, c.id)), None)
    try:
        critiques = critiques_store.list_for(
            identity.tenant, results_id, None if room is None else max(room, 0)
        )
    except critiques_store.TooMany:
        raise PayloadTooLarge(
            f"evaluation result {results_id!r} has more human critiques than one response "
            "holds: " + _page_hint(result, include_all)
        ) from None
    return StoredEvaluation(result, critiques, all_scored)


def fill_lowest_reasons(
    tenant: str, result: EvaluationResult, scored: Mapping[str, ScoredPair] | None = None
) -> None:
    """Set the reason of each of the result's lowest pairs: from `scored` (by pair id) when
    given, else read for them alone."""
    if scored is None:
        wanted = [low.pair_id for metric in result.lowest for low in metric]
        scored = results_store.get_scored(tenant, result.results_id, wanted)
    for m, metric in enumerate(result.lowest):
        for low in metric:
            pair = scored.get(low.pair_id)
            low.reason = pair.reasons[m] if pair else ""


@dataclass(slots=True)
class EvaluationPage:
    """One page of a result's growing parts, and the cursor of the next (None on the last)."""

    result: EvaluationResult
    all_scored: list[ScoredPair] | None
    critiques: list[Critique]
    next_cursor: str | None


def _encode_cursor(scored_after: str | None, critique_after: str | None) -> str | None:
    if scored_after is None and critique_after is None:
        return None
    raw = json.dumps([scored_after, critique_after], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(text: str) -> tuple[str | None, str | None]:
    bad = InvalidInput("cursor is not valid: pass the next_cursor of the previous page as it was")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        scored_after, critique_after = json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        raise bad from None
    for value in (scored_after, critique_after):
        if value is not None and not isinstance(value, str):
            raise bad
    return scored_after, critique_after


def read_evaluation_page(
    identity: Identity, results_id: str, *, include_all: bool, limit: int, cursor: str | None
) -> EvaluationPage:
    """A page of the result's scored pairs (with `include_all`, in pair id order) and of its
    critiques (in metric, pair, user order): at most `limit` of each, together at most
    PAGE_MAX_BYTES."""
    result = existing_result(identity, results_id)
    scored_after: str | None = "" if include_all else None
    critique_after: str | None = ""
    if cursor is not None:
        scored_after, critique_after = _decode_cursor(cursor)
    all_scored: list[ScoredPair] | None = [] if include_all else None
    if include_all and result.status is not Status.COMPLETE:
        scored_after = None
    next_scored: str | None = None
    if scored_after is not None and all_scored is not None:
        all_scored, more = results_store.scored_page(
            identity.tenant, results_id, scored_after, limit, PAGE_MAX_BYTES // 2
        )
        next_scored = all_scored[-1].pair_id if more and all_scored else None
        all_scored.sort(key=lambda p: p.index)
    critiques: list[Critique] = []
    next_critique: str | None = None
    if critique_after is not None:
        room = PAGE_MAX_BYTES // 2 if include_all else PAGE_MAX_BYTES
        critiques, next_critique = critiques_store.page(
            identity.tenant, results_id, critique_after, limit, room
        )
    return EvaluationPage(result, all_scored, critiques, _encode_cursor(next_scored, next_critique))


def check_metric_idx(result: EvaluationResult, metric_idx: int) -> None:
    """A 400 unless `metric_idx` names one of the result's metrics."""
    count = len(result.definitions)
    if not 0 <= metric_idx < count:
        raise InvalidInput(
            f"metric_idx {metric_idx} is out of range: this result has {count} "
            f"metric{'s' if count != 1 else ''} (0-{count - 1})"
        )


# ---- the tenant's results, newest first (GET /evaluations) ---------------------------------------

MAX_LISTED = 100
DEFAULT_LISTED = 20
# <created_ms>.<results_id>: created_ms as list_sk holds it (at most 15 digits, no leading zero).
_LIST_CURSOR = re.compile(r"(0|[1-9][0-9]{0,14})\.(.*)", re.DOTALL)


@dataclass(slots=True)
class ResultsPage:
    """A page of the tenant's results, newest first, and the cursor of the next (None on the
    last)."""

    results: list[ListedResult]
    next_cursor: str | None


def _list_cursor(result: ListedResult) -> str:
    return f"{result.created_ms}.{result.results_id}"


def _parse_list_cursor(cursor: str) -> tuple[int, str]:
    """(created_ms, results_id) of a cursor this list gave; a 400 for anything else."""
    match = _LIST_CURSOR.fullmatch(cursor)
    if match is None or not is_client_id(match.group(2)):
        raise InvalidInput(
            f"cursor {cursor[:140]!r} is not one this list gave (<created_ms>.<eval_results_id>):"
            " pass the previous page's next_cursor as it is, or leave cursor out to start from "
            "the newest"
        )
    return int(match.group(1)), match.group(2)


def _check_list_dataset_id(dataset_id: str) -> None:
    if dataset_id in RESERVED_DATASET_IDS:
        raise InvalidInput(
            f"seed_data_id {dataset_id!r} names no dataset: give the dataset's own id "
            "(GET /data/seed/latest says which it is)"
        )
    check_client_id(dataset_id, "seed_data_id")


def list_results(
    identity: Identity, limit: int, cursor: str | None, dataset_id: str | None
) -> ResultsPage:
    """A page of the tenant's results, newest first (results created in the same millisecond
    by id, the greater first), at most `limit`; with `dataset_id` only those of that dataset
    (seed or synthetic). `cursor`: the previous page's next_cursor. A cursor only says where
    to start among the caller's own results: every key read comes from the caller's tenant."""
    if not 1 <= limit <= MAX_LISTED:
        raise InvalidInput(f"limit must be 1-{MAX_LISTED}, not {limit}")
    if dataset_id is not None:
        _check_list_dataset_id(dataset_id)
    after = None if cursor is None else _parse_list_cursor(cursor)
    listed, more = results_store.listed_page(
        identity.tenant, dataset_id, after, limit, PAGE_MAX_BYTES
    )
    return ResultsPage(listed, _list_cursor(listed[-1]) if more and listed else None)
