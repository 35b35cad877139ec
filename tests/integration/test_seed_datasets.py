"""Seed dataset behaviour over HTTP (the local app, all routers), against moto tables."""

from __future__ import annotations

import pytest

from tests import dataset_stream
from tests.integration.conftest import Tenant, ok


def pairs(n: int, prefix: str = "p") -> list[dict[str, object]]:
    return [{"id": f"{prefix}{i}", "input": f"in {i}", "output": f"out {i}"} for i in range(n)]


def test_insert_then_read_keeps_request_order_and_fields(acme: Tenant) -> None:
    body = {
        "data": [
            {
                "id": "b",
                "input": "i1",
                "output": "o1",
                "labels": ["x", "y"],
                "input_media": "data:image/png;base64,AAAA",
            },
            {"id": "a", "input": "i2", "output": "o2", "system_prompt_template": "Hi {name}"},
            {"input": "i3", "output": "o3"},
        ],
        "system_prompt": "Be brief.",
        "unknown_field": "ignored",
    }
    assert acme.post("/data/seed/ds1", body).json() == {"id": "ds1"}

    dataset = acme.get("/data/seed/ds1").json()

    assert [p["input"] for p in dataset["data"]] == ["i1", "i2", "i3"]
    first, second, third = dataset["data"]
    assert first["metadata"]["labels"] == ["x", "y"]
    assert first["input_media"] == "data:image/png;base64,AAAA"
    assert second["system_prompt_template"] == "Hi {name}"
    assert "input_media" not in second
    assert third["id"].startswith("p_")
    assert dataset["system_prompt"] == "Be brief."


def test_empty_dataset_is_valid_and_accepts_pairs(acme: Tenant) -> None:
    assert acme.post("/data/seed/empty", {"data": []}).status_code == 200
    assert acme.get("/data/seed/empty").json()["data"] == []

    response = acme.post("/data/seed/empty/pair", {"input": "q", "output": "a"})

    assert response.status_code == 200
    assert [p["input"] for p in acme.get("/data/seed/empty").json()["data"]] == ["q"]


def test_overwrite_replaces_every_pair_and_keeps_created_at(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": pairs(5), "system_prompt": "old"}))
    created = acme.get("/data/seed/ds").json()["created_at"]

    ok(acme.put("/data/seed/ds", {"data": pairs(2, prefix="n"), "system_prompt": "new"}))

    dataset = acme.get("/data/seed/ds").json()
    assert [p["id"] for p in dataset["data"]] == ["n0", "n1"]
    assert dataset["system_prompt"] == "new"
    assert dataset["created_at"] == created


def test_pairs_added_one_by_one_come_back_oldest_first(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": pairs(2)}))
    for i in range(5):
        assert (
            acme.post(
                "/data/seed/ds/pair", {"id": f"x{i}", "input": "q", "output": "a"}
            ).status_code
            == 200
        )

    dataset = acme.get("/data/seed/ds").json()

    assert [p["id"] for p in dataset["data"]] == ["p0", "p1", "x0", "x1", "x2", "x3", "x4"]
    stamps = [p["metadata"]["created_at"] for p in dataset["data"]]
    assert stamps == sorted(stamps)


def test_add_pair_generates_an_id_when_absent(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": []}))

    response = acme.post("/data/seed/ds/pair", {"input": "q", "output": "a", "labels": ["l"]})

    assert response.status_code == 200
    assert response.json()["dataset_id"] == "ds"
    pair_id = response.json()["pair_id"]
    assert acme.get("/data/seed/ds").json()["data"][0]["id"] == pair_id


def test_add_pair_to_missing_dataset_is_404(acme: Tenant) -> None:
    response = acme.post("/data/seed/nothing-here/pair", {"input": "q", "output": "a"})
    assert response.status_code == 404
    assert response.json() == {"error": "no seed dataset with id 'nothing-here'"}


def test_duplicate_pair_id_is_409_and_leaves_dataset_unchanged(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": pairs(2)}))

    response = acme.post("/data/seed/ds/pair", {"id": "p1", "input": "other", "output": "other"})

    assert response.status_code == 409
    assert response.json() == {"error": "pair id 'p1' already exists in dataset 'ds'"}
    dataset = acme.get("/data/seed/ds").json()
    assert [(p["id"], p["input"]) for p in dataset["data"]] == [("p0", "in 0"), ("p1", "in 1")]


def test_latest_is_the_most_recently_created_dataset(acme: Tenant) -> None:
    ok(acme.post("/data/seed/first", {"data": pairs(1)}))
    ok(acme.post("/data/seed/second", {"data": pairs(1)}))
    ok(acme.put("/data/seed/first", {"data": pairs(3)}))  # an overwrite is not a creation

    assert acme.get("/data/seed/latest").json()["id"] == "second"


def test_latest_without_any_dataset_is_404(acme: Tenant) -> None:
    response = acme.get("/data/seed/latest")
    assert response.status_code == 404
    assert response.json() == {"error": "there is no seed dataset yet"}


def test_pair_by_prompt_creates_a_dataset_then_reuses_it(acme: Tenant) -> None:
    first = acme.post(
        "/data/seed/pair", {"input": "q1", "output": "a1", "system_prompt_template": "T"}
    ).json()
    second = acme.post(
        "/data/seed/pair", {"input": "q2", "output": "a2", "system_prompt_template": "T"}
    ).json()
    other = acme.post(
        "/data/seed/pair", {"input": "q3", "output": "a3", "system_prompt_template": "U"}
    ).json()

    assert first["dataset_id"] == second["dataset_id"] != other["dataset_id"]
    dataset = acme.get(f"/data/seed/{first['dataset_id']}").json()
    assert dataset["system_prompt"] == "T"
    assert [p["input"] for p in dataset["data"]] == ["q1", "q2"]


def test_pair_by_prompt_uses_an_uploaded_dataset_with_that_prompt(acme: Tenant) -> None:
    ok(acme.post("/data/seed/mine", {"data": pairs(1), "system_prompt": "T"}))

    response = acme.post(
        "/data/seed/pair", {"input": "q", "output": "a", "system_prompt_template": "T"}
    )

    assert response.json()["dataset_id"] == "mine"


def test_pair_by_prompt_after_the_dataset_changed_prompt_makes_a_new_one(acme: Tenant) -> None:
    ok(acme.post("/data/seed/mine", {"data": pairs(1), "system_prompt": "T"}))
    ok(acme.put("/data/seed/mine", {"data": pairs(1), "system_prompt": "changed"}))

    response = acme.post(
        "/data/seed/pair", {"input": "q", "output": "a", "system_prompt_template": "T"}
    )

    assert response.status_code == 200
    new_id = response.json()["dataset_id"]
    assert new_id != "mine"
    assert acme.get(f"/data/seed/{new_id}").json()["system_prompt"] == "T"
    assert len(acme.get("/data/seed/mine").json()["data"]) == 1


def test_pair_by_prompt_with_a_duplicate_id_is_409(acme: Tenant) -> None:
    ok(
        acme.post(
            "/data/seed/pair",
            {"id": "same", "input": "q", "output": "a", "system_prompt_template": "T"},
        )
    )

    response = acme.post(
        "/data/seed/pair",
        {"id": "same", "input": "q", "output": "a", "system_prompt_template": "T"},
    )

    assert response.status_code == 409


@pytest.mark.parametrize(
    "character",
    ["x", "\u00e9", "\u20ac", "\U0001f600"],
    ids=["1-byte", "2-byte", "3-byte", "4-byte"],
)
def test_pairs_at_every_field_limit_round_trip(acme: Tenant, character: str) -> None:
    # Given a pair with every field at its limit: input and output of 100,000 characters of
    # 1 to 4 bytes each (100 KB to 400 KB apiece in UTF-8), 256 KiB of media, 32 labels of 128
    # characters: from well under DynamoDB's 400 KB item limit to far over it
    text = character * 100_000
    media = "data:application/octet-stream;base64," + "Q" * (256 * 1024 - 37)
    labels = [f"{k:02d}" + character * 126 for k in range(32)]
    big = {
        "id": "big",
        "input": text,
        "output": text[:-1] + "!",
        "input_media": media,
        "labels": labels,
        "system_prompt_template": character * 100_000,
    }
    assert len(media) == 256 * 1024

    written = acme.post("/data/seed/large", {"data": [big, {"input": "s", "output": "t"}]})
    assert written.status_code == 200, written.text
    added = acme.post("/data/seed/large/pair", {**big, "id": "big2"})
    assert added.status_code == 200, added.text

    data = acme.get("/data/seed/large").json()["data"]

    assert [p["id"] for p in data] == ["big", data[1]["id"], "big2"]
    for pair in (data[0], data[2]):
        assert pair["input"] == text
        assert pair["output"] == text[:-1] + "!"
        assert pair["input_media"] == media
        assert pair["metadata"]["labels"] == labels
        assert pair["system_prompt_template"] == character * 100_000
    assert (data[1]["input"], data[1]["output"]) == ("s", "t")


def test_overwrite_keeps_the_replaced_pairs_until_their_retention_ends(
    acme: Tenant, tables: dict[str, str]
) -> None:
    import boto3

    def pair_items() -> list[dict[str, object]]:
        items = boto3.client("dynamodb").scan(TableName=tables["EVALSVC_DATASETS_TABLE"])["Items"]
        return [i for i in items if i["sk"]["S"].startswith(("p#", "x#"))]

    ok(acme.post("/data/seed/ds", {"data": pairs(30)}))
    ok(acme.post("/data/seed/ds", {"data": pairs(3)}))

    assert len(pair_items()) == 33
    (record,) = dataset_stream.records("acme", "ds")
    assert record.pairs == 30
    assert len(acme.get("/data/seed/ds").json()["data"]) == 3

    dataset_stream.expire_all("acme", "ds")

    assert len(pair_items()) == 3
