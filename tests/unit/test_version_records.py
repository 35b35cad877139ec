"""What the purge trusts of a removed version record: its key names one dataset, unambiguously,
and its fields agree with its key; anything else is no version record."""

from __future__ import annotations

from typing import Any

import pytest
from evalsvc.core.identifiers import CLIENT_ID_PATTERN
from evalsvc.models.datasets import DatasetKind
from evalsvc.storage.datasets.history import (
    KeptVersion,
    VersionKind,
    VersionRecord,
    _record_item,
    gone_item,
    kept_version,
    record_sk,
)
from evalsvc.storage.datasets.keys import (
    dataset_pk,
    latest_pk,
    parse_dataset_pk,
    prompt_pk,
    version_pk,
)
from hypothesis import given
from hypothesis import strategies as st

SEED = DatasetKind.SEED
client_ids = st.from_regex(CLIENT_ID_PATTERN.strip("^$"), fullmatch=True)

RECORD = VersionRecord(
    version="0123456789abcdef0123456789abcdef",
    created_ms=1_764_115_200_000,
    kind=VersionKind.CREATE,
    pairs=2,
    bytes=96,
    shards=1,
    append_shards=16,
    replaced_ms=1_764_201_600_000,
    expires_ms=1_795_737_600_000,
)


@given(client_ids, st.sampled_from(list(DatasetKind)), client_ids)
def test_a_dataset_key_parses_back_to_its_tenant_kind_and_id(
    tenant: str, kind: DatasetKind, dataset_id: str
) -> None:
    assert parse_dataset_pk(dataset_pk(tenant, kind, dataset_id)) == (tenant, kind, dataset_id)


@pytest.mark.parametrize(
    "pk",
    [
        latest_pk("acme", SEED),
        prompt_pk("acme", "Be kind."),
        "T#acme#text#" + "0" * 64,
        version_pk("acme", SEED, "ds", "v1"),
        version_pk("acme", SEED, "ds", "v1") + "#s03",
        "T#acme#seed",
        "X#acme#seed#ds",
        "T##seed#ds",
        "T#acme#seed#",
        "T#acme#other#ds",
        "T#ac me#seed#ds",
        "T#acme#seed#-ds",
        "",
    ],
)
def test_any_other_key_names_no_dataset(pk: str) -> None:
    assert parse_dataset_pk(pk) is None


def _item(**changes: Any) -> dict[str, Any]:
    item = _record_item("acme", SEED, "ds", RECORD)
    for name, value in changes.items():
        if value is None:
            item.pop(name)
        else:
            item[name] = value
    return item


def test_a_record_item_is_the_version_it_keeps_and_carries_its_expiry_in_seconds() -> None:
    item = _item()
    assert item["sk"] == {"S": record_sk(RECORD.created_ms, RECORD.version)}
    assert item["expires_at"] == {"N": "1795737600"}
    assert kept_version(item) == KeptVersion("acme", SEED, "ds", RECORD)


def test_its_tombstone_says_when_it_expired() -> None:
    item = gone_item("acme", SEED, "ds", RECORD)
    assert item["pk"] == {"S": dataset_pk("acme", SEED, "ds")}
    assert item["sk"] == {"S": f"gone#{RECORD.version}"}
    assert item["expired_ms"] == {"N": str(RECORD.expires_ms)}
    assert "expires_at" not in item  # a tombstone is kept


@pytest.mark.parametrize(
    "changes",
    [
        {"sk": {"S": "dataset"}},
        {"sk": {"S": "gone#0123456789abcdef0123456789abcdef"}},
        {"sk": {"S": record_sk(1, RECORD.version)}},  # its time is not the record's
        {"pk": {"S": latest_pk("acme", SEED)}},
        {"pk": {"S": version_pk("acme", SEED, "ds", RECORD.version)}},
        {"pk": None},
        {"sk": None},
        {"version": None},
        {"version": {"S": "a#b"}},
        {"created_ms": {"N": "x"}},
        {"version_kind": {"S": "merge"}},
        {"shards": {"N": "-1"}},
        {"append_shards": {"N": "1000000"}},
        {"shards": {"S": "1"}},
    ],
)
def test_an_item_that_is_no_well_formed_version_record_keeps_nothing(
    changes: dict[str, Any],
) -> None:
    assert kept_version(_item(**changes)) is None
