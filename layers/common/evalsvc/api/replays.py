"""How a route's answer is rebuilt for a retry with the same `Idempotency-Key` when it is too
large to keep in the idempotency record (an evaluation with long definitions and reasons is
megabytes): the route names what it answered with (`name(request, kind, id)`, e.g. the result
it stored), and the record keeps that name; a replay renders it again from storage.

Kept apart from api.idempotency so a route can register its replay without importing
Powertools' idempotency (cold-start cost) in requests that do not use it."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import Request, Response

from evalsvc.models.api_keys import Identity

Render = Callable[[Request, Identity, str], Response]

_RENDERERS: dict[str, Render] = {}


def register(kind: str, render: Render) -> None:
    """`render(request, identity, id)` rebuilds an answer named `kind` and `id`."""
    _RENDERERS[kind] = render


def name(request: Request, kind: str, ident: str) -> None:
    """Say that the answer to `request` is the stored `kind` named `ident`."""
    request.state.replay = (kind, ident)


def named(request: Request) -> tuple[str, str] | None:
    """What the route said its answer is, if it said."""
    value = getattr(request.state, "replay", None)
    return value if isinstance(value, tuple) else None


def can_render(kind: str) -> bool:
    return kind in _RENDERERS


def render(request: Request, identity: Identity, kind: str, ident: str) -> Response | None:
    """The answer rebuilt, or None when no renderer of `kind` is loaded in this function."""
    renderer = _RENDERERS.get(kind)
    return None if renderer is None else renderer(request, identity, ident)
