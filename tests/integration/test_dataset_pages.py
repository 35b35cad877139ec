"""Reading a dataset in pages, and datasets too large for one response."""

from __future__ import annotations

import random
import string

import pytest

from tests.integration.conftest import Tenant


def write(tenant: Tenant, dataset_id: str, n: int, tag: str = "p") -> None:
    data = [{"id": f"{tag}{i:03d}", "input": f"in {i}", "output": f"out {i}"} for i in range(n)]
    assert tenant.post(f"/data/seed/{dataset_id}", {"data": data}).status_code == 200


def read_all_pages(tenant: Tenant, path: str, limit: int) -> list[list[str]]:
    pages: list[list[str]] = []
    cursor = None
    while True:
        params: dict[str, object] = {"limit": limit}
        if cursor:
            params["cursor"] = cursor
        response = tenant.get(path, params=params)
        assert response.status_code == 200, response.text
        body = response.json()
        pages.append([p["id"] for p in body["data"]])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages


def test_pages_cover_the_dataset_in_order_once(acme: Tenant) -> None:
    write(acme, "ds", 25)

    pages = read_all_pages(acme, "/data/seed/ds", limit=10)

    assert [len(p) for p in pages] == [10, 10, 5]
    assert [pair for page in pages for pair in page] == [f"p{i:03d}" for i in range(25)]


def test_exact_multiple_of_the_limit_ends_without_an_empty_page(acme: Tenant) -> None:
    write(acme, "ds", 20)
    assert [len(p) for p in read_all_pages(acme, "/data/seed/ds", limit=10)] == [10, 10]


def test_whole_dataset_has_no_cursor_field(acme: Tenant) -> None:
    write(acme, "ds", 3)
    assert "next_cursor" not in acme.get("/data/seed/ds").json()


def test_pair_added_between_pages_appears_on_a_later_page(acme: Tenant) -> None:
    write(acme, "ds", 4)
    first = acme.get("/data/seed/ds", params={"limit": 3}).json()

    acme.post("/data/seed/ds/pair", {"id": "late", "input": "i", "output": "o"})
    second = acme.get("/data/seed/ds", params={"limit": 3, "cursor": first["next_cursor"]}).json()

    assert [p["id"] for p in second["data"]] == ["p003", "late"]
    assert second["next_cursor"] is None


def test_overwrite_between_pages_is_409(acme: Tenant) -> None:
    write(acme, "ds", 4)
    first = acme.get("/data/seed/ds", params={"limit": 2}).json()
    write(acme, "ds", 4, tag="n")

    response = acme.get("/data/seed/ds", params={"limit": 2, "cursor": first["next_cursor"]})

    assert response.status_code == 409
    assert "overwritten since the first page" in response.json()["error"]


def test_synthetic_datasets_page_too(acme: Tenant) -> None:
    from evalsvc.logic.datasets import import_synthetic_dataset

    header = import_synthetic_dataset("acme", [(f"i{i}", f"o{i}") for i in range(7)])

    pages = read_all_pages(acme, f"/data/synthetic/{header.dataset_id}", limit=3)

    assert [len(p) for p in pages] == [3, 3, 1]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 10_001}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"limit": "true"}, "limit"),
        ({"cursor": "not-a-cursor"}, "cursor is not valid"),
        ({"limit": 5, "cursor": "%%%"}, "cursor is not valid"),
    ],
)
def test_bad_paging_parameters_are_400(
    acme: Tenant, params: dict[str, object], message: str
) -> None:
    write(acme, "ds", 3)

    response = acme.get("/data/seed/ds", params=params)

    assert response.status_code == 400, response.text
    assert message in response.json()["error"]


def test_a_cursor_from_another_tenant_finds_nothing(acme: Tenant, globex: Tenant) -> None:
    write(acme, "ds", 4)
    cursor = acme.get("/data/seed/ds", params={"limit": 2}).json()["next_cursor"]

    assert globex.get("/data/seed/ds", params={"limit": 2, "cursor": cursor}).status_code == 404


def test_dataset_too_large_for_one_response_is_413_and_readable_in_pages(acme: Tenant) -> None:
    # Given ~6.5 MB of text that gzip cannot shrink much, read by a client without gzip
    rng = random.Random(7)
    text = "".join(rng.choices(string.ascii_letters + string.digits, k=95_000))
    data = [{"id": f"big{i}", "input": text, "output": str(i)} for i in range(70)]
    from evalsvc.logic.datasets import write_seed_dataset
    from evalsvc.models.api_keys import Identity
    from evalsvc.models.datasets import SeedDatasetIn

    write_seed_dataset(
        Identity("acme", "ann", "a@x", "k"), "huge", SeedDatasetIn.model_validate({"data": data})
    )
    plain = {**acme.headers, "Accept-Encoding": "identity"}

    response = acme.http.get("/v1/data/seed/huge", headers=plain)

    assert response.status_code == 413
    assert "read it in pages with ?limit=" in response.json()["error"]
    page = acme.http.get("/v1/data/seed/huge", headers=plain, params={"limit": 20})
    assert page.status_code == 200
    assert len(page.json()["data"]) == 20


def test_large_responses_are_gzipped_when_accepted(acme: Tenant) -> None:
    write(acme, "ds", 2000)

    response = acme.http.get(
        "/v1/data/seed/ds", headers={**acme.headers, "Accept-Encoding": "gzip"}
    )

    assert response.headers["content-encoding"] == "gzip"
    assert len(response.json()["data"]) == 2000
