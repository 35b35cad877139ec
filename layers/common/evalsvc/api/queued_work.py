"""The one way a route answers work that may have been queued (POST /evaluate, POST
/evaluation/{id}/rerun, POST /augment, POST /pairwise): work still running is answered at once,
202 with its queued shape and the `Location` to follow; work that ended is answered in full, or
in its queued shape (200) when the caller asked `Prefer: respond-async` and the route answers so.
A plain request whose work still runs after its wait never gets here: logic.dispatch raised the
StillRunning (503) that names what to poll."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from fastapi import Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from evalsvc.api.errors import route_relative
from evalsvc.api.prefer import QueueOptions, async_answer

T = TypeVar("T")


def answer(
    request: Request,
    options: QueueOptions,
    *,
    running: bool,
    location: str,
    queued: Callable[[], BaseModel],
    done: Callable[[], T],
    queued_when_done: bool = True,
) -> T | JSONResponse:
    """`running`: whether the work goes on in the background; `location`: where to follow it
    (relative to the API's base); `queued()`: its queued shape; `done()`: the full answer.
    `queued_when_done`: with respond-async, work that ended answers in its queued shape (the
    full answer otherwise)."""
    if running or (options.respond_async and queued_when_done):
        where = route_relative(request, location)
        return async_answer(queued(), running=running, location=where)
    return done()
