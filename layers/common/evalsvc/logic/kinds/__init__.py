"""The kinds of queued work, one module each. A kind module defines its `Kind` (how a worker
does one chunk, and what completing or failing a job of it writes) and registers it with the
engine (logic.jobs) on import. A worker loads every module here (`load_all`), so adding a kind
is adding a module: the engine and the other kinds stay as they are."""

from __future__ import annotations

import importlib
import pkgutil


def load_all() -> list[str]:
    """Import (and so register) every kind of queued work; their module names."""
    names = [info.name for info in pkgutil.iter_modules(__path__)]
    for name in names:
        importlib.import_module(f"{__name__}.{name}")
    return names
