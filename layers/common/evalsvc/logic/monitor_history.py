"""A monitor's history (E8), GET /monitors/{id}/history and the trend report: its runs, newest
first, each with the metric definitions it scored (read from one of its results).

Apart from logic.monitors because of that read: the stored evaluation results (and their
models) are what the other monitor routes do not import at their start."""

from __future__ import annotations

from dataclasses import dataclass

from evalsvc.core.errors import InvalidInput
from evalsvc.logic import monitors
from evalsvc.models.api_keys import Identity
from evalsvc.models.monitors import Run
from evalsvc.storage import monitors as store
from evalsvc.storage import results as results_store

DEFAULT_HISTORY = 20
MAX_HISTORY = 100
# The most text a history page holds (as GET /evaluation/{id}/pairs's pages).
HISTORY_PAGE_BYTES = 2_000_000


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """Runs, newest first, each with the metric definitions its indexes name ([] when its
    result is gone); next_cursor when more follow."""

    runs: list[tuple[Run, list[str]]]
    next_cursor: str | None


def history(
    identity: Identity,
    monitor_id: str,
    limit: int,
    cursor: str | None,
    *,
    max_bytes: int | None = HISTORY_PAGE_BYTES,
) -> HistoryPage:
    """The monitor's runs, newest first, `limit` at most and `max_bytes` of text (None: no
    bound, for a caller that bounds what it renders itself, the trend report), after `cursor`
    (a page's next_cursor: the time of its last run)."""
    monitors.get(identity, monitor_id)
    before = None
    if cursor is not None:
        if not (cursor.isdigit() and len(cursor) <= 13):
            raise InvalidInput(
                "cursor is not one this monitor's history gave: pass next_cursor as it was returned"
            )
        before = int(cursor)
    found = list(store.runs(identity.tenant, monitor_id, before_ms=before, limit=limit + 1))
    page, more = found[:limit], len(found) > limit
    named = list(zip(page, _definitions(identity, page), strict=True))
    # At most HISTORY_PAGE_BYTES of text a page (each run names its metrics in full): the
    # rest follows from next_cursor.
    kept, total = 0, 0
    for run, definitions in named:
        total += _text_bytes(run, definitions)
        if kept and max_bytes is not None and total > max_bytes:
            more = True
            break
        kept += 1
    named = named[:kept]
    return HistoryPage(named, str(named[-1][0].scheduled_ms) if more and named else None)


def _text_bytes(run: Run, definitions: list[str]) -> int:
    """What a run's entry in a history page takes, about: its metrics' names, its failure,
    and its figures."""
    names = sum(
        len(definitions[m.index].encode("utf-8", "surrogatepass"))
        for m in run.metrics
        if m.index < len(definitions)
    )
    return (
        names
        + len((run.failure or "").encode("utf-8", "surrogatepass"))
        + 200 * (len(run.metrics) + 3)
    )


def _definitions(identity: Identity, runs: list[Run]) -> list[list[str]]:
    """Each run's metric definitions, read from one result for each set of them."""
    known: dict[str, list[str]] = {}
    out: list[list[str]] = []
    for run in runs:
        sha = run.definitions_sha256
        if sha is None or run.result_id is None:
            out.append([])
            continue
        if sha not in known:
            result = results_store.get(identity.tenant, run.result_id)
            if result is None:  # gone: another run with the same definitions may say them
                out.append([])
                continue
            known[sha] = result.definitions
        out.append(known[sha])
    return out
