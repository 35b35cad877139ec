"""FastAPI asks, for every parameter and response model of every route it declares (and for
some objects it encodes), whether it is a pydantic.v1 model, and imports pydantic.v1 to find
out: the whole legacy package, about 80 M instructions, 3 % of a function's start (44 ms of a
Lambda cold start as measured upstream: fastapi/fastapi#16374, not in the FastAPI pinned
here). It asks only to refuse such models. The service uses pydantic v2 alone, and nothing can
be a pydantic.v1 model unless pydantic.v1 was imported: until then the answer is "no" without
the import; once anything has imported it, FastAPI's own check answers.

`install` runs from `evalsvc.api` (its package module), before any route is declared. A
FastAPI without these checks is left as it is; tests/unit/test_fastapi_v1.py says when an
upgrade changes them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

_V1 = "pydantic.v1"


def _unless_v1_absent(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    def checked(value: Any) -> bool:
        return _V1 in sys.modules and check(value)

    checked.__wrapped__ = check  # type: ignore[attr-defined]
    return checked


def install() -> None:
    """Put the checks that need no import in FastAPI's place (once)."""
    try:
        import fastapi._compat as compat
        from fastapi import encoders
        from fastapi._compat import shared
    except ImportError:  # pragma: no cover (a FastAPI without them)
        return
    for name in ("is_pydantic_v1_model_class", "is_pydantic_v1_model_instance"):
        original = getattr(shared, name, None)
        if original is None or hasattr(original, "__wrapped__"):
            continue
        replacement = _unless_v1_absent(original)
        # Every module that took the function by name, and the one that defines it (whose
        # own callers look it up there).
        for module in (shared, compat, encoders):
            if getattr(module, name, None) is original:
                setattr(module, name, replacement)
