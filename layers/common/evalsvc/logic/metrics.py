"""Metrics sets: creation (every definition validated), reading, and "the latest metrics"."""

from __future__ import annotations

from evalsvc.errors import InvalidInput, NotFound
from evalsvc.identifiers import check_client_id, new_id, now_ms
from evalsvc.models.api_keys import Identity
from evalsvc.models.metrics import MetricsSet
from evalsvc.scoring import checks
from evalsvc.storage import metrics as store

NO_METRICS_HINT = (
    "there is no metrics set yet: create one with POST /specify_questions "
    '{"metrics": ["Is the answer polite?", "check:non_empty"]}'
)


def validate_definitions(definitions: list[str]) -> list[str]:
    """Each definition must be a question or a valid `check:`; the first problem is a 400."""
    cleaned: list[str] = []
    for index, definition in enumerate(definitions):
        text = definition.strip()
        if not text:
            raise InvalidInput(f"metrics[{index}] is empty: write a question or a check:<name>")
        if checks.is_check(text):
            try:
                checks.parse(text)
            except checks.CheckError as exc:
                raise InvalidInput(f"metrics[{index}]: {exc}") from exc
        cleaned.append(text)
    return cleaned


def create_metrics_set(
    identity: Identity, definitions: list[str], system_prompt: str = ""
) -> MetricsSet:
    metrics = MetricsSet(
        tenant=identity.tenant,
        metrics_id=new_id("m_"),
        definitions=validate_definitions(definitions),
        system_prompt=system_prompt,
        created_ms=now_ms(),
    )
    store.put(metrics)
    return metrics


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


def list_metrics_sets(identity: Identity) -> list[MetricsSet]:
    return store.list_all(identity.tenant)
