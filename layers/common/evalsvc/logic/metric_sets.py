"""Metrics sets: reading, and "the latest metrics" (creation, which validates every definition,
is logic.metric_set_create's)."""

from __future__ import annotations

from evalsvc.core.errors import NotFound, PayloadTooLarge
from evalsvc.core.identifiers import check_client_id
from evalsvc.logic.datasets import DEFAULT_PAGE_SIZE, PAGE_MAX_BYTES
from evalsvc.models.api_keys import Identity
from evalsvc.models.metric_sets import MetricsSet
from evalsvc.storage import metric_sets as store

NO_METRICS_HINT = (
    "there is no metrics set yet: create one with POST /specify_questions "
    '{"metrics": ["Is the answer polite?", "check:non_empty"]}'
)


def get_metrics_set(identity: Identity, metrics_id: str | None) -> MetricsSet:
    """The set `metrics_id`; `latest` or None means the tenant's newest set."""
    if metrics_id is None or metrics_id == "latest":
        latest = store.latest_id(identity.tenant)
        if latest is None:
            raise NotFound(NO_METRICS_HINT)
        metrics_id = latest
    else:
        check_client_id(metrics_id, "metrics id")
    found = store.get(identity.tenant, metrics_id)
    if found is None:
        raise NotFound(f"no metrics set with id {metrics_id!r}")
    return found


def _too_many_sets(count: str) -> PayloadTooLarge:
    return PayloadTooLarge(
        f"the metrics sets ({count}) are too many for one response: list them in pages with "
        f"GET /list_questions?limit={DEFAULT_PAGE_SIZE}, then add &cursor=<next_cursor>"
    )


def list_metrics_sets(identity: Identity, max_bytes: int) -> list[MetricsSet]:
    """Every metrics set of the tenant, oldest first; a 413 saying how to page when they take
    more than `max_bytes` (decided from the tenant's total before they are read)."""
    total = store.listed_bytes(identity.tenant)
    if total > max_bytes:
        raise _too_many_sets(f"{total / 1e6:.1f} MB")
    sets = store.list_all(identity.tenant, max_bytes)
    if sets is None:
        raise _too_many_sets("more than one response holds")
    return sets


def list_metrics_page(
    identity: Identity, limit: int, cursor: str | None
) -> tuple[list[MetricsSet], str | None]:
    """A page of the tenant's metrics sets in id order (at most PAGE_MAX_BYTES), and the
    cursor of the next page."""
    after = ""
    if cursor:
        after = cursor
        check_client_id(after, "cursor")
    sets, last = store.page(identity.tenant, after, limit, PAGE_MAX_BYTES)
    return sets, last
