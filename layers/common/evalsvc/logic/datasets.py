"""Seed and synthetic datasets: write, overwrite, add a pair, read, import."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from evalsvc.core.errors import InvalidInput, NotFound, PayloadTooLarge, StorageUnavailable
from evalsvc.core.identifiers import check_dataset_id, new_id, now_ms
from evalsvc.core.observability import logger, metrics
from evalsvc.models.api_keys import Identity
from evalsvc.models.datasets import (
    Dataset,
    DatasetHeader,
    DatasetKind,
    PageCursor,
    Pair,
    PairIn,
    PairQuery,
    SeedDatasetIn,
    VersionRecord,
    to_domain_pair,
)
from evalsvc.storage import datasets as store
from evalsvc.storage.datasets import history

_PROMPT_ATTEMPTS = 4
DEFAULT_PAGE_SIZE = 1000
MAX_PAGE_SIZE = 10_000
# One page, at most (its texts, and what listing them adds): one response holds it whatever it
# is, as the proxy response escapes a 4-byte character into 12 bytes (3 times) and base64 of
# incompressible gzip is 4/3 times as large.
PAGE_MAX_BYTES = 1_900_000


def new_dataset_id() -> str:
    return new_id("ds_")


def new_pair_id() -> str:
    return new_id("p_")


def to_pair(item: PairIn) -> Pair:
    return to_domain_pair(item, item.id or new_pair_id())


def write_seed_dataset(
    identity: Identity, dataset_id: str | None, body: SeedDatasetIn
) -> DatasetHeader:
    """Insert the seed dataset `dataset_id`, or replace it whole (atomically). Without an id,
    create a new dataset under a server-made id."""
    if dataset_id is not None:
        check_dataset_id(dataset_id)
    pairs = [to_pair(item) for item in body.data]
    header = store.write_dataset(
        identity.tenant,
        DatasetKind.SEED,
        dataset_id or new_dataset_id(),
        pairs,
        body.system_prompt or "",
        is_new=dataset_id is None,
    )
    metrics.add_metric(name="PairsWritten", unit="Count", value=len(pairs))
    logger.info(
        "seed dataset written", extra={"dataset_id": header.dataset_id, "pairs": len(pairs)}
    )
    return header


def add_seed_pair(identity: Identity, dataset_id: str, item: PairIn) -> Pair:
    """Append one pair to an existing seed dataset."""
    check_dataset_id(dataset_id)
    pair = to_pair(item)
    store.add_pair(identity.tenant, DatasetKind.SEED, dataset_id, pair)
    metrics.add_metric(name="PairsWritten", unit="Count", value=1)
    return pair


def add_seed_pair_for_prompt(identity: Identity, item: PairIn) -> tuple[str, Pair]:
    """File the pair under the tenant's dataset whose system prompt equals the pair's
    `system_prompt_template`, creating that dataset when there is none."""
    template = item.system_prompt_template or ""
    pair = to_pair(item)
    for _ in range(_PROMPT_ATTEMPTS):
        dataset_id = store.dataset_id_for_prompt(identity.tenant, template)
        if dataset_id is not None:
            try:
                store.add_pair(
                    identity.tenant, DatasetKind.SEED, dataset_id, pair, expected_prompt=template
                )
                return dataset_id, pair
            except (NotFound, store.PromptMismatch):
                pass  # the pointer is stale: that dataset was rewritten with another prompt
        new_dataset = new_dataset_id()
        if store.create_for_prompt(identity.tenant, new_dataset, template, stale_id=dataset_id):
            store.add_pair(identity.tenant, DatasetKind.SEED, new_dataset, pair)
            return new_dataset, pair
    raise StorageUnavailable("datasets for this system prompt are changing concurrently; retry")


def resolve_dataset_id(identity: Identity, kind: DatasetKind, dataset_id: str) -> str:
    """`latest` names the tenant's most recently created dataset of that kind."""
    check_dataset_id(dataset_id, allow_latest=True)
    if dataset_id != "latest":
        return dataset_id
    latest = store.latest_dataset_id(identity.tenant, kind)
    if latest is None:
        raise NotFound(f"there is no {kind.value} dataset yet")
    return latest


def get_header(identity: Identity, kind: DatasetKind, dataset_id: str) -> DatasetHeader:
    """The dataset's header now: how many pairs it holds and their bytes (404 when there is no
    such dataset)."""
    header = store.get_header(identity.tenant, kind, dataset_id)
    if header is None:
        raise NotFound(f"no {kind.value} dataset with id {dataset_id!r}")
    return header


def ensure_exists(identity: Identity, kind: DatasetKind, dataset_id: str) -> None:
    """A 404 when the tenant has no such dataset; its header alone is read (its appended pairs
    not counted: one GetItem)."""
    if store.get_header(identity.tenant, kind, dataset_id, counted=False) is None:
        raise NotFound(f"no {kind.value} dataset with id {dataset_id!r}")


def too_large_for_one_response(header: DatasetHeader) -> PayloadTooLarge:
    """The 413 for a dataset that one response cannot hold, saying how to page it."""
    size = f", {header.bytes / 1e6:.1f} MB of text" if header.bytes is not None else ""
    return PayloadTooLarge(
        f"dataset {header.dataset_id!r} ({header.pair_count} pairs{size}) is too large for one "
        f"response: read it in pages with ?limit={DEFAULT_PAGE_SIZE}, then "
        f"?limit={DEFAULT_PAGE_SIZE}&cursor=<next_cursor>"
    )


def read_dataset(
    identity: Identity,
    kind: DatasetKind,
    dataset_id: str,
    *,
    max_bytes: int,
    limit: int | None = None,
    cursor: str | None = None,
) -> Dataset:
    """The whole dataset, if its pairs take at most `max_bytes` (else a 413 saying how to page,
    decided before they are read); or, with `limit` or `cursor`, one page of it (at most
    PAGE_MAX_BYTES) and the next cursor. A synthetic dataset still being generated is a 503
    with its progress; a failed one says why."""
    resolved = resolve_dataset_id(identity, kind, dataset_id)
    try:
        return _read_dataset(
            identity, kind, resolved, max_bytes=max_bytes, limit=limit, cursor=cursor
        )
    except store.TooLarge as exc:
        raise too_large_for_one_response(exc.header) from None
    except NotFound:
        if kind is DatasetKind.SYNTHETIC:
            # Imported on this rare path only: it brings the LLM modules, which would
            # otherwise add to the cold start of every dataset read.
            from evalsvc.logic import jobs
            from evalsvc.logic.kinds import augmentation

            job = jobs.get(identity.tenant, augmentation.AUGMENTATION, resolved)
            unfinished = None if job is None else augmentation.unfinished(job)
            if unfinished is not None:
                raise unfinished from None
        raise


def _read_dataset(
    identity: Identity,
    kind: DatasetKind,
    resolved: str,
    *,
    max_bytes: int,
    limit: int | None,
    cursor: str | None,
) -> Dataset:
    if limit is None and cursor is None:
        header, pairs = store.read_dataset(identity.tenant, kind, resolved, max_bytes)
        return Dataset(header=header, pairs=pairs)
    after = PageCursor.decode(cursor) if cursor else None
    header, pairs, next_cursor = store.read_page(
        identity.tenant,
        kind,
        resolved,
        limit or DEFAULT_PAGE_SIZE,
        after,
        min(max_bytes, PAGE_MAX_BYTES),
    )
    return Dataset(header=header, pairs=pairs, next_cursor=next_cursor)


@dataclass(slots=True)
class Selection:
    """The pairs a request's work takes (POST /evaluate, POST /augment), in dataset order with
    their ords, from the dataset version of `header`. `keys_only`: the pairs carry ids alone
    (their texts were not read); `bytes` is their texts' size all the same (None: the dataset
    was stored before sizes were kept)."""

    header: DatasetHeader
    pairs: list[Pair]
    ords: list[str]
    keys_only: bool
    bytes: int | None
    # E10: of `bytes`, the pairs with a reference or contexts (how many, their bytes); None
    # when not known (then every pair is bounded as if it had them).
    documented: tuple[int, int] | None = None

    @property
    def count(self) -> int:
        return len(self.ords)


def select(
    identity: Identity,
    kind: DatasetKind,
    dataset_id: str,
    query: PairQuery | None,
    purpose: str,
    *,
    keys_only: bool = False,
    header: DatasetHeader | None = None,
) -> Selection:
    """The pairs `query` selects (filters combined with AND), in dataset order; a 400 saying
    why when none is left to `purpose` ("evaluate", "augment"). `keys_only` reads no texts;
    `header`, the dataset's header just read (get_header), is not read again."""
    query = query or PairQuery()
    selected = store.select_pairs(
        identity.tenant,
        kind,
        dataset_id,
        labels=query.pair_labels or (),
        since_ms=now_ms() - query.last_n_seconds * 1000 if query.last_n_seconds else None,
        latest_n=query.latest_n_pairs,
        keys_only=keys_only,
        header=header,
    )
    if not selected.pairs:
        empty = selected.header.pair_count == 0
        what = "the dataset is empty" if empty else "no pair matches pair_query"
        raise InvalidInput(f"nothing to {purpose} in {kind.value} dataset {dataset_id!r}: {what}")
    known = selected.header.bytes is not None
    return Selection(
        selected.header,
        selected.pairs,
        selected.ords,
        keys_only,
        selected.bytes if known else None,
        selected.documented if known else None,
    )


def with_texts(
    identity: Identity, selection: Selection, query: PairQuery | None, purpose: str
) -> Selection:
    """The keys-only `selection` with its pairs' texts, read by key from its version; when that
    version was replaced meanwhile (its pairs are going), the selection is made again."""
    if not selection.keys_only:
        return selection
    header = selection.header
    wanted = [pair.id for pair in selection.pairs]
    try:
        found = store.get_pairs(header, wanted, max_bytes=2**62)
    except store.TornRead:
        found = {}
    if len(found) == len(wanted):
        pairs = [found[pair_id] for pair_id in wanted]
        return Selection(
            header, pairs, selection.ords, False, selection.bytes, selection.documented
        )
    return select(identity, header.kind, header.dataset_id, query, purpose)


def import_synthetic_dataset(
    tenant: str,
    rows: Iterable[tuple[str, str]],
    *,
    dataset_id: str | None = None,
    system_prompt: str = "",
    on_progress: Callable[[int], None] | None = None,
) -> DatasetHeader:
    """Store `(input, output)` rows as a synthetic dataset (new, or replacing `dataset_id`)."""
    pairs: Sequence[Pair] = [Pair(id=new_pair_id(), input=i, output=o) for i, o in rows]
    if dataset_id is not None:
        check_dataset_id(dataset_id)
    return store.write_dataset(
        tenant,
        DatasetKind.SYNTHETIC,
        dataset_id or new_dataset_id(),
        pairs,
        system_prompt,
        is_new=dataset_id is None,
        on_progress=on_progress,
    )


# ---- versions (E7) --------------------------------------------------------------------------

DEFAULT_VERSIONS_PAGE = 20
MAX_VERSIONS_PAGE = 100


@dataclass(frozen=True, slots=True)
class VersionsPage:
    versions: list[VersionRecord]
    next_cursor: str | None


def _versions_cursor(record: VersionRecord) -> str:
    return f"{record.created_ms}.{record.version}"


def _parse_versions_cursor(cursor: str) -> tuple[int, str]:
    ms, dot, version = cursor.partition(".")
    if not (dot and ms.isdigit() and len(ms) <= 13 and version.isalnum() and len(version) <= 64):
        raise InvalidInput(
            "cursor is not one this dataset's versions gave: pass next_cursor as it was returned"
        )
    return int(ms), version


def list_versions(
    identity: Identity, kind: DatasetKind, dataset_id: str, limit: int, cursor: str | None
) -> VersionsPage:
    """The dataset's versions, newest first: the one it holds now (first, without a cursor),
    then those an overwrite replaced, kept for EVALSVC_VERSION_RETENTION_DAYS (an expired one is
    not listed). At most `limit`; next_cursor when more follow. `latest` names the newest
    dataset."""
    dataset_id = resolve_dataset_id(identity, kind, dataset_id)
    header = get_header(identity, kind, dataset_id)
    listed: list[VersionRecord] = []
    before = None
    if cursor is None:
        listed.append(history.current(header))
    else:
        before = _parse_versions_cursor(cursor)
    now = now_ms()
    more = True
    while more:
        # One more than fits, to know whether a next page has anything.
        page, more = store.replaced_page(
            identity.tenant, kind, dataset_id, limit + 1 - len(listed), before
        )
        if page:
            before = (page[-1].created_ms, page[-1].version)
        listed += [record for record in page if not record.expired(now)]
        if len(listed) > limit:
            del listed[limit:]
            return VersionsPage(listed, _versions_cursor(listed[-1]))
    return VersionsPage(listed, None)
