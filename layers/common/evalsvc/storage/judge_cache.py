"""The judge cache: a judge's verdict on one (provider, prompt version, question, pair) kept
per tenant for a while (DynamoDB TTL on `expires_at`), so unchanged pairs are not judged again.

    pk                      what
    T#<tenant>#<sha256>     score, reason, expires_at
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from evalsvc.core.settings import get_settings
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import get_n, get_s, n, s


def _table() -> str:
    return get_settings().judge_cache_table


def _pk(tenant: str, key: str) -> str:
    return f"T#{tenant}#{key}"


def get_many(tenant: str, keys: Sequence[str]) -> dict[str, tuple[int, str]]:
    """Unexpired verdicts among `keys`, by key."""
    now = int(time.time())
    prefix = len(_pk(tenant, ""))
    items = dynamo.batch_get(
        _table(), [{"pk": s(_pk(tenant, key))} for key in dict.fromkeys(keys)], consistent=False
    )
    return {
        item["pk"]["S"][prefix:]: (get_n(item, "score"), get_s(item, "reason") or "")
        for item in items
        if get_n(item, "expires_at") > now
    }


def put_many(tenant: str, verdicts: Mapping[str, tuple[int, str]]) -> None:
    expires_at = int(time.time()) + get_settings().judge_cache_days * 86_400
    dynamo.batch_write(
        _table(),
        [
            {
                "PutRequest": {
                    "Item": {
                        "pk": s(_pk(tenant, key)),
                        "score": n(score),
                        "reason": s(reason),
                        "expires_at": n(expires_at),
                    }
                }
            }
            for key, (score, reason) in verdicts.items()
        ],
    )
