"""`Idempotency-Key` on POST and PUT: a retried request gets the first answer and the work is
done once (Powertools idempotency, DynamoDB persistence). The key is scoped to the tenant, the
method and the path; the body must be the same, or the retry is a 422. Only successes are
remembered: a request that failed may be retried with the same key and runs again.

A record keeps the answer's body when it is small (SAVED_BODY_BYTES). A larger answer is kept
by reference: to what the route stored and named (api.replays: an evaluation answers with its
result, rendered again from storage), or else to its compressed body kept apart in parts. No
record passes DynamoDB's item limit, whatever the answer."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, cast

import anyio.from_thread
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)
from fastapi import Request, Response
from fastapi.concurrency import run_in_threadpool

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

from evalsvc.api import replays
from evalsvc.core.errors import Conflict, InvalidInput, StorageUnavailable, Unprocessable
from evalsvc.core.observability import logger
from evalsvc.core.settings import get_settings
from evalsvc.logic import kept_answers
from evalsvc.models.api_keys import Identity

_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")

Handle = Callable[[Request], Coroutine[Any, Any, Response]]


# Response headers that are part of the answer, so a replay carries them too.
_KEPT_HEADERS = ("location", "preference-applied", "vary")


class _Unrecorded(Exception):
    """The work was done, but its answer could not be kept for a replay."""


# The largest body a record keeps itself (base64 in the record: a third more).
SAVED_BODY_BYTES = 64 * 1024


def _captured(request: Request, identity: Identity, response: Response) -> dict[str, Any]:
    saved: dict[str, Any] = {
        "status": response.status_code,
        "media_type": response.media_type,
        "encoding": response.headers.get("content-encoding"),
        "headers": {k: response.headers[k] for k in _KEPT_HEADERS if k in response.headers},
    }
    body = bytes(response.body)
    named = replays.named(request)
    if len(body) <= SAVED_BODY_BYTES:
        saved["body"] = base64.b64encode(body).decode()
    elif named is not None and replays.can_render(named[0]):
        saved["replay"] = list(named)
    else:
        saved["body_ref"] = kept_answers.keep_body(identity.tenant, body)
    return saved


def _replayed(request: Request, identity: Identity, saved: dict[str, Any]) -> Response:
    """The saved answer, marked as a replay (rendered again or read back when it was kept by
    reference)."""
    headers = {**saved.get("headers", {}), "Idempotent-Replay": "true"}
    if "replay" in saved:
        kind, ident = saved["replay"]
        rendered = replays.render(request, identity, kind, ident)
        if rendered is None:
            raise StorageUnavailable("the first answer to this request cannot be rebuilt here")
        rendered.headers.update(headers)
        return rendered
    if saved.get("encoding"):
        headers["Content-Encoding"] = saved["encoding"]
    if "body_ref" in saved:
        body = kept_answers.kept_body(identity.tenant, saved["body_ref"])
    else:
        body = base64.b64decode(saved["body"])
    return Response(
        content=body,
        status_code=saved["status"],
        media_type=saved["media_type"],
        headers=headers,
    )


class _LocalContext:
    """Stands in for the Lambda context off Lambda: an in-progress key then expires after as
    long as a request may take."""

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


async def handle_idempotently(request: Request, identity: Identity, handle: Handle) -> Response:
    """Run `handle` at most once per (tenant, Idempotency-Key, method, path)."""
    key = request.headers["idempotency-key"]
    if not _KEY.match(key):
        raise InvalidInput("Idempotency-Key must be 1-255 visible ASCII characters")
    body = await request.body()
    data = {
        "tenant": identity.tenant,
        "key": key,
        "method": request.method,
        "path": request.url.path,
        "body_sha256": hashlib.sha256(body).hexdigest(),
    }

    answered: Response | None = None

    def work() -> dict[str, Any]:
        nonlocal answered
        answered = anyio.from_thread.run(handle, request)
        try:
            return _captured(request, identity, answered)
        except Exception as exc:
            # Powertools forgets the key of a failed function: a retry may run again.
            raise _Unrecorded from exc

    settings = get_settings()
    runner, config = kept_answers.runner(
        settings.idempotency_table, settings.dynamodb_endpoint_url, settings.idempotency_ttl_seconds
    )
    # An in-progress key expires when the Lambda invocation would have timed out.
    context = request.scope.get("aws.context") or _LocalContext()
    config.register_lambda_context(cast("LambdaContext", context))
    try:
        saved = await run_in_threadpool(runner, request=data, work=work)
    except IdempotencyValidationError as exc:
        raise Unprocessable(
            "this Idempotency-Key was already used with a different request body; use a new key "
            "for a different request"
        ) from exc
    except IdempotencyAlreadyInProgressError as exc:
        raise Conflict(
            "a request with this Idempotency-Key is still in progress; retry in a moment"
        ) from exc
    except (IdempotencyPersistenceLayerError, _Unrecorded) as exc:
        if answered is not None:
            # The work was done and only its record failed: the caller gets the answer (a
            # retry with this key would do the work again, but there is no need to retry).
            logger.warning("an answer could not be recorded for its Idempotency-Key")
            return answered
        raise StorageUnavailable(
            "could not record the Idempotency-Key; nothing was changed, retry"
        ) from exc
    if answered is not None:
        return answered
    return await run_in_threadpool(_replayed, request, identity, saved)


def reset() -> None:
    """Forget the persistence layer and runner (the settings changed)."""
    kept_answers.reset()
