from __future__ import annotations

import pytest
from evalsvc.core.errors import Unauthorized
from evalsvc.logic.api_keys import hash_key, parse_authorization


@pytest.mark.parametrize(
    ("header", "key"),
    [
        ("evk_abc", "evk_abc"),
        ("Bearer evk_abc", "evk_abc"),
        ("bearer   evk_abc ", "evk_abc"),
        (" evk_abc", "evk_abc"),
    ],
)
def test_key_is_taken_raw_or_after_bearer(header: str, key: str) -> None:
    assert parse_authorization(header) == key


@pytest.mark.parametrize("header", [None, "", "   ", "Bearer", "Bearer ", "two words", "k" * 300])
def test_missing_or_malformed_header_is_unauthorized(header: str | None) -> None:
    with pytest.raises(Unauthorized):
        parse_authorization(header)


def test_keys_are_stored_as_sha256() -> None:
    assert hash_key("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
