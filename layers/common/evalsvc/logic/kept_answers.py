"""What is kept of an answer so that a request repeated with its `Idempotency-Key` gets it
again (api.idempotency is the HTTP side): Powertools' idempotent runner over the idempotency
table, and an answer too large for its record kept apart in parts."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function

from evalsvc.core.settings import get_settings
from evalsvc.storage import idempotency as store
from evalsvc.storage.idempotency import persistence_layer


@cache
def runner(
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


def keep_body(tenant: str, body: bytes) -> dict[str, Any]:
    """Keep `body` apart from its record, for as long as the record lives; its reference."""
    return store.put_body(tenant, body, get_settings().idempotency_ttl_seconds)


def kept_body(tenant: str, ref: dict[str, Any]) -> bytes:
    return store.get_body(tenant, ref)


def reset() -> None:
    """Forget the persistence layer and runner (the settings changed)."""
    runner.cache_clear()
    store.reset()
