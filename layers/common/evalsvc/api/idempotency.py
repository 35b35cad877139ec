"""`Idempotency-Key` on POST and PUT: a retried request gets the first answer and the work is
done once (Powertools idempotency, DynamoDB persistence). The key is scoped to the tenant, the
method and the path; the body must be the same, or the retry is a 422. Only successes are
remembered: a request that failed may be retried with the same key and runs again."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Coroutine
from functools import cache
from typing import TYPE_CHECKING, Any, cast

import anyio.from_thread
from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyPersistenceLayerError,
    IdempotencyValidationError,
)
from fastapi import Request, Response
from fastapi.concurrency import run_in_threadpool

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

from evalsvc.errors import Conflict, InvalidInput, StorageUnavailable, Unprocessable
from evalsvc.models.api_keys import Identity
from evalsvc.settings import get_settings
from evalsvc.storage import idempotency as store
from evalsvc.storage.idempotency import persistence_layer

_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")

Handle = Callable[[Request], Coroutine[Any, Any, Response]]


# Response headers that are part of the answer, so a replay carries them too.
_KEPT_HEADERS = ("location", "preference-applied", "vary")


def _captured(response: Response) -> dict[str, Any]:
    return {
        "status": response.status_code,
        "media_type": response.media_type,
        "encoding": response.headers.get("content-encoding"),
        "headers": {k: response.headers[k] for k in _KEPT_HEADERS if k in response.headers},
        "body": base64.b64encode(response.body).decode(),
    }


def _restored(saved: dict[str, Any], *, replayed: bool) -> Response:
    headers = {**saved.get("headers", {})}
    if replayed:
        headers["Idempotent-Replay"] = "true"
    if saved.get("encoding"):
        headers["Content-Encoding"] = saved["encoding"]
    return Response(
        content=base64.b64decode(saved["body"]),
        status_code=saved["status"],
        media_type=saved["media_type"],
        headers=headers,
    )


class _LocalContext:
    """Stands in for the Lambda context off Lambda: an in-progress key then expires after as
    long as a request may take."""

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


@cache
def _idempotent_runner(
    table: str, endpoint: str | None, ttl: int
) -> tuple[Callable[..., dict[str, Any]], IdempotencyConfig]:
    config = IdempotencyConfig(
        event_key_jmespath="[tenant, key, method, path]",
        payload_validation_jmespath="body_sha256",
        expires_after_seconds=ttl,
    )

    def run(request: dict[str, Any], work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        return work()

    runner = idempotent_function(
        run,
        data_keyword_argument="request",
        persistence_store=persistence_layer(),
        config=config,
        key_prefix="evalsvc",
    )
    return runner, config


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

    ran = False

    def work() -> dict[str, Any]:
        nonlocal ran
        ran = True
        return _captured(anyio.from_thread.run(handle, request))

    settings = get_settings()
    runner, config = _idempotent_runner(
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
    except IdempotencyPersistenceLayerError as exc:
        raise StorageUnavailable(
            "could not record the Idempotency-Key; nothing was changed, retry"
        ) from exc
    return _restored(saved, replayed=not ran)


def reset() -> None:
    """Forget the persistence layer and runner (the settings changed)."""
    _idempotent_runner.cache_clear()
    store.reset()
