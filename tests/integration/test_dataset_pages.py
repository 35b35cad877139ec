"""Reading a dataset in pages, and datasets too large for one response."""

from __future__ import annotations

import random
import string

import pytest

from tests.integration.conftest import Tenant, ok


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

    ok(acme.post("/data/seed/ds/pair", {"id": "late", "input": "i", "output": "o"}))
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
    # 19 of these 95 KB pairs fill a page (1.9 MB): the page stops there, not at the limit
    assert len(page.json()["data"]) == 19 and page.json()["next_cursor"]


def test_large_responses_are_gzipped_when_accepted(acme: Tenant) -> None:
    write(acme, "ds", 2000)

    response = acme.http.get(
        "/v1/data/seed/ds", headers={**acme.headers, "Accept-Encoding": "gzip"}
    )

    assert response.headers["content-encoding"] == "gzip"
    assert len(response.json()["data"]) == 2000


def big_pairs(count: int) -> list[dict[str, object]]:
    return [{"id": f"b{i}", "input": "x" * 95_000, "output": "o"} for i in range(count)]


def _write_directly(tenant: str, dataset_id: str, data: list[dict[str, object]]) -> None:
    from evalsvc.logic.datasets import write_seed_dataset
    from evalsvc.models.api_keys import Identity
    from evalsvc.models.datasets import SeedDatasetIn

    body = SeedDatasetIn.model_validate({"data": data})
    write_seed_dataset(Identity(tenant, "ann", "a@x", "k"), dataset_id, body)


def test_a_dataset_known_to_be_too_large_is_refused_before_its_pairs_are_read(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.storage.datasets import reads

    text = "x" * 95_000
    _write_directly(
        "acme", "huge", [{"id": f"b{i}", "input": text, "output": "o"} for i in range(70)]
    )

    def no_pairs(*args: object, **kwargs: object) -> None:
        raise AssertionError("the pairs were read")

    monkeypatch.setattr(reads, "_query_pairs", no_pairs)
    plain = {**acme.headers, "Accept-Encoding": "identity"}

    response = acme.http.get("/v1/data/seed/huge", headers=plain)

    assert response.status_code == 413
    assert response.json()["error"] == (
        "dataset 'huge' (70 pairs, 6.7 MB of text) is too large for one response: read it in "
        "pages with ?limit=1000, then ?limit=1000&cursor=<next_cursor>"
    )


def test_pages_of_4_byte_text_at_the_field_limits_each_fit_one_response(acme: Tenant) -> None:
    from evalsvc.api.responses import MAX_RESPONSE_BYTES

    # Given pairs whose input and output are both 100,000 four-byte characters (800 KB each)
    rng = random.Random(3)
    emoji = [chr(0x1F600 + k) for k in range(64)]
    data = [
        {
            "id": f"e{i}",
            "input": "".join(rng.choices(emoji, k=100_000)),
            "output": "".join(rng.choices(emoji, k=100_000)),
        }
        for i in range(5)
    ]
    _write_directly("acme", "wide", data)
    plain = {**acme.headers, "Accept-Encoding": "identity"}

    # When it is read in pages of up to 1,000 pairs, without compression
    ids, sizes, cursor = [], [], None
    while True:
        params: dict[str, object] = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
        page = acme.http.get("/v1/data/seed/wide", headers=plain, params=params)
        assert page.status_code == 200, page.text[:200]
        sizes.append(len(page.content))
        ids += [p["id"] for p in page.json()["data"]]
        cursor = page.json()["next_cursor"]
        if cursor is None:
            break

    # Then the pages stopped by size, not count, and every one fits a Lambda response
    assert ids == [f"e{i}" for i in range(5)]
    assert len(sizes) == 3
    assert max(sizes) < MAX_RESPONSE_BYTES


def test_headers_know_the_bytes_of_their_pairs(acme: Tenant) -> None:
    from evalsvc.models.datasets import DatasetKind, Pair, pair_bytes
    from evalsvc.storage import datasets as store

    data = [
        {"id": "a", "input": "\U0001f600" * 10, "output": "é", "labels": ["x", "yz"]},
        {"input": "plain", "output": "text", "input_media": "data:,m"},
    ]
    assert acme.post("/data/seed/sized", {"data": data}).status_code == 200
    added = {"id": "c", "input": "ü" * 3, "output": "o", "system_prompt_template": "T"}
    assert acme.post("/data/seed/sized/pair", added).status_code == 200

    header, pairs = store.read_dataset("acme", DatasetKind.SEED, "sized", 10**6)

    assert header.bytes == sum(pair_bytes(p) for p in pairs)
    assert pair_bytes(Pair(id="a", input="\U0001f600" * 10, output="é", labels=["x", "yz"])) == (
        1 + 40 + 2 + 1 + 2
    )


def test_a_header_without_a_size_is_read_within_the_budget(
    acme: Tenant, tables: dict[str, str]
) -> None:
    import boto3
    from evalsvc.models.datasets import DatasetKind
    from evalsvc.storage.datasets import dataset_pk, get_header

    # Given datasets whose headers were written before sizes were kept
    _write_directly(
        "acme", "old", [{"id": f"b{i}", "input": "x" * 95_000, "output": "o"} for i in range(70)]
    )
    write(acme, "small", 3)
    client = boto3.client("dynamodb", region_name="us-east-1")
    for name in ("old", "small"):
        key = {"pk": {"S": dataset_pk("acme", DatasetKind.SEED, name)}, "sk": {"S": "dataset"}}
        client.update_item(
            TableName=tables["EVALSVC_DATASETS_TABLE"], Key=key, UpdateExpression="REMOVE bytes"
        )
    plain = {**acme.headers, "Accept-Encoding": "identity"}

    # Then the large one stops being read at the budget, and the small one reads as always
    too_large = acme.http.get("/v1/data/seed/old", headers=plain)
    assert too_large.status_code == 413
    assert too_large.json()["error"].startswith("dataset 'old' (70 pairs) is too large")
    assert len(acme.http.get("/v1/data/seed/small", headers=plain).json()["data"]) == 3
    # And adding a pair keeps its size unknown rather than wrong
    assert acme.post("/data/seed/small/pair", {"input": "i", "output": "o"}).status_code == 200
    header = get_header("acme", DatasetKind.SEED, "small")
    assert header is not None and header.bytes is None and header.pair_count == 4
