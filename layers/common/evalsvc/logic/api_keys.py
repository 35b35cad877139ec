"""Issuing, checking and revoking API keys."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time

from evalsvc.core.errors import InvalidInput, NotFound, Unauthorized
from evalsvc.core.identifiers import is_client_id, now_ms
from evalsvc.core.settings import get_settings
from evalsvc.models.api_keys import ApiKeyRecord, Identity
from evalsvc.storage import api_keys as store

KEY_PREFIX = "evk_"
_MAX_KEY_CHARS = 256


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_key(
    tenant: str, user: str, user_email: str, *, key: str | None = None
) -> tuple[str, ApiKeyRecord]:
    """A new random key (256 bits) for `user` in `tenant`, or `key` itself when given (the
    local dev key). Only its hash is stored; the key is returned once, here."""
    if not is_client_id(tenant):
        raise InvalidInput("tenant must be 1-128 letters, digits, '.', '_', ':' or '-'")
    if not user.strip():
        raise InvalidInput("user must not be empty")
    if "@" not in user_email:
        raise InvalidInput(f"{user_email!r} is not an email address")
    if key is not None and len(key) < 16:
        raise InvalidInput("an API key must be at least 16 characters")
    key = key or KEY_PREFIX + secrets.token_urlsafe(32)
    digest = hash_key(key)
    record = ApiKeyRecord(
        key_hash=digest,
        key_id=digest[:12],
        tenant=tenant,
        user=user.strip(),
        user_email=user_email.strip(),
        created_ms=now_ms(),
    )
    store.put(record)
    return key, record


def ensure_key(tenant: str, user: str, user_email: str, key: str) -> ApiKeyRecord:
    """Make `key` a valid key of `tenant`/`user` (created if unknown, left alone if present)."""
    existing = store.get(hash_key(key))
    if existing is not None:
        if existing.tenant != tenant or existing.revoked:
            raise InvalidInput("that key exists already for another tenant, or is revoked")
        return existing
    return create_key(tenant, user, user_email, key=key)[1]


def list_keys(tenant: str | None = None) -> list[ApiKeyRecord]:
    return [r for r in store.list_all() if tenant is None or r.tenant == tenant]


def revoke_key(key_or_id: str) -> ApiKeyRecord:
    """Revoke by the key itself or by its key id (as `keys list` shows it)."""
    candidates = [r for r in store.list_all() if key_or_id in (r.key_id, r.key_hash)]
    if not candidates and key_or_id.startswith(KEY_PREFIX):
        found = store.get(hash_key(key_or_id))
        candidates = [found] if found else []
    if not candidates:
        raise NotFound(f"no API key with id {key_or_id[:16]!r}")
    record = candidates[0]
    store.revoke(record.key_hash)
    record.revoked = True
    _cache.forget(record.key_hash)
    return record


class _IdentityCache:
    """Keys seen valid recently, so a warm function does not read the table on every request.
    Only valid keys are cached: a new key works at once, a revoked one within the TTL."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[float, Identity]] = {}
        self._lock = threading.Lock()

    def get(self, digest: str) -> Identity | None:
        with self._lock:
            entry = self._entries.get(digest)
        if entry is None or entry[0] < time.monotonic():
            return None
        return entry[1]

    def put(self, digest: str, identity: Identity, ttl: float) -> None:
        with self._lock:
            if len(self._entries) > 1024:
                self._entries.clear()
            self._entries[digest] = (time.monotonic() + ttl, identity)

    def forget(self, digest: str) -> None:
        with self._lock:
            self._entries.pop(digest, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_cache = _IdentityCache()


def clear_cache() -> None:
    _cache.clear()


def parse_authorization(header: str | None) -> str:
    """The key from an `Authorization` header: the raw key, or `Bearer <key>`."""
    if header is None or not header.strip():
        raise Unauthorized("missing API key: send it in the Authorization header")
    value = header.strip()
    scheme, _, rest = value.partition(" ")
    if rest and scheme.lower() == "bearer":
        value = rest.strip()
    if not value or len(value) > _MAX_KEY_CHARS or " " in value or value.lower() == "bearer":
        raise Unauthorized("invalid API key")
    return value


def authenticate(header: str | None) -> Identity:
    key = parse_authorization(header)
    digest = hash_key(key)
    cached = _cache.get(digest)
    if cached is not None:
        return cached
    record = store.get(digest)
    if record is None or not hmac.compare_digest(record.key_hash, digest) or record.revoked:
        raise Unauthorized("invalid or revoked API key")
    identity = record.identity()
    _cache.put(digest, identity, get_settings().auth_cache_seconds)
    return identity
