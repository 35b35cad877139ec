"""The idempotency table, as Powertools' DynamoDB persistence layer sees it (key `id`, TTL on
`expiration`), on the service's DynamoDB client; and the parts of answers too large to keep in
a record (`id` body#<tenant>#<sha256>#<k>)."""

from __future__ import annotations

import hashlib
import time
import zlib
from functools import cache
from typing import Any

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

from evalsvc.core.errors import StorageUnavailable
from evalsvc.core.settings import get_settings
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, n, s


@cache
def _layer(table: str, endpoint: str | None, region: str) -> DynamoDBPersistenceLayer:
    return DynamoDBPersistenceLayer(table_name=table, boto3_client=dynamo.client())


def persistence_layer() -> DynamoDBPersistenceLayer:
    settings = get_settings()
    return _layer(settings.idempotency_table, settings.dynamodb_endpoint_url, settings.region)


def reset() -> None:
    _layer.cache_clear()


# ---- answers too large for one record ----------------------------------------------------------

# An answer body larger than this is kept apart from its record, compressed, in parts under
# their own keys (with the record's expiry, and an hour more), so no record passes the item
# limit whatever the answer.
PART_BYTES = 350_000


def _part_key(tenant: str, sha: str, k: int) -> Item:
    return {"id": s(f"body#{tenant}#{sha}#{k:04d}")}


def put_body(tenant: str, body: bytes, ttl_seconds: int) -> dict[str, Any]:
    """Keep `body` apart; the reference a record holds instead of it."""
    blob = zlib.compress(body, 6)
    sha = hashlib.sha256(body).hexdigest()
    parts = [blob[i : i + PART_BYTES] for i in range(0, len(blob), PART_BYTES)]
    expires = int(time.time()) + ttl_seconds + 3600
    requests = [
        {
            "PutRequest": {
                "Item": {**_part_key(tenant, sha, k), "expiration": n(expires), "blob": {"B": part}}
            }
        }
        for k, part in enumerate(parts)
    ]
    dynamo.batch_write(get_settings().idempotency_table, requests)
    return {"sha": sha, "parts": len(parts)}


def get_body(tenant: str, ref: dict[str, Any]) -> bytes:
    """The body `ref` names. StorageUnavailable when its parts are not all there."""
    sha, count = str(ref["sha"]), int(ref["parts"])
    keys = [_part_key(tenant, sha, k) for k in range(count)]
    items = sorted(
        dynamo.batch_get(get_settings().idempotency_table, keys), key=lambda item: item["id"]["S"]
    )
    try:
        body = zlib.decompress(b"".join(item["blob"]["B"] for item in items))
    except zlib.error:
        body = b""
    if hashlib.sha256(body).hexdigest() != sha:
        raise StorageUnavailable("the first answer to this request could not be read; retry")
    return body
