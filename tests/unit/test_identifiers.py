from __future__ import annotations

import re

import pytest
from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import check_dataset_id, format_ms, is_client_id, new_id


@pytest.mark.parametrize("value", ["a", "A.b_c:d-e", "0" * 128, "ds-2026.11.26"])
def test_client_ids_that_are_accepted(value: str) -> None:
    assert is_client_id(value)


@pytest.mark.parametrize("value", ["", "-a", ".a", "a b", "a/b", "a#b", "é", "a" * 129, "a\n"])
def test_client_ids_that_are_refused(value: str) -> None:
    assert not is_client_id(value)


def test_latest_is_allowed_only_where_it_names_the_newest() -> None:
    assert check_dataset_id("latest", allow_latest=True) == "latest"
    with pytest.raises(InvalidInput, match="reserved"):
        check_dataset_id("latest")


def test_timestamps_are_iso_utc_with_milliseconds() -> None:
    assert format_ms(0) == "1970-01-01T00:00:00.000Z"
    assert format_ms(1_795_999_999_123) == "2026-11-30T00:53:19.123Z"
    assert format_ms(1_795_999_999_007).endswith(".007Z")


def test_server_ids_are_unique_and_prefixed() -> None:
    ids = {new_id("ds_") for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(r"ds_[0-9a-f]{32}", i) for i in ids)
