"""The API keys table: one item per key, addressed by the SHA-256 of the key."""

from __future__ import annotations

from evalsvc.core.errors import NotFound
from evalsvc.core.settings import get_settings
from evalsvc.models.api_keys import ApiKeyRecord
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s


def _table() -> str:
    return get_settings().api_keys_table


def _record(item: Item) -> ApiKeyRecord:
    return ApiKeyRecord(
        key_hash=get_s(item, "key_hash") or "",
        key_id=get_s(item, "key_id") or "",
        tenant=get_s(item, "tenant") or "",
        user=get_s(item, "user") or "",
        user_email=get_s(item, "user_email") or "",
        created_ms=get_n(item, "created_ms"),
        revoked=bool(item.get("revoked", {}).get("BOOL", False)),
    )


def put(record: ApiKeyRecord) -> None:
    dynamo.call(
        "put_item",
        TableName=_table(),
        Item={
            "key_hash": s(record.key_hash),
            "key_id": s(record.key_id),
            "tenant": s(record.tenant),
            "user": s(record.user),
            "user_email": s(record.user_email),
            "created_ms": n(record.created_ms),
            "revoked": {"BOOL": record.revoked},
        },
        ConditionExpression="attribute_not_exists(key_hash)",
    )


def get(key_hash: str) -> ApiKeyRecord | None:
    item = dynamo.get_item(_table(), {"key_hash": s(key_hash)})
    return _record(item) if item else None


def list_all() -> list[ApiKeyRecord]:
    """Every key (operators only; the table holds one small item per key)."""
    return sorted((_record(item) for item in dynamo.scan_all(_table())), key=lambda r: r.created_ms)


def revoke(key_hash: str) -> None:
    revoked = dynamo.conditional(
        "update_item",
        TableName=_table(),
        Key={"key_hash": s(key_hash)},
        UpdateExpression="SET revoked = :true",
        ConditionExpression="attribute_exists(key_hash)",
        ExpressionAttributeValues={":true": {"BOOL": True}},
    )
    if revoked is None:
        raise NotFound("no such API key")
