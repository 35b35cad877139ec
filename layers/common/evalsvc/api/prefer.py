"""What the routes that may queue work read from a request: the `Prefer` header (RFC 7240) —
`respond-async` answers at once (202) with the job to poll, `wait=N` caps how long a plain
request waits — and what identifies a retry of the request."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Header, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from evalsvc.api.request_deadline import request_deadline
from evalsvc.core.deadlines import Deadline
from evalsvc.core.settings import get_settings

PreferHeader = Annotated[
    str | None,
    Header(
        description="respond-async: answer at once (202) with the id to poll; wait=N: wait at "
        "most N seconds for queued work"
    ),
]

# Time kept back from the Lambda's remaining time to answer after waiting.
ANSWER_MARGIN_SECONDS = 2.0


def preferences(value: str | None) -> dict[str, str]:
    """The preferences of a `Prefer` header (RFC 7240), by lower-cased name."""
    found: dict[str, str] = {}
    for part in (value or "").split(","):
        name, _, setting = part.split(";")[0].strip().partition("=")
        if name:
            found.setdefault(name.lower(), setting.strip().strip('"'))
    return found


def wait_budget(deadline: Deadline, prefer: dict[str, str]) -> float:
    """How long a plain request may wait for a queued job: the setting, less when the request's
    deadline is nearer, less when the caller asks for less (`Prefer: wait=N`)."""
    budget = min(get_settings().sync_wait_seconds, deadline.left() - ANSWER_MARGIN_SECONDS)
    asked = prefer.get("wait", "")
    if asked.isdigit():
        budget = min(budget, float(asked))
    return max(0.0, budget)


def request_key(request: Request, body: BaseModel) -> str | None:
    """What identifies a retry of this request: its Idempotency-Key with the request itself
    (None without the header). Queued work started by the first attempt is found again by it."""
    key = request.headers.get("idempotency-key")
    return None if key is None else f"{key}\n{request.url.path}\n{body.model_dump_json()}"


@dataclass(frozen=True, slots=True)
class QueueOptions:
    """How a route that may queue work should: answer at once, or wait how long; the key that
    finds the work a previous attempt of this request started; and the request's deadline."""

    respond_async: bool
    wait_seconds: float
    request_key: str | None
    deadline: Deadline


def queue_options(request: Request, prefer: str | None, body: BaseModel) -> QueueOptions:
    wanted = preferences(prefer)
    respond_async = "respond-async" in wanted
    deadline = request_deadline(request)
    return QueueOptions(
        respond_async=respond_async,
        wait_seconds=0.0 if respond_async else wait_budget(deadline, wanted),
        request_key=request_key(request, body),
        deadline=deadline,
    )


def async_answer(body: BaseModel, *, running: bool, location: str) -> JSONResponse:
    """The answer to `Prefer: respond-async`: 202 with the job's `Location` (relative to the
    route's URL) while it runs; 200 when it has already ended (done inside the request, or
    found done by a retry)."""
    if not running:
        return JSONResponse(content=body.model_dump())
    return JSONResponse(
        status_code=202,
        content=body.model_dump(),
        headers={"Preference-Applied": "respond-async", "Location": location},
    )
