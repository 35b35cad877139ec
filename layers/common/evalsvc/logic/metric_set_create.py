"""Creating a metrics set (POST /specify_questions, POST /questions): every definition validated
(a `check:` is parsed). Apart from logic.metric_sets, which every route that reads a set
imports: reading needs none of the checks' parsing (their patterns compiled at import)."""

from __future__ import annotations

from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import new_id, now_ms
from evalsvc.core.settings import get_settings
from evalsvc.models.api_keys import Identity
from evalsvc.models.metric_sets import (
    EMBED_METRICS,
    MAX_JUDGES,
    MIN_JUDGES,
    RAG_METRICS,
    Aggregate,
    MetricsSet,
    kind_of,
)
from evalsvc.scoring import checks
from evalsvc.scoring.llm.jurors import unusable
from evalsvc.storage import metric_sets as store


def validate_definitions(definitions: list[str]) -> list[str]:
    """Each definition must be a question, a valid `check:`, one of the rag: metrics, or one of
    the embed: metrics with an embeddings model configured; the first problem is a 400."""
    cleaned: list[str] = []
    for index, definition in enumerate(definitions):
        text = definition.strip()
        if not text:
            raise InvalidInput(f"metrics[{index}] is empty: write a question or a check:<name>")
        kind = kind_of(text)
        if kind == "check":
            try:
                checks.parse_for_pairs(text)
            except checks.CheckError as exc:
                raise InvalidInput(f"metrics[{index}]: {exc}") from exc
        elif kind == "rag" and text not in RAG_METRICS:
            raise InvalidInput(
                f"metrics[{index}]: unknown rag: metric {_preview(text)!r}; known: "
                + ", ".join(RAG_METRICS)
            )
        elif kind == "embed":
            if text not in EMBED_METRICS:
                raise InvalidInput(
                    f"metrics[{index}]: unknown embed: metric {_preview(text)!r}; known: "
                    + ", ".join(EMBED_METRICS)
                )
            if not get_settings().embeddings:
                raise InvalidInput(
                    f"metrics[{index}]: {text} needs an embeddings model, and none is "
                    "configured: set EVALSVC_EMBEDDINGS to bedrock:<model-id> or openai:<model>"
                )
        cleaned.append(text)
    return cleaned


def _preview(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def validate_jury(judges: list[str] | None, jury: Aggregate | None) -> list[str] | None:
    """E13: a jury is 2-5 distinct judges among EVALSVC_JUDGES, each with a price; `jury`
    (the aggregate) only with judges. The first problem is a 400 naming what to fix."""
    if judges is None:
        if jury is not None:
            raise InvalidInput(
                f'jury is {jury!r} without judges: name 2 to {MAX_JUDGES} judges in "judges", '
                "or leave jury out"
            )
        return None
    names = [name.strip() for name in judges]
    if not MIN_JUDGES <= len(names) <= MAX_JUDGES:
        raise InvalidInput(f"judges names {len(names)}: a jury has {MIN_JUDGES} to {MAX_JUDGES}")
    settings = get_settings()
    for index, name in enumerate(names):
        if name in names[:index]:
            raise InvalidInput(f"judges[{index}] {name!r} is named twice: name each judge once")
        problem = unusable(name, settings)
        if problem is not None:
            raise InvalidInput(f"judges[{index}] {problem}")
    return names


def create_metrics_set(
    identity: Identity,
    definitions: list[str],
    system_prompt: str = "",
    judges: list[str] | None = None,
    jury: Aggregate | None = None,
) -> MetricsSet:
    metrics = MetricsSet(
        tenant=identity.tenant,
        metrics_id=new_id("m_"),
        definitions=validate_definitions(definitions),
        system_prompt=system_prompt,
        created_ms=now_ms(),
        judges=validate_jury(judges, jury),
        jury=jury or "mean",
    )
    store.put(metrics)
    return metrics
