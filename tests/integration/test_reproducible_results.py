"""Reproducible results (E7) over HTTP: GET /evaluation/{id}/pairs lists the pairs a result
scored as they were when it scored them, POST /evaluation/{id}/rerun scores exactly those pairs
again (its pairs_digest the original's), GET /data/seed/{id}/versions lists a dataset's
versions, and a version past its retention is a 410 naming the day it expired."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urljoin

import boto3
import pytest
from evalsvc.core.identifiers import format_ms, now_ms
from evalsvc.logic import reproduce
from evalsvc.logic.pairs_digest import definitions_sha256, pair_digest, pairs_digest
from evalsvc.models.datasets import (
    MAX_LABEL_CHARS,
    MAX_LABELS,
    MAX_TEXT_CHARS,
    DatasetKind,
    Pair,
    VersionRecord,
)
from evalsvc.storage.datasets import appends, history, keys
from evalsvc.storage.results import HEADER_SK, result_pk

from tests import dataset_stream
from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge
from tests.integration.conftest import Tenant, ok
from tests.integration.test_item_sizes import send, wide
from tests.integration.test_queued_evaluations import queue_async
from tests.work_queue import Work

SEED = DatasetKind.SEED
CHECKS = ["check:max_words:4", "check:contains:please"]
DAY_MS = 86_400_000


# ---- helpers -----------------------------------------------------------------------------------


def pairs_of(count: int, *, prefix: str = "p", text: str = "") -> list[dict[str, Any]]:
    """`count` pairs with labels (one of three topics, some also "en") and varied texts."""
    topics = ["account", "data", "ui"]
    return [
        {
            "id": f"{prefix}{i:04d}",
            "input": f"question {i} {text}".strip(),
            "output": f"please answer {i} {text} ✓ \U0001f600".strip(),
            "labels": [topics[i % 3], *(["en"] if i % 2 else [])],
        }
        for i in range(count)
    ]


def write(tenant: Tenant, pairs: list[dict[str, Any]], dataset_id: str = "ds") -> None:
    """Write (create or overwrite) the dataset."""
    ok(tenant.post(f"/data/seed/{dataset_id}", {"data": pairs, "system_prompt": "Be kind."}))


def append(tenant: Tenant, pair: dict[str, Any], dataset_id: str = "ds") -> None:
    ok(tenant.post(f"/data/seed/{dataset_id}/pair", pair))


def metrics(tenant: Tenant, definitions: list[str] = CHECKS) -> str:
    return str(ok(tenant.post("/specify_questions", {"metrics": definitions})).json()["metrics_id"])


def evaluate(tenant: Tenant, metrics_id: str, **body: Any) -> dict[str, Any]:
    """An evaluation scored inside the request: GET /evaluation/{id} of it."""
    answer = ok(tenant.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id, **body}))
    return read(tenant, answer.json()["eval_results_id"])


def read(tenant: Tenant, results_id: str) -> dict[str, Any]:
    body: dict[str, Any] = ok(tenant.get(f"/evaluation/{results_id}")).json()
    return body


def pages(tenant: Tenant, results_id: str, limit: int) -> list[list[dict[str, Any]]]:
    """Every page of the result's pairs, following next_cursor."""
    found: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        params: dict[str, Any] = {"limit": limit, **({"cursor": cursor} if cursor else {})}
        page = ok(tenant.get(f"/evaluation/{results_id}/pairs", params=params)).json()
        assert set(page) == {"pairs", "next_cursor"}
        assert len(page["pairs"]) <= limit
        found.append(page["pairs"])
        cursor = page["next_cursor"]
        if cursor is None:
            return found
        assert len(found) < 10_000


def listed(tenant: Tenant, results_id: str, limit: int = 1000) -> list[dict[str, Any]]:
    return [pair for page in pages(tenant, results_id, limit) for pair in page]


def as_listed(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pairs as written, as GET /evaluation/{id}/pairs lists them."""
    return [
        {"pair_id": p["id"], "input": p["input"], "output": p["output"], "labels": p["labels"]}
        for p in pairs
    ]


def digest_of(pairs: list[dict[str, Any]]) -> str:
    """The pairs_digest of pairs as listed (the documented canonical form)."""
    return pairs_digest(
        pair_digest(Pair(p["pair_id"], p["input"], p["output"], p["labels"])) for p in pairs
    )


def rerun(tenant: Tenant, results_id: str, body: Any = None, **headers: str) -> Any:
    return tenant.http.post(
        f"/v1/evaluation/{results_id}/rerun", json=body, headers={**tenant.headers, **headers}
    )


def rerun_read(tenant: Tenant, results_id: str, body: Any = None) -> dict[str, Any]:
    """A rerun scored inside the request: GET /evaluation/{id} of it."""
    return read(tenant, ok(rerun(tenant, results_id, body)).json()["eval_results_id"])


def followed(response: Any) -> str:
    """The result id the answer's Location names, resolved against the request's URL as a
    client resolves it (RFC 9110)."""
    target = urljoin(str(response.request.url), response.headers["Location"])
    prefix = "http://testserver/v1/evaluation/"
    assert target.startswith(prefix), target
    return target.removeprefix(prefix)


def the_record(tenant: str, dataset_id: str = "ds") -> VersionRecord:
    """The record of the dataset's one replaced version."""
    (record,) = dataset_stream.records(tenant, dataset_id)
    return record


def expire(tenant: str, record: VersionRecord, at_ms: int, dataset_id: str = "ds") -> None:
    """Set the record's expiry (and TTL attribute) to `at_ms`, as if its retention had run."""
    boto3.client("dynamodb").update_item(
        TableName=keys.table(),
        Key={
            "pk": {"S": keys.dataset_pk(tenant, SEED, dataset_id)},
            "sk": {"S": history.record_sk(record.created_ms, record.version)},
        },
        UpdateExpression="SET expires_ms = :ms, expires_at = :s",
        ExpressionAttributeValues={":ms": {"N": str(at_ms)}, ":s": {"N": str(at_ms // 1000)}},
    )


def results_in(tables: dict[str, str]) -> int:
    items = boto3.client("dynamodb").scan(TableName=tables["EVALSVC_RESULTS_TABLE"])["Items"]
    return sum(1 for item in items if item["sk"]["S"] == HEADER_SK)


@pytest.fixture
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> int:
    """Pinned selections cut into pieces of 4 pairs, so pages cross pieces."""
    monkeypatch.setattr(reproduce, "PIECE_PAIRS", 4)
    return 4


# ---- GET /evaluation/{id}/pairs ------------------------------------------------------------


def test_a_results_pairs_are_the_texts_it_scored_after_overwrites_and_appends(
    acme: Tenant, small_pieces: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 11 labelled pairs written and 3 appended (stamped 2 s apart), evaluated: pinned in
    # pieces of 4, 4, 4 and 2 pairs, the last two pieces holding appended pairs
    written = pairs_of(11)
    write(acme, written)
    appended = pairs_of(3, prefix="a", text="appended")
    stamp = now_ms() + 10_000
    for k, pair in enumerate(appended):
        monkeypatch.setattr(appends, "now_ms", lambda ms=stamp + 2000 * k: ms)
        append(acme, pair)
    scored = [*written, *appended]
    original = evaluate(acme, metrics(acme))
    assert original["pair_count"] == 14
    # And then a pair appended to that version, stamped between two it pinned (an append that
    # took its time), the dataset overwritten with other texts, and appended to again
    monkeypatch.setattr(appends, "now_ms", lambda: stamp + 3000)
    append(acme, {"id": "late", "input": "late", "output": "late", "labels": ["ui"]})
    monkeypatch.setattr(appends, "now_ms", now_ms)
    write(acme, pairs_of(11, text="rewritten"))
    append(acme, {"id": "after", "input": "after", "output": "after", "labels": ["ui"]})

    # When its pairs are read 3 at a time
    found = pages(acme, original["results_id"], 3)

    # Then every pair it scored comes once, in dataset order, with its labels, as it was
    # scored, on pages that cross the pieces; neither later pair is among them
    assert [len(page) for page in found] == [3, 3, 3, 3, 2]
    pairs = [pair for page in found for pair in page]
    assert pairs == as_listed(scored)
    # …and they are what the result's pairs_digest was made of
    assert digest_of(pairs) == original["inputs"]["pairs_digest"]
    # Any page size gives the same pairs
    for limit in (1, 4, 5, 1000):
        assert listed(acme, original["results_id"], limit) == pairs
    # While the dataset itself now holds the new texts and the last append
    dataset = ok(acme.get("/data/seed/ds")).json()["data"]
    assert [p["id"] for p in dataset] == [*(p["id"] for p in written), "after"]
    assert dataset[0]["output"].endswith("rewritten ✓ \U0001f600")


def test_the_pairs_of_a_selection_by_label_leave_out_those_between_it_did_not_take(
    acme: Tenant, small_pieces: int
) -> None:
    # Given a result of only the pairs labelled "account" (every third pair)
    scored = pairs_of(20)
    write(acme, scored)
    original = evaluate(acme, metrics(acme), pair_query={"pair_labels": ["account"]})
    write(acme, pairs_of(3))

    # Then its pairs are those, though its pieces' ord ranges hold the others too
    taken = [p for p in scored if "account" in p["labels"]]
    assert original["pair_count"] == len(taken) == 7
    assert listed(acme, original["results_id"], 2) == as_listed(taken)


def test_the_pairs_of_a_queued_result_page_across_its_chunks_and_pieces(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 700 pairs evaluated by the queue in 4 chunks, pinned in pieces of 128
    point_service_at(
        {"EVALSVC_INLINE_MAX_CHECKS": "300", "EVALSVC_CHUNK_CHECKS": "400"}, monkeypatch
    )
    monkeypatch.setattr(reproduce, "PIECE_PAIRS", 128)
    scored = pairs_of(700)
    write(acme, scored)
    metrics(acme)
    results_id = queue_async(acme, {"seed_data_id": "ds"})
    assert work.drain() == 4
    write(acme, pairs_of(5, text="new"))

    # When its pairs are read 250 at a time
    found = pages(acme, results_id, 250)

    # Then they are the 700 it scored, in order
    assert [len(page) for page in found] == [250, 250, 200]
    pairs = [pair for page in found for pair in page]
    assert pairs == as_listed(scored)
    assert digest_of(pairs) == read(acme, results_id)["inputs"]["pairs_digest"]


def test_a_result_of_the_current_version_lists_its_pairs(acme: Tenant) -> None:
    write(acme, pairs_of(3))
    original = evaluate(acme, metrics(acme))

    page = ok(acme.get(f"/evaluation/{original['results_id']}/pairs")).json()

    assert page == {"pairs": as_listed(pairs_of(3)), "next_cursor": None}


def test_a_pairs_media_and_template_are_listed_and_count_in_the_digest(acme: Tenant) -> None:
    media = "data:image/png;base64,iVBORw0KGgo="
    data = [
        {"id": "m", "input": "what is this?", "output": "a dot", "input_media": media},
        {"id": "t", "input": "hi", "output": "hello", "system_prompt_template": "Be {x}."},
    ]
    write(acme, data)
    original = evaluate(acme, metrics(acme))

    (pairs,) = pages(acme, original["results_id"], 10)

    assert pairs[0]["input_media"] == media and "system_prompt_template" not in pairs[0]
    assert pairs[1]["system_prompt_template"] == "Be {x}." and "input_media" not in pairs[1]
    digests = [
        pair_digest(
            Pair(
                p["pair_id"],
                p["input"],
                p["output"],
                p["labels"],
                **{k: p[k] for k in ("input_media", "system_prompt_template") if k in p},
            )
        )
        for p in pairs
    ]
    assert pairs_digest(digests) == original["inputs"]["pairs_digest"]


def test_pairs_at_the_field_limits_and_control_characters_come_back_whole(
    acme: Tenant,
) -> None:
    # Given a pair with input and output at their limit in 4-byte characters (kept in parts),
    # labels at theirs, and a pair of control characters (6 bytes each once JSON-escaped)
    big = {
        "id": "big",
        "input": wide(MAX_TEXT_CHARS),
        "output": wide(MAX_TEXT_CHARS),
        "labels": [wide(MAX_LABEL_CHARS - 2) + f"{k:02d}" for k in range(MAX_LABELS)],
    }
    controls = {"id": "ctl", "input": '\x01\x1f\\"' * 20_000, "output": "\x00" * 50_000}
    ok(send(acme, "POST", "/data/seed/ds", {"data": [big, controls]}))
    original = evaluate(acme, metrics(acme))
    ok(send(acme, "POST", "/data/seed/ds", {"data": [controls]}))

    # When its pairs are read, compressed or not
    compressed = ok(acme.get(f"/evaluation/{original['results_id']}/pairs")).json()
    plain = acme.http.get(
        f"/v1/evaluation/{original['results_id']}/pairs",
        headers={**acme.headers, "Accept-Encoding": "identity"},
    )

    # Then they are whole, and say what they were made of
    pairs = as_listed([big, {**controls, "labels": []}])
    assert compressed == {"pairs": pairs, "next_cursor": None}
    assert plain.status_code == 200 and plain.json() == compressed
    assert digest_of(pairs) == original["inputs"]["pairs_digest"]
    assert rerun_read(acme, original["results_id"])["inputs"] == original["inputs"]


# ---- POST /evaluation/{id}/rerun -------------------------------------------------------------


def test_a_rerun_scores_the_same_pairs_with_the_same_settings_after_the_dataset_changed(
    acme: Tenant, fake_judge: FakeJudge
) -> None:
    # Given a judged and a checked metric, evaluated with judge_samples and cluster_by
    scored = pairs_of(6)
    write(acme, scored)
    metrics_id = metrics(acme, ["Is the answer polite?", "check:contains:please"])
    original = evaluate(acme, metrics_id, judge_samples=2, cluster_by="label")
    # And the dataset then overwritten and appended to, and its metrics set's id reused
    write(acme, pairs_of(9, text="changed"))
    append(acme, {"id": "extra", "input": "x", "output": "y"})

    # When the result is run again (no body at all)
    again = rerun_read(acme, original["results_id"])

    # Then it is a new result of exactly those pairs, scored as the original was
    assert again["results_id"] != original["results_id"]
    assert again["status"] == "complete"
    assert again["pair_count"] == original["pair_count"] == 6
    for name in ("dataset_id", "metrics_id", "metrics_definitions", "system_prompt"):
        assert again[name] == original[name], name
    assert (again["judge_samples"], again["cluster_by"]) == (2, "label")
    assert again["score_means"] == original["score_means"]
    assert again["score_clustered"] == original["score_clustered"]
    inputs, first = again["inputs"], original["inputs"]
    assert inputs["pairs_digest"] == first["pairs_digest"] == digest_of(as_listed(scored))
    for name in ("dataset_version", "definitions_sha256", "judge_samples", "judge_model"):
        assert inputs[name] == first[name], name
    assert first["definitions_sha256"] == definitions_sha256(original["metrics_definitions"])
    assert listed(acme, again["results_id"]) == as_listed(scored)
    # …and a rerun of the rerun is the same again
    assert rerun_read(acme, again["results_id"])["inputs"]["pairs_digest"] == first["pairs_digest"]


@pytest.mark.parametrize(
    "body",
    [None, {}, {"max_cost_usd": 5}, {"max_cost_usd": 0.25}],
    ids=["no-body", "empty-object", "integer-cap", "cap"],
)
def test_a_rerun_body_is_optional_and_holds_at_most_a_cap(acme: Tenant, body: Any) -> None:
    write(acme, pairs_of(2))
    original = evaluate(acme, metrics(acme))

    again = rerun_read(acme, original["results_id"], body)

    assert again["inputs"]["pairs_digest"] == original["inputs"]["pairs_digest"]


@pytest.mark.parametrize(
    ("content", "content_type"),
    [(b"", None), (b"", "application/json"), (b"null", "application/json"), (b"null", None)],
)
def test_a_rerun_with_an_empty_or_null_body_is_run(
    acme: Tenant, content: bytes, content_type: str | None
) -> None:
    write(acme, pairs_of(2))
    original = evaluate(acme, metrics(acme))
    headers = {**acme.headers, **({"Content-Type": content_type} if content_type else {})}

    response = acme.http.post(
        f"/v1/evaluation/{original['results_id']}/rerun", content=content, headers=headers
    )

    assert response.status_code == 200, response.text
    assert response.json()["pair_count"] == 2


def test_a_rerun_answers_the_v1_body_of_post_evaluate(acme: Tenant) -> None:
    write(acme, pairs_of(4))
    metrics_id = metrics(acme)
    evaluated = ok(acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id}))

    again = ok(rerun(acme, evaluated.json()["eval_results_id"]))

    first, second = evaluated.json(), again.json()
    assert second["eval_results_id"] != first["eval_results_id"]
    for name in ("eval_results_id", "created_at"):
        first.pop(name), second.pop(name)
    assert second == first


def test_a_rerun_of_a_queued_result_is_queued_and_completes_with_the_same_digest(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 700 pairs evaluated by the queue, then the dataset overwritten and appended to
    point_service_at(
        {"EVALSVC_INLINE_MAX_CHECKS": "300", "EVALSVC_CHUNK_CHECKS": "400"}, monkeypatch
    )
    write(acme, pairs_of(700))
    metrics_id = metrics(acme)
    original_id = queue_async(acme, {"seed_data_id": "ds", "metrics_id": metrics_id})
    work.drain()
    original = read(acme, original_id)
    write(acme, pairs_of(700, text="changed"))
    append(acme, {"id": "extra", "input": "x", "output": "y"})

    # When it is run again with a plain request (which waits 0 s here: a 503 to follow)
    waited = rerun(acme, original_id)
    assert waited.status_code == 503, waited.text
    assert waited.headers["Retry-After"] == "10"
    assert "goes on in the background" in waited.json()["error"]
    again_id = followed(waited)
    assert read(acme, again_id)["status"] == "running"
    # …and answered at once
    at_once = rerun(acme, original_id, None, Prefer="respond-async")
    assert at_once.status_code == 202, at_once.text
    assert at_once.headers["Preference-Applied"] == "respond-async"
    assert at_once.json()["eval_results_id"] == followed(at_once)
    assert at_once.json()["pairs_total"] == 700
    assert work.drain() == 8  # 4 chunks each

    # Then both complete, through the work queue, over exactly the pairs the original scored
    for results_id in (again_id, followed(at_once)):
        done = read(acme, results_id)
        assert (done["status"], done["pair_count"]) == ("complete", 700)
        assert done["inputs"]["pairs_digest"] == original["inputs"]["pairs_digest"]
        assert done["score_means"] == original["score_means"]


def test_a_rerun_of_a_running_result_is_a_409_as_for_compare_and_stores_nothing(
    acme: Tenant, work: Work, tables: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an evaluation running on the work queue
    point_service_at({"EVALSVC_INLINE_MAX_CHECKS": "30", "EVALSVC_CHUNK_CHECKS": "60"}, monkeypatch)
    write(acme, pairs_of(90))
    metrics_id = metrics(acme)
    running = queue_async(acme, {"seed_data_id": "ds", "metrics_id": metrics_id})
    before = results_in(tables)

    # When it is run again while it runs, answered at once or not
    refusals = [
        rerun(acme, running),
        rerun(acme, running, {"max_cost_usd": 1}, Prefer="respond-async"),
    ]
    compared = acme.post("/compare", {"baseline_id": running, "candidate_id": running})

    # Then each is a 409 naming it, in the words compare uses for it, and nothing was stored
    for refused in refusals:
        assert refused.status_code == 409, refused.text
        assert refused.json() == {"error": compared.json()["error"].removeprefix("baseline_id: ")}
        assert refused.json()["error"].startswith(f"evaluation result {running!r} is still running")
    assert results_in(tables) == before
    # …and once it is complete it runs again as any result does
    work.drain()
    assert read(acme, running)["status"] == "complete"
    again = rerun(acme, running, None, Prefer="respond-async")
    assert again.status_code == 202, again.text


def test_a_rerun_of_an_inline_result_with_respond_async_is_queued(acme: Tenant, work: Work) -> None:
    write(acme, pairs_of(5))
    original = evaluate(acme, metrics(acme))
    write(acme, pairs_of(5, text="changed"))

    response = rerun(acme, original["results_id"], {}, Prefer="respond-async")

    assert response.status_code == 202, response.text
    queued = response.json()
    results_id = followed(response)
    assert queued == {
        "eval_results_id": results_id,
        "status": "running",
        "pairs_done": 0,
        "pairs_total": 5,
        "judge_calls_done": 0,
        "judge_calls_total": 0,
    }
    assert work.drain() == 1
    done = read(acme, results_id)
    assert done["status"] == "complete"
    assert done["inputs"]["pairs_digest"] == original["inputs"]["pairs_digest"]


def test_a_rerun_with_an_idempotency_key_runs_once_and_replays(acme: Tenant, work: Work) -> None:
    write(acme, pairs_of(3))
    original = evaluate(acme, metrics(acme))
    key = {"Idempotency-Key": "rerun-1"}

    first = rerun(acme, original["results_id"], None, **key)
    again = rerun(acme, original["results_id"], None, **key)
    queued = rerun(acme, original["results_id"], None, Prefer="respond-async", **key)
    queued_again = rerun(acme, original["results_id"], {}, Prefer="respond-async", **key)

    assert first.status_code == again.status_code == 200
    assert again.json() == first.json() and again.headers["Idempotent-Replay"] == "true"
    # the same key with another request (another Prefer is the same body: a replay too)
    assert queued.status_code == 200 and queued.json() == first.json()
    # …but with another body, refused
    assert queued_again.status_code == 422, queued_again.text


def test_a_rerun_is_held_to_its_cap_as_post_evaluate_is(
    acme: Tenant, fake_judge: FakeJudge, tables: dict[str, str]
) -> None:
    # Given a judged result, and the judge's answers no longer cached
    write(acme, pairs_of(3))
    metrics_id = metrics(acme, ["Is the answer polite?"])
    original = evaluate(acme, metrics_id)
    client = boto3.client("dynamodb")
    for item in client.scan(TableName=tables["EVALSVC_JUDGE_CACHE_TABLE"])["Items"]:
        key = {name: item[name] for name in ("pk", "sk") if name in item}
        client.delete_item(TableName=tables["EVALSVC_JUDGE_CACHE_TABLE"], Key=key)
    asked = len(fake_judge.requests)
    cap = {"max_cost_usd": 0.01}

    # When it is run again with a cap, as POST /evaluate would be
    again = rerun(acme, original["results_id"], cap)
    evaluated = acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id, **cap})

    # Then both are refused alike (the fake judge's model has no price), no model called
    assert again.status_code == evaluated.status_code == 400, again.text
    assert again.json() == evaluated.json()
    assert "max_cost_usd" in again.json()["error"]
    assert len(fake_judge.requests) == asked


# ---- a different dataset state, another digest -----------------------------------------------


def test_another_dataset_state_has_another_digest_and_the_same_state_the_same(
    acme: Tenant,
) -> None:
    base = pairs_of(5)
    write(acme, base)
    metrics_id = metrics(acme)
    original = evaluate(acme, metrics_id)["inputs"]["pairs_digest"]

    changed_output = json.loads(json.dumps(base))
    changed_output[2]["output"] += "!"
    one_more = [*base, {"id": "p9999", "input": "q", "output": "a", "labels": []}]
    relabelled = json.loads(json.dumps(base))
    relabelled[4]["labels"] = ["ui", "fr"]
    digests = {}
    for name, state in [
        ("changed output", changed_output),
        ("one pair more", one_more),
        ("label changed", relabelled),
        ("same again", base),
    ]:
        write(acme, state)
        digests[name] = evaluate(acme, metrics_id)["inputs"]["pairs_digest"]

    assert digests["same again"] == original
    others = [digests[name] for name in ("changed output", "one pair more", "label changed")]
    assert len({original, *others}) == 4


# ---- GET /data/seed/{id}/versions --------------------------------------------------------------


def test_versions_are_listed_newest_first_with_their_pairs_and_paged(acme: Tenant) -> None:
    # Given a dataset created with 2 pairs, overwritten with 3 then 4, and appended to
    for count in (2, 3, 4):
        write(acme, pairs_of(count))
    append(acme, {"id": "extra", "input": "x", "output": "y"})
    records = dataset_stream.records("acme", "ds")

    # When its versions are listed
    body = ok(acme.get("/data/seed/ds/versions")).json()

    # Then the current version comes first, then the replaced ones, newest first
    versions = body["versions"]
    assert body["next_cursor"] is None
    assert [(v["kind"], v["pairs"]) for v in versions] == [
        ("overwrite", 5),
        ("overwrite", 3),
        ("create", 2),
    ]
    assert [v["version"] for v in versions[1:]] == [r.version for r in records]
    created = [v["created_at"] for v in versions]
    assert created == sorted(created, reverse=True)
    assert versions[0]["replaced_at"] is None and versions[0]["expires_at"] is None
    for version, record in zip(versions[1:], records, strict=True):
        assert record.replaced_ms is not None and record.expires_ms is not None
        assert version["replaced_at"] == format_ms(record.replaced_ms)
        assert version["expires_at"] == format_ms(record.replaced_ms + 365 * DAY_MS)
    # A result names the version it read
    result = evaluate(acme, metrics(acme))
    assert result["inputs"]["dataset_version"] == versions[0]["version"]
    # One at a time, the pages give the same versions
    paged, cursor = [], None
    while True:
        query = "?limit=1" + (f"&cursor={cursor}" if cursor else "")
        page = ok(acme.get(f"/data/seed/ds/versions{query}")).json()
        paged += page["versions"]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert paged == versions
    # `latest` names the newest dataset
    assert ok(acme.get("/data/seed/latest/versions")).json() == body


def test_a_version_past_its_retention_is_not_listed(acme: Tenant) -> None:
    for count in (1, 2, 3):
        write(acme, pairs_of(count))
    oldest = dataset_stream.records("acme", "ds")[-1]
    expire("acme", oldest, now_ms() - 1000)

    versions = ok(acme.get("/data/seed/ds/versions")).json()["versions"]

    assert [v["pairs"] for v in versions] == [3, 2]


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("?limit=0", 400, "limit"),
        ("?limit=101", 400, "limit"),
        ("?limit=ten", 400, "limit"),
        ("?cursor=garbage", 400, "cursor is not one this dataset's versions gave"),
        ("?cursor=1.x.y", 400, "cursor is not one this dataset's versions gave"),
        ("?cursor=" + "9" * 14 + ".v", 400, "cursor is not one this dataset's versions gave"),
        ("?cursor=" + "c" * 1025, 413, "cursor: String should have at most 1024 characters"),
    ],
)
def test_bad_versions_queries_are_400(acme: Tenant, query: str, status: int, says: str) -> None:
    write(acme, pairs_of(1))

    response = acme.get(f"/data/seed/ds/versions{query}")

    assert response.status_code == status, response.text
    assert says in response.json()["error"]


def test_versions_of_no_dataset_are_404_and_of_a_bad_id_400(acme: Tenant) -> None:
    missing = acme.get("/data/seed/nothing/versions")
    bad = acme.get("/data/seed/no%20spaces/versions")

    assert (missing.status_code, missing.json()) == (
        404,
        {"error": "no seed dataset with id 'nothing'"},
    )
    assert bad.status_code == 400 and "is not valid" in bad.json()["error"]
    assert acme.get("/data/seed/latest/versions").status_code == 404


# ---- another tenant --------------------------------------------------------------------------


def test_another_tenant_sees_none_of_it(
    acme: Tenant, globex: Tenant, tables: dict[str, str]
) -> None:
    # Given acme's result over a dataset it overwrote, and globex's own dataset of that id
    write(acme, pairs_of(3))
    original = evaluate(acme, metrics(acme))
    write(acme, pairs_of(2))
    write(globex, pairs_of(1))
    results_id = original["results_id"]
    cursor = ok(acme.get(f"/evaluation/{results_id}/pairs?limit=1")).json()["next_cursor"]
    results = results_in(tables)

    # Then globex gets 404 for acme's result (its cursor too), and its own versions of "ds"
    for response in (
        globex.get(f"/evaluation/{results_id}/pairs"),
        globex.get(f"/evaluation/{results_id}/pairs", params={"cursor": cursor}),
        globex.post(f"/evaluation/{results_id}/rerun"),
        globex.post(f"/evaluation/{results_id}/rerun", {"max_cost_usd": 1}),
    ):
        assert response.status_code == 404, response.text
        assert response.json() == {"error": f"no evaluation result with id {results_id!r}"}
    assert results_in(tables) == results
    versions = ok(globex.get("/data/seed/ds/versions")).json()["versions"]
    assert [(v["kind"], v["pairs"]) for v in versions] == [("create", 1)]
    assert globex.get("/data/seed/other/versions").status_code == 404
    assert len(ok(acme.get("/data/seed/ds/versions")).json()["versions"]) == 2


# ---- past retention: 410 -----------------------------------------------------------------------


def _expired_result(acme: Tenant) -> tuple[dict[str, Any], VersionRecord]:
    """A result whose version was replaced, and the record of that version."""
    write(acme, pairs_of(4))
    original = evaluate(acme, metrics(acme))
    write(acme, pairs_of(4, text="new"))
    return original, the_record("acme")


def _gone(response: Any, day: str) -> None:
    assert response.status_code == 410, response.text
    error = response.json()["error"]
    assert set(response.json()) == {"error"}
    assert f"expired on {day}" in error and "its pairs are no longer kept" in error


def test_a_version_past_its_retention_is_410_naming_the_day_it_expired(
    acme: Tenant, tables: dict[str, str]
) -> None:
    # Given a result whose version's retention ended yesterday (its record not yet removed)
    original, record = _expired_result(acme)
    expired_ms = now_ms() - DAY_MS
    expire("acme", record, expired_ms)
    results = results_in(tables)
    day = format_ms(expired_ms)[:10]

    # Then reading its pairs and running it again are both 410s naming that day
    _gone(acme.get(f"/evaluation/{original['results_id']}/pairs"), day)
    _gone(rerun(acme, original["results_id"]), day)
    _gone(rerun(acme, original["results_id"], None, Prefer="respond-async"), day)
    # …and nothing was stored
    assert results_in(tables) == results
    # While its own GET still answers, and the dataset's current version is listed alone
    assert read(acme, original["results_id"])["inputs"] == original["inputs"]
    assert len(ok(acme.get("/data/seed/ds/versions")).json()["versions"]) == 1


def test_a_version_purged_after_its_retention_is_410_naming_the_day_from_its_tombstone(
    acme: Tenant, work: Work
) -> None:
    # Given a result whose version's retention ended 3 days ago, and was purged: TTL removed
    # its record and the purge its pairs, leaving the tombstone alone
    original, record = _expired_result(acme)
    expired_ms = now_ms() - 3 * DAY_MS
    expire("acme", record, expired_ms)
    dataset_stream.expire_all("acme", "ds")
    assert dataset_stream.records("acme", "ds") == []
    assert dataset_stream.version_items("acme", "ds", record.version) == []

    # Then both are 410s naming the day it expired
    day = format_ms(expired_ms)[:10]
    _gone(acme.get(f"/evaluation/{original['results_id']}/pairs"), day)
    _gone(rerun(acme, original["results_id"], {"max_cost_usd": 1}), day)
    _gone(rerun(acme, original["results_id"], None, Prefer="respond-async"), day)
    assert work.waiting() == 0


def test_a_version_removed_without_a_tombstone_yet_is_410_all_the_same(acme: Tenant) -> None:
    # TTL removed the record; the purge has not run yet (its pairs are still there)
    original, record = _expired_result(acme)
    dataset_stream.Stream().expire("acme", "ds", record)

    for response in (
        acme.get(f"/evaluation/{original['results_id']}/pairs"),
        rerun(acme, original["results_id"]),
    ):
        assert response.status_code == 410, response.text
        assert "expired before this read" in response.json()["error"]


def test_a_result_stored_before_results_kept_their_inputs_is_410_saying_evaluate_again(
    acme: Tenant, tables: dict[str, str]
) -> None:
    write(acme, pairs_of(2))
    original = evaluate(acme, metrics(acme))
    boto3.client("dynamodb").update_item(
        TableName=tables["EVALSVC_RESULTS_TABLE"],
        Key={
            "pk": {"S": result_pk("acme", original["results_id"])},
            "sk": {"S": HEADER_SK},
        },
        UpdateExpression="REMOVE inputs, selection, selection_ref",
    )
    assert read(acme, original["results_id"])["inputs"] is None

    for response in (
        acme.get(f"/evaluation/{original['results_id']}/pairs"),
        rerun(acme, original["results_id"]),
    ):
        assert response.status_code == 410, response.text
        error = response.json()["error"]
        assert "stored before results kept the pairs they scored" in error
        assert error.endswith("evaluate the dataset again")


# ---- bad input -------------------------------------------------------------------------------


@pytest.fixture
def two_results(acme: Tenant, small_pieces: int) -> tuple[str, str]:
    """Two results over the same version of the same 10 pairs."""
    write(acme, pairs_of(10))
    metrics_id = metrics(acme)
    return evaluate(acme, metrics_id)["results_id"], evaluate(acme, metrics_id)["results_id"]


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("limit=0", "limit: Input should be greater than or equal to 1"),
        ("limit=1001", "limit: Input should be less than or equal to 1000"),
        ("limit=ten", "limit: Input should be a valid integer"),
        ("limit=1.5", "limit: Input should be a valid integer"),
        ("cursor=garbage!", "cursor is not one this evaluation's pairs gave"),
        ("cursor=", "cursor is not one this evaluation's pairs gave"),
    ],
)
def test_bad_pairs_queries_are_400(
    acme: Tenant, two_results: tuple[str, str], query: str, says: str
) -> None:
    response = acme.get(f"/evaluation/{two_results[0]}/pairs?{query}")

    assert response.status_code == 400, response.text
    assert says in response.json()["error"]


def test_a_cursor_over_its_size_limit_is_413_as_elsewhere(
    acme: Tenant, two_results: tuple[str, str]
) -> None:
    response = acme.get(f"/evaluation/{two_results[0]}/pairs?cursor={'A' * 1025}")

    assert response.status_code == 413, response.text
    assert response.json() == {"error": "cursor: String should have at most 1024 characters"}


def test_a_cursor_from_another_result_is_400(acme: Tenant, two_results: tuple[str, str]) -> None:
    first, second = two_results
    cursor = ok(acme.get(f"/evaluation/{first}/pairs?limit=5")).json()["next_cursor"]
    assert cursor is not None

    response = acme.get(f"/evaluation/{second}/pairs", params={"limit": 5, "cursor": cursor})

    assert response.status_code == 400, response.text
    assert "cursor is not one this evaluation's pairs gave" in response.json()["error"]
    # …while its own goes on
    assert len(ok(acme.get(f"/evaluation/{first}/pairs?cursor={cursor}")).json()["pairs"]) == 5


def test_a_forged_cursor_past_the_pieces_or_their_ords_is_400(
    acme: Tenant, two_results: tuple[str, str]
) -> None:
    import base64

    first, _ = two_results

    def forged(raw: str) -> int:
        cursor = base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
        response = acme.get(f"/evaluation/{first}/pairs", params={"cursor": cursor})
        return int(response.status_code)

    assert forged(f"{first}|0|") == 200
    assert forged(f"{first}|3|") == 400  # 10 pairs: pieces 0-2
    assert forged(f"{first}|-1|") == 400
    assert forged(f"{first}|0|~") == 400  # past the piece's ords
    assert forged(f"{first}|x|") == 400


@pytest.mark.parametrize(
    ("results_id", "status", "says"),
    [
        ("ev_nothing", 404, "no evaluation result with id 'ev_nothing'"),
        ("no spaces", 400, "result id 'no spaces' is not valid"),
        ("x" * 300, 400, "is not valid"),
    ],
)
def test_pairs_and_rerun_of_no_result_are_404_and_of_a_bad_id_400(
    acme: Tenant, results_id: str, status: int, says: str
) -> None:
    for response in (
        acme.get(f"/evaluation/{results_id}/pairs"),
        rerun(acme, results_id),
    ):
        assert response.status_code == status, response.text
        assert says in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"max_cost_usd": 1, "judge_samples": 3}, "judge_samples: Extra inputs are not permitted"),
        ({"metrics_id": "m"}, "metrics_id: Extra inputs are not permitted"),
        ({"max_cost_usd": "1"}, "max_cost_usd: Input should be a valid number"),
        ({"max_cost_usd": True}, "max_cost_usd: Input should be a valid number"),
        ({"max_cost_usd": 0}, "max_cost_usd: Input should be greater than 0"),
        ({"max_cost_usd": -2.5}, "max_cost_usd: Input should be greater than 0"),
        ([], "request body must be a JSON object"),
        ("max_cost_usd", "request body must be a JSON object"),
    ],
)
def test_a_rerun_body_with_another_field_or_a_wrong_type_is_400(
    acme: Tenant, tables: dict[str, str], body: Any, says: str
) -> None:
    write(acme, pairs_of(2))
    original = evaluate(acme, metrics(acme))
    results = results_in(tables)

    response = rerun(acme, original["results_id"], body)

    assert response.status_code == 400, response.text
    assert says in response.json()["error"]
    assert results_in(tables) == results


def test_a_rerun_body_that_is_not_json_is_400(acme: Tenant) -> None:
    write(acme, pairs_of(1))
    original = evaluate(acme, metrics(acme))

    response = acme.http.post(
        f"/v1/evaluation/{original['results_id']}/rerun",
        content=b'{"max_cost_usd": ',
        headers=acme.headers,
    )

    assert response.status_code == 400
    assert response.json()["error"].startswith("request body is not valid JSON")
