"""Every error path of the dataset routes answers the contract's code with `{"error": ...}`."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.integration.conftest import Tenant
from tests.lambda_support import LambdaContext


def assert_error(response, status: int, contains: str = "") -> None:  # type: ignore[no-untyped-def]
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"]
    assert isinstance(body["error"], str) and body["error"]
    assert contains in body["error"]


@pytest.fixture
def seeded(acme: Tenant) -> Tenant:
    assert (
        acme.post(
            "/data/seed/ds", {"data": [{"id": "p0", "input": "i", "output": "o"}]}
        ).status_code
        == 200
    )
    return acme


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/data/seed"),
        ("POST", "/data/seed/ds"),
        ("PUT", "/data/seed/ds"),
        ("GET", "/data/seed/ds"),
        ("POST", "/data/seed/ds/pair"),
        ("POST", "/data/seed/pair"),
        ("GET", "/data/synthetic/latest"),
    ],
)
@pytest.mark.parametrize("authorization", [None, "", "evk_unknown", "Bearer", "Basic abc:def"])
def test_missing_or_unknown_key_is_401(
    seeded: Tenant, method: str, path: str, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = seeded.http.request(method, f"/v1{path}", headers=headers, content=b"{not json")
    assert_error(response, 401)


def test_revoked_key_is_401(acme: Tenant) -> None:
    from evalsvc.logic import api_keys

    assert acme.get("/data/seed/latest").status_code == 404
    api_keys.revoke_key(acme.key)

    assert_error(acme.get("/data/seed/latest"), 401, "revoked")


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"input": 5, "output": "o"}, 400, "input: Input should be a valid string"),
        ({"input": "i", "output": None}, 400, "output:"),
        ({"input": "i"}, 400, "output: Field required"),
        ({"input": "i", "output": "o", "labels": "x"}, 400, "labels: Input should be a valid list"),
        ({"input": "i", "output": "o", "labels": [1]}, 400, "labels[0]"),
        ({"input": "i", "output": "o", "labels": [""]}, 400, "labels[0]"),
        ({"input": "i", "output": "o", "labels": ["l"] * 33}, 413, "labels"),
        ({"input": "i", "output": "o", "labels": ["l" * 129]}, 413, "labels[0]"),
        ({"input": "i", "output": "o", "id": "bad id"}, 400, "id: must be 1-128 characters"),
        ({"input": "i", "output": "o", "id": "-starts-with-dash"}, 400, "id:"),
        ({"input": "i", "output": "o", "id": "x" * 129}, 400, "id:"),
        ({"input": "i", "output": "o", "id": 7}, 400, "id:"),
        ({"input": True, "output": "o"}, 400, "input:"),
        (
            {"input": "x" * 100_001, "output": "o"},
            413,
            "input: String should have at most 100000 characters",
        ),
        ({"input": "i", "output": "o", "input_media": "m" * (256 * 1024 + 1)}, 413, "input_media"),
        ([{"input": "i", "output": "o"}], 400, "request body must be a JSON object"),
        ("just a string", 400, "request body must be a JSON object"),
    ],
)
def test_bad_pair_is_refused(seeded: Tenant, body: object, status: int, message: str) -> None:
    assert_error(seeded.post("/data/seed/ds/pair", body), status, message)
    assert len(seeded.get("/data/seed/ds").json()["data"]) == 1


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({}, 400, "data: Field required"),
        ({"data": "x"}, 400, "data: Input should be a valid list"),
        ({"data": [{"input": "i"}]}, 400, "data[0].output: Field required"),
        ({"data": [{"input": "i", "output": "o", "labels": "x"}]}, 400, "data[0].labels"),
        ({"data": [{"input": 5, "output": "o"}]}, 400, "data[0].input"),
        ({"data": [], "system_prompt": 3}, 400, "system_prompt"),
        ({"data": [], "system_prompt": False}, 400, "system_prompt"),
        (
            {
                "data": [
                    {"id": "d", "input": "i", "output": "o"},
                    {"id": "d", "input": "i", "output": "o"},
                ]
            },
            400,
            "pair id 'd' appears more than once",
        ),
        ({"data": [{"input": "i" * 100_001, "output": "o"}]}, 413, "data[0].input"),
    ],
)
@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/data/seed/ds"), ("PUT", "/data/seed/ds"), ("POST", "/data/seed")],
)
def test_bad_dataset_body_is_refused_and_changes_nothing(
    seeded: Tenant, body: object, status: int, message: str, method: str, path: str
) -> None:
    response = seeded.http.request(method, f"/v1{path}", headers=seeded.headers, json=body)
    assert_error(response, status, message)
    assert [p["id"] for p in seeded.get("/data/seed/ds").json()["data"]] == ["p0"]


@pytest.mark.parametrize(
    "raw",
    [b'{"data": [', b"{'data': []}", b"", b"\xff\xfe", b'{"data": []} trailing', b"nul\x00l"],
)
def test_malformed_json_is_400(seeded: Tenant, raw: bytes) -> None:
    response = seeded.http.post("/v1/data/seed/ds", headers=seeded.headers, content=raw)
    assert_error(response, 400)


def test_json_without_content_type_is_still_read_as_json(seeded: Tenant) -> None:
    response = seeded.http.post(
        "/v1/data/seed/ds2",
        headers={**seeded.headers, "Content-Type": "application/x-www-form-urlencoded"},
        content=json.dumps({"data": []}).encode(),
    )
    assert response.status_code == 200


@pytest.mark.parametrize(
    "dataset_id", ["has space", "-x", "a" * 129, "semi;colon", "ü", "latest", "pair"]
)
def test_bad_dataset_id_on_write_is_400(seeded: Tenant, dataset_id: str) -> None:
    # POST /data/seed/pair is the add-by-prompt route, so "pair" is tried with PUT only.
    if dataset_id != "pair":
        assert_error(seeded.post(f"/data/seed/{dataset_id}", {"data": []}), 400, "dataset id")
    assert_error(seeded.put(f"/data/seed/{dataset_id}", {"data": []}), 400, "dataset id")
    assert_error(
        seeded.post(f"/data/seed/{dataset_id}/pair", {"input": "i", "output": "o"}),
        400,
        "dataset id",
    )


@pytest.mark.parametrize("dataset_id", ["has space", "a" * 129, "semi;colon"])
def test_bad_dataset_id_on_read_is_400(seeded: Tenant, dataset_id: str) -> None:
    assert_error(seeded.get(f"/data/seed/{dataset_id}"), 400, "dataset id")
    assert_error(seeded.get(f"/data/synthetic/{dataset_id}"), 400, "dataset id")


def test_missing_dataset_is_404(seeded: Tenant) -> None:
    assert_error(seeded.get("/data/seed/absent"), 404, "no seed dataset with id 'absent'")
    assert_error(seeded.get("/data/synthetic/absent"), 404, "no synthetic dataset with id 'absent'")


def test_a_body_larger_than_the_gateway_carries_is_413(seeded: Tenant) -> None:
    from evalsvc.models.common import MAX_BODY_BYTES

    raw = json.dumps({"data": [{"input": "x" * 90_000, "output": "y"} for _ in range(52)]}).encode()
    assert MAX_BODY_BYTES < len(raw) < 6 * 1024 * 1024

    response = seeded.http.post("/v1/data/seed/ds", headers=seeded.headers, content=raw)

    assert_error(response, 413, "larger than 4,669,440 bytes (4.4 MB")
    assert len(seeded.get("/data/seed/ds").json()["data"]) == 1


def test_the_largest_body_accepted_fits_lambdas_event_limit_base64_encoded() -> None:
    from evalsvc.models.common import LAMBDA_EVENT_BYTES, MAX_BODY_BYTES

    from tests.lambda_support import load_event, with_body

    # The event as API Gateway sends it, with headers at the gateway's 10 KB limit and the
    # body at the limit, base64-encoded.
    event = load_event("write_seed_dataset")
    event["headers"] = {**event["headers"], "X-Padding": "p" * 10_000}
    event["multiValueHeaders"] = {k: [v] for k, v in event["headers"].items()}
    at_limit = with_body(event, b"x" * MAX_BODY_BYTES)
    assert len(json.dumps(at_limit).encode()) <= LAMBDA_EVENT_BYTES
    # ...and the limit is not loose: 64 KiB more body would not fit.
    beyond = with_body(event, b"x" * (MAX_BODY_BYTES + 64 * 1024))
    assert len(json.dumps(beyond).encode()) > LAMBDA_EVENT_BYTES


def test_too_many_pairs_is_413(seeded: Tenant) -> None:
    raw = json.dumps({"data": [{"input": "", "output": ""}] * 100_001}).encode()
    response = seeded.http.post("/v1/data/seed/ds", headers=seeded.headers, content=raw)
    assert_error(response, 413, "data: List should have at most 100000 items")


def test_unknown_route_is_404_and_wrong_method_is_405(seeded: Tenant) -> None:
    assert_error(seeded.get("/no/such/route"), 404, "no route GET /v1/no/such/route")
    assert_error(seeded.http.delete("/v1/data/seed/ds", headers=seeded.headers), 405, "DELETE")


def test_unexpected_failure_is_500_without_details(
    seeded: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.storage import datasets as store

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(store, "read_dataset", explode)

    response = seeded.get("/data/seed/ds")

    assert_error(response, 500, "internal error (request id")
    assert "secret" not in response.text
    # The local server names the request by the id it answers with (and logs under).
    assert f"(request id {response.headers['x-request-id']})" in response.json()["error"]


@pytest.mark.parametrize("path", ["/v1/data/seed/ds/", "/v1/evaluation/ev_x/", "/v1/usage/"])
def test_a_trailing_slash_is_a_404_not_a_redirect_to_the_host_header(
    seeded: Tenant, path: str
) -> None:
    headers = {**seeded.headers, "Host": "evil.example"}

    response = seeded.http.get(path, headers=headers, follow_redirects=False)

    assert_error(response, 404, f"no route GET {path}")
    assert "location" not in response.headers
    assert "evil.example" not in response.text


def test_a_function_answers_a_trailing_slash_with_a_404_not_a_redirect(event_key: str) -> None:
    from tests.lambda_support import handler_of, load_event, with_header

    event = with_header(load_event("get_seed_dataset"), "Host", "evil.example")
    event["path"] = "/data/seed/support-faq/"

    response = handler_of("get_seed_dataset")(event, LambdaContext())

    assert response["statusCode"] == 404
    assert "location" not in {k.lower() for k in (response.get("headers") or {})}
    assert "location" not in {k.lower() for k in (response.get("multiValueHeaders") or {})}
    assert "evil.example" not in json.dumps(response)


def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    """`total` bytes of a JSON body, sent as they come (no Content-Length: chunked)."""
    head = b'{"data": [{"input": "'
    tail = b'", "output": "y"}]}'
    yield head
    left = total - len(head) - len(tail)
    while left > 0:
        yield b"x" * min(size, left)
        left -= size
    yield tail


def test_a_chunked_body_past_the_limit_is_the_same_413_as_a_sized_one(seeded: Tenant) -> None:
    from evalsvc.models.common import MAX_BODY_BYTES

    sized = seeded.http.post(
        "/v1/data/seed/ds", headers=seeded.headers, content=b"".join(_chunks(MAX_BODY_BYTES + 1))
    )
    chunked = seeded.http.post(
        "/v1/data/seed/ds", headers=seeded.headers, content=_chunks(MAX_BODY_BYTES + 1)
    )

    assert "content-length" not in chunked.request.headers
    assert chunked.request.headers["transfer-encoding"] == "chunked"
    assert_error(chunked, 413, "larger than 4,669,440 bytes (4.4 MB")
    assert (sized.status_code, sized.json()) == (chunked.status_code, chunked.json())
    assert len(seeded.get("/data/seed/ds").json()["data"]) == 1


def test_a_chunked_body_within_the_limit_is_read(seeded: Tenant) -> None:
    response = seeded.http.post(
        "/v1/data/seed/ds", headers=seeded.headers, content=_chunks(90_000, size=1000)
    )

    assert response.status_code == 200, response.text
    assert len(seeded.get("/data/seed/ds").json()["data"][0]["input"]) > 89_000
