"""E10's pair fields through the API: `reference` and `contexts` written by every route that
writes a pair, kept by overwrites, appends and versions, read back byte for byte by every route
that reads one (absent, not null, when a pair has none), digested only when present; and a pair
with every field at its limit in 4-byte UTF-8 written and read through the routes with every
stored item under DynamoDB's 400 KB."""

from __future__ import annotations

import json
import random
import string
from typing import Any

import pytest
from evalsvc.logic.pairs_digest import pair_digest, pairs_digest
from evalsvc.models.common import MAX_BODY_BYTES
from evalsvc.models.datasets import (
    MAX_CONTEXT_CHARS,
    MAX_CONTEXTS,
    MAX_LABEL_CHARS,
    MAX_LABELS,
    MAX_REFERENCE_CHARS,
    MAX_TEXT_CHARS,
    Pair,
)
from evalsvc.storage.dynamo import item_size

from tests.fake_judge import FakeJudge
from tests.integration.conftest import Tenant, ok
from tests.integration.test_item_sizes import ITEM_LIMIT, send, stored_items, wide

RAG = {
    "id": "rag",
    "input": "When was the bridge opened?",
    "output": "In 1932.",
    "labels": ["history"],
    "reference": "It opened on 19 March 1932.",
    "contexts": ["The bridge opened in 1932.", "It took <b>8</b> years to build.", "😀 é"],
}
PLAIN = {"id": "plain", "input": "Hi", "output": "Hello", "labels": []}


@pytest.fixture(autouse=True)
def _judge(fake_judge: FakeJudge) -> FakeJudge:
    """The results here are of a question, scored by the fake judge."""
    return fake_judge


def evaluate(tenant: Tenant, dataset_id: str) -> dict[str, Any]:
    metrics = ok(tenant.post("/specify_questions", {"metrics": ["Is it right?"]})).json()
    body = {"seed_data_id": dataset_id, "metrics_id": metrics["metrics_id"]}
    answer: dict[str, Any] = ok(tenant.post("/evaluate", body)).json()
    return answer


def listed(tenant: Tenant, results_id: str) -> list[dict[str, Any]]:
    """Every pair the result scored, page after page (long pairs fill a page sooner)."""
    pairs: list[dict[str, Any]] = []
    cursor = None
    while True:
        params = {"cursor": cursor} if cursor else {}
        page = ok(tenant.get(f"/evaluation/{results_id}/pairs", params=params)).json()
        pairs += page["pairs"]
        cursor = page["next_cursor"]
        if cursor is None:
            return pairs


def digest_of(pairs: list[dict[str, Any]]) -> str:
    """The documented canonical form of pairs as GET /evaluation/{id}/pairs lists them."""
    return pairs_digest(
        pair_digest(
            Pair(
                p["pair_id"],
                p["input"],
                p["output"],
                p["labels"],
                input_media=p.get("input_media"),
                system_prompt_template=p.get("system_prompt_template"),
                reference=p.get("reference"),
                contexts=p.get("contexts"),
            )
        )
        for p in pairs
    )


def test_every_route_that_writes_a_pair_keeps_reference_and_contexts(acme: Tenant) -> None:
    ok(acme.post("/data/seed/ds", {"data": [RAG, PLAIN], "system_prompt": "Be brief."}))
    ok(acme.post("/data/seed/ds/pair", {**RAG, "id": "added"}))
    only_contexts = {"input": "q", "output": "a", "contexts": [], "system_prompt_template": "T"}
    filed = ok(acme.post("/data/seed/pair", only_contexts)).json()

    data = ok(acme.get("/data/seed/ds")).json()["data"]
    by_prompt = ok(acme.get(f"/data/seed/{filed['dataset_id']}")).json()["data"]

    assert [p["id"] for p in data] == ["rag", "plain", "added"]
    for pair in (data[0], data[2]):
        assert pair["reference"] == RAG["reference"]
        assert pair["contexts"] == RAG["contexts"]  # in rank order, as written
    # A pair without them answers as before they existed: the fields absent, not null
    assert set(data[1]) == {"id", "input", "output", "metadata"}
    # An empty list of contexts is kept as written, apart from absent
    assert by_prompt[0]["contexts"] == []
    assert "reference" not in by_prompt[0]


def test_a_dataset_of_pairs_without_them_answers_byte_for_byte_as_before(acme: Tenant) -> None:
    ok(acme.post("/data/seed/v1", {"data": [PLAIN], "system_prompt": "S"}))

    answer = ok(acme.get("/data/seed/v1"))

    pair = answer.json()["data"][0]
    created = pair["metadata"]["created_at"]
    expected = (
        '{"id":"v1","data":[{"id":"plain","input":"Hi","output":"Hello","metadata":'
        f'{{"created_at":"{created}","labels":[]}}}}],"system_prompt":"S","created_at":'
        f'"{answer.json()["created_at"]}"}}'
    )
    assert answer.content == expected.encode()


def test_overwrites_keep_the_version_a_result_scored_with_its_reference_and_contexts(
    acme: Tenant,
) -> None:
    # Given a dataset with a RAG pair, evaluated, then overwritten with other texts
    ok(acme.post("/data/seed/ds", {"data": [RAG, PLAIN]}))
    original = evaluate(acme, "ds")
    changed = {**RAG, "reference": "another", "contexts": ["another"]}
    ok(acme.put("/data/seed/ds", {"data": [changed, PLAIN]}))

    # When the result's pairs are listed
    pairs = listed(acme, original["eval_results_id"])

    # Then they are those it scored, with the reference and contexts they had; the plain pair
    # without either field; and the result's digest is made of them
    assert pairs[0]["reference"] == RAG["reference"]
    assert pairs[0]["contexts"] == RAG["contexts"]
    assert set(pairs[1]) == {"pair_id", "input", "output", "labels"}
    assert digest_of(pairs) == original["inputs"]["pairs_digest"]
    # While the dataset now holds the new ones, which digest otherwise
    now = evaluate(acme, "ds")
    assert now["inputs"]["pairs_digest"] != original["inputs"]["pairs_digest"]
    assert ok(acme.get("/data/seed/ds")).json()["data"][0]["contexts"] == ["another"]


def test_a_pair_without_them_digests_as_before_and_one_with_a_reference_does_not(
    acme: Tenant,
) -> None:
    ok(acme.post("/data/seed/a", {"data": [PLAIN]}))
    ok(acme.post("/data/seed/b", {"data": [{**PLAIN, "reference": "Hello"}]}))

    plain, referenced = evaluate(acme, "a"), evaluate(acme, "b")

    v1 = pairs_digest([pair_digest(Pair("plain", "Hi", "Hello", []))])
    assert plain["inputs"]["pairs_digest"] == v1
    assert referenced["inputs"]["pairs_digest"] != v1


def limits_pair() -> dict[str, Any]:
    """A pair with input, output and reference at 100,000 characters and 20 contexts at 20,000,
    every one a random 4-byte character (hard to compress: nothing hides an overflow); and its
    other fields at their limits too (labels, a template, 256 KiB of random base64 media)."""
    rng = random.Random(5)
    media = "data:application/octet-stream;base64,"
    media += "".join(rng.choices(string.ascii_letters + string.digits + "+/", k=256 * 1024))
    return {
        "id": "limits",
        "input": wide(MAX_TEXT_CHARS),
        "output": wide(MAX_TEXT_CHARS),
        "reference": wide(MAX_REFERENCE_CHARS),
        "contexts": [wide(MAX_CONTEXT_CHARS) for _ in range(MAX_CONTEXTS)],
        "labels": [f"{k:02d}" + wide(MAX_LABEL_CHARS - 2) for k in range(MAX_LABELS)],
        "system_prompt_template": wide(MAX_TEXT_CHARS),
        "input_media": media[: 256 * 1024],
    }


def test_a_pair_at_every_e10_limit_in_4_byte_text_is_written_and_read_back_whole(
    acme: Tenant, tables: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the pair at its limits: 3.5 MB of UTF-8 (2.8 MB of it input, output, reference and
    # contexts), under the body limit as compact UTF-8 JSON (not with \\u escapes: 12 bytes a
    # character would be 8.4 MB)
    big = limits_pair()
    body = json.dumps({"data": [big]}, ensure_ascii=False, separators=(",", ":")).encode()
    assert 3_400_000 < len(body) < MAX_BODY_BYTES
    escaped = json.dumps({"data": [big]}, separators=(",", ":")).encode()
    assert len(escaped) > MAX_BODY_BYTES

    # When it is written with a dataset, appended to one, and the dataset overwritten with it
    ok(send(acme, "POST", "/data/seed/wide", {"data": [big]}))
    ok(send(acme, "POST", "/data/seed/wide/pair", {**big, "id": "appended"}))
    ok(send(acme, "PUT", "/data/seed/again", {"data": [PLAIN]}))
    ok(send(acme, "PUT", "/data/seed/again", {"data": [big]}))

    # Then each reads back byte for byte, a pair a page (the answer gzipped, as HTTP clients
    # ask: two such pairs are 7 MB of text, more than one answer holds even compressed)
    for dataset_id, ids in (("wide", ["limits", "appended"]), ("again", ["limits"])):
        data, cursor = [], None
        while True:
            params = {"limit": 1, **({"cursor": cursor} if cursor else {})}
            answer = acme.get(f"/data/seed/{dataset_id}", params=params)
            assert answer.status_code == 200, answer.text[:300]
            assert answer.headers["content-encoding"] == "gzip"
            data += answer.json()["data"]
            cursor = answer.json()["next_cursor"]
            if cursor is None:
                break
        assert [p["id"] for p in data] == ids
        for pair in data:
            assert {k: v for k, v in pair.items() if k not in ("id", "metadata")} == {
                k: v for k, v in big.items() if k not in ("id", "labels")
            }
            assert pair["metadata"]["labels"] == big["labels"]
    # And a result that scored them lists them whole, its digest made of them
    result = evaluate(acme, "wide")
    pairs = listed(acme, result["eval_results_id"])
    assert [p["pair_id"] for p in pairs] == ["limits", "appended"]
    assert all(p["reference"] == big["reference"] for p in pairs)
    assert all(p["contexts"] == big["contexts"] for p in pairs)
    assert digest_of(pairs) == result["inputs"]["pairs_digest"]
    # And every item stored is under DynamoDB's limit, measured as DynamoDB counts it
    sizes: dict[str, int] = {}
    for setting, kind, item in stored_items(tables):
        name = f"{setting.removeprefix('EVALSVC_').removesuffix('_TABLE').lower()}:{kind}"
        sizes[name] = max(sizes.get(name, 0), item_size(item))
    assert max(sizes.values()) < ITEM_LIMIT, sizes
    assert {"datasets:p", "datasets:x"} <= set(sizes)  # head items and their compressed parts
    # And an appended pair's items, put in one transaction, stay under its 4 MB
    appended = sum(
        item_size(item)
        for setting, _, item in stored_items(tables)
        if setting == "EVALSVC_DATASETS_TABLE"
        and item["sk"]["S"].startswith(("p#appended", "x#appended#"))
    )
    assert 3_000_000 < appended < 4 * 1024 * 1024
    with capsys.disabled():
        print(f"\nan appended pair at every limit: {appended:,} bytes of items")
    with capsys.disabled():
        print(f"\nlargest items by table and kind at the E10 limits: {sizes}")


def test_a_pair_at_the_limits_is_read_only_compressed_and_the_413_says_so(acme: Tenant) -> None:
    # Given the pair at its limits, whose answer escapes to 12 bytes a 4-byte character (over
    # 8 MB) in the Lambda response when it is not compressed
    ok(send(acme, "POST", "/data/seed/wide", {"data": [limits_pair()]}))
    plain = {**acme.headers, "Accept-Encoding": "identity"}

    results_id = evaluate(acme, "wide")["eval_results_id"]

    # When it is read without compression, whole or as a page of one, from the dataset or as
    # the pairs a result scored
    for path, params in [
        ("/data/seed/wide", {}),
        ("/data/seed/wide", {"limit": 1}),
        (f"/evaluation/{results_id}/pairs", {"limit": 1}),
    ]:
        answer = acme.http.get(f"/v1{path}", headers=plain, params=params)

        # Then it is a 413 that says how to get it: compressed, it is read
        assert answer.status_code == 413, answer.text[:300]
        assert "Accept-Encoding: gzip" in answer.json()["error"]
        assert ok(acme.get(path, params=params)).headers["content-encoding"] == "gzip"
