"""Creating a metrics set (POST /specify_questions, POST /questions): every definition validated
(a `check:` is parsed). Apart from logic.metric_sets, which every route that reads a set
imports: reading needs none of the checks' parsing (their patterns compiled at import)."""

from __future__ import annotations

from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import new_id, now_ms
from evalsvc.models.api_keys import Identity
from evalsvc.models.metric_sets import MetricsSet
from evalsvc.scoring import checks
from evalsvc.storage import metric_sets as store


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
