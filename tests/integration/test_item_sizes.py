"""Every stored item stays under DynamoDB's 400 KB item limit by construction: each field at its
limit, in 4-byte UTF-8 (the worst case), through every write the API makes. The items are
measured as DynamoDB counts them after the writes; moto refuses an item over the limit too, so
an overflow would also show as an error on the way."""

from __future__ import annotations

import json
import os
import random
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from evalsvc.models.datasets import MAX_LABEL_CHARS, MAX_LABELS, MAX_TEXT_CHARS
from evalsvc.models.evaluations import MAX_COMMENT_CHARS, MAX_JUDGE_SAMPLES, MAX_REASON_CHARS
from evalsvc.models.metric_sets import MAX_DEFINITION_CHARS, MAX_DEFINITIONS
from evalsvc.storage.dynamo import item_size

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, service_env
from tests.integration.conftest import Tenant
from tests.work_queue import Work

ITEM_LIMIT = 400 * 1024
PAIR_ID = "p" + "x" * 127  # the longest pair id


_RANDOM = random.Random(11)


def wide(chars: int) -> str:
    """`chars` random characters of four UTF-8 bytes each: text at its largest in bytes, and
    hard to compress (a repeated character would compress to nothing and hide an overflow)."""
    return "".join(map(chr, _RANDOM.choices(range(0x10000, 0x110000), k=chars)))


def send(tenant: Tenant, method: str, path: str, body: object, **headers: str) -> Any:
    """The body as compact UTF-8 JSON (a 4-byte character as 4 bytes, not a 12-byte escape)."""
    content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return tenant.http.request(
        method,
        f"/v1{path}",
        content=content,
        headers={**tenant.headers, "Content-Type": "application/json", **headers},
    )


def stored_items(tables: dict[str, str]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(table setting, kind of item, item) for every item of every table."""
    client = boto3.client("dynamodb", region_name="us-east-1")
    for setting, table in tables.items():
        if not setting.endswith("_TABLE"):
            continue
        for page in client.get_paginator("scan").paginate(TableName=table):
            for item in page["Items"]:
                yield setting, _kind(item), item


def _kind(item: dict[str, Any]) -> str:
    sk = item.get("sk", {}).get("S")
    if sk is None:
        return "record"
    return sk.split("#", 1)[0]


def largest(tables: dict[str, str]) -> dict[tuple[str, str], int]:
    sizes: dict[tuple[str, str], int] = defaultdict(int)
    for setting, kind, item in stored_items(tables):
        sizes[setting, kind] = max(sizes[setting, kind], item_size(item))
    return dict(sizes)


@pytest.fixture
def wide_judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    """A model whose every reason is as long as a reason is kept, and whose every variant has
    input at its limit, in 4-byte characters."""
    verdict = json.dumps({"reason": wide(MAX_REASON_CHARS + 50), "score": 2})

    def answer(request: dict[str, Any]) -> tuple[int, str]:
        if request["response_format"]["json_schema"]["name"] != "record_variants":
            return 200, verdict
        asked = re.search(r"Write (\d+) new exchanges", request["messages"][-1]["content"])
        count = int(asked.group(1)) if asked else 1
        variant = {"input": wide(MAX_TEXT_CHARS), "output": "o"}  # the answer stays under 4 MB
        return 200, json.dumps({"variants": [variant] * count}, ensure_ascii=False)

    fake = FakeJudge(answer=answer)
    with fake.running():
        point_service_at(
            {**service_env(fake), "EVALSVC_INLINE_MAX_JUDGE_CALLS": "10000"}, monkeypatch
        )
        yield fake


def test_every_item_is_under_the_limit_with_every_field_at_its_limit(
    acme: Tenant, tables: dict[str, str], work: Work, wide_judge: FakeJudge
) -> None:
    prompt = wide(MAX_TEXT_CHARS)
    labels = [f"{k:02d}" + wide(MAX_LABEL_CHARS - 2) for k in range(MAX_LABELS)]
    pairs = [
        {"id": PAIR_ID, "input": wide(MAX_TEXT_CHARS), "output": wide(MAX_TEXT_CHARS)},
        {"id": "short", "input": "in", "output": "out", "labels": labels},
    ]
    written = send(acme, "POST", "/data/seed/wide", {"data": pairs, "system_prompt": prompt})
    assert written.status_code == 200, written.text[:300]
    read = acme.get("/data/seed/wide")
    assert read.status_code == 200
    assert read.json()["system_prompt"] == prompt

    questions = [f"{k:02d}" + wide(MAX_DEFINITION_CHARS - 2) for k in range(MAX_DEFINITIONS)]
    specified = send(
        acme, "POST", "/specify_questions", {"metrics": questions, "system_prompt": prompt}
    )
    assert specified.status_code == 200, specified.text[:300]
    metrics_id = specified.json()["metrics_id"]
    got = acme.get(f"/question/{metrics_id}")
    assert got.status_code == 200
    assert got.json()["definitions"] == questions

    body = {"seed_data_id": "wide", "metrics_id": metrics_id}
    first = send(acme, "POST", "/evaluate", body, **{"Idempotency-Key": "wide-1"})
    assert first.status_code == 200, first.text[:300]
    replay = send(acme, "POST", "/evaluate", body, **{"Idempotency-Key": "wide-1"})
    assert replay.status_code == 200, replay.text[:300]
    assert replay.headers.get("idempotent-replay") == "true"
    assert replay.json() == first.json()
    results_id = first.json()["eval_results_id"]
    assert [score["metric"] for score in first.json()["scores"]] == questions

    vote = {"pair_id": PAIR_ID, "metric_idx": MAX_DEFINITIONS - 1, "vote": -1}
    voted = send(
        acme,
        "PUT",
        f"/vote_eval_pair/{results_id}",
        {**vote, "comment": wide(MAX_COMMENT_CHARS)},
        **{"Idempotency-Key": "wide-vote"},
    )
    assert voted.status_code == 200, voted.text[:300]
    result = acme.get(f"/evaluation/{results_id}")
    assert result.status_code == 200
    assert result.json()["system_prompt"] == prompt
    assert result.json()["metrics_definitions"] == questions

    # Then the same wide dataset, evaluated through the queue and augmented through it: the job
    # items, their chunk tallies and params at their limits too.
    queued = send(acme, "POST", "/evaluate", body, Prefer="respond-async")
    assert queued.status_code == 202, queued.text[:300]
    augmented = send(
        acme, "POST", "/augment", {"seed_data_id": "wide", "multiple": 2}, Prefer="respond-async"
    )
    assert augmented.status_code == 202, augmented.text[:300]
    work.drain()
    done = acme.get(f"/evaluation/{queued.json()['eval_results_id']}")
    assert done.json()["status"] == "complete", done.text[:300]
    assert done.json()["score_means"] == result.json()["score_means"]
    # Both results keep their score histograms, one per metric, in the measured header.
    from evalsvc.storage import results as results_store

    for evaluated in (results_id, queued.json()["eval_results_id"]):
        stored = results_store.get("acme", evaluated)
        assert stored is not None and stored.histograms is not None
        assert [sum(bins) for bins in stored.histograms] == [2] * MAX_DEFINITIONS
    # Both headers also carry the keys of the list indexes (GET /evaluations), measured too.
    listed = acme.get("/evaluations?seed_data_id=wide").json()["evaluations"]
    assert {e["eval_results_id"] for e in listed} == {results_id, queued.json()["eval_results_id"]}
    synthetic = acme.get(f"/data/synthetic/{augmented.json()['synthetic_data_id']}")
    assert synthetic.status_code == 200, synthetic.text[:300]
    assert synthetic.json()["system_prompt"] == prompt

    sizes = largest(tables)
    report = os.environ.get("ITEM_SIZES_REPORT")
    if report:  # bench/item_sizes.py prints them
        Path(report).write_text(json.dumps([[*kind, size] for kind, size in sorted(sizes.items())]))
    over = {kind: size for kind, size in sizes.items() if size > ITEM_LIMIT}
    assert not over, over
    # Every chunk count rewrites the job item: it stays small whatever the job's inputs.
    assert sizes["EVALSVC_JOBS_TABLE", "job"] < 2048
    # The items that hold the texts at their limits were all written (and measured).
    kinds = set(sizes)
    for expected in [
        ("EVALSVC_JOBS_TABLE", "job"),
        ("EVALSVC_JOBS_TABLE", "chunk"),
        ("EVALSVC_JOBS_TABLE", "part"),
        ("EVALSVC_DATASETS_TABLE", "dataset"),
        ("EVALSVC_DATASETS_TABLE", "p"),
        ("EVALSVC_DATASETS_TABLE", "x"),
        ("EVALSVC_DATASETS_TABLE", "part"),
        ("EVALSVC_METRICS_TABLE", "m"),
        ("EVALSVC_METRICS_TABLE", "part"),
        ("EVALSVC_RESULTS_TABLE", "result"),
        ("EVALSVC_RESULTS_TABLE", "p"),
        ("EVALSVC_RESULTS_TABLE", "part"),
        ("EVALSVC_CRITIQUES_TABLE", "c"),
        ("EVALSVC_IDEMPOTENCY_TABLE", "record"),
    ]:
        assert expected in kinds, (expected, sorted(kinds))


def test_a_scored_pair_judged_five_times_on_every_metric_stays_under_the_limit(
    acme: Tenant, tables: dict[str, str], work: Work, wide_judge: FakeJudge
) -> None:
    # Given the longest pair id, labelled (a label cluster and an input cluster to keep), and
    # the most metrics, each a question whose every reason is as long as a reason is kept
    labels = [wide(MAX_LABEL_CHARS)]
    pairs = [{"id": PAIR_ID, "input": "in", "output": "out", "labels": labels}]
    assert send(acme, "POST", "/data/seed/sampled", {"data": pairs}).status_code == 200
    questions = [f"{k:02d} is it right?" for k in range(MAX_DEFINITIONS)]
    specified = send(acme, "POST", "/specify_questions", {"metrics": questions})
    assert specified.status_code == 200, specified.text[:300]
    body = {
        "seed_data_id": "sampled",
        "metrics_id": specified.json()["metrics_id"],
        "judge_samples": MAX_JUDGE_SAMPLES,
        "cluster_by": "label",
    }

    # When it is evaluated with the most judge samples, inside the request and queued
    inline = send(acme, "POST", "/evaluate", body)
    assert inline.status_code == 200, inline.text[:300]
    assert len(wide_judge.requests) == MAX_DEFINITIONS * MAX_JUDGE_SAMPLES
    queued = send(acme, "POST", "/evaluate", body, Prefer="respond-async")
    assert queued.status_code == 202, queued.text[:300]
    work.drain()
    done = acme.get(f"/evaluation/{queued.json()['eval_results_id']}")
    assert done.json()["status"] == "complete", done.text[:300]
    assert done.json()["score_judge_noise_sds"] == [0.0] * MAX_DEFINITIONS

    # Then each scored pair item keeps its k samples per metric, its clusters and its long
    # reasons, and every item stays under the limit
    from evalsvc.storage import results as results_store

    for results_id in (inline.json()["eval_results_id"], queued.json()["eval_results_id"]):
        scored = results_store.get_scored("acme", results_id, [PAIR_ID])[PAIR_ID]
        assert scored.samples == [[2] * MAX_JUDGE_SAMPLES] * MAX_DEFINITIONS
        assert scored.label_cluster is not None and scored.input_cluster is not None
        assert all(len(reason) == MAX_REASON_CHARS for reason in scored.reasons)
    scored_items = [
        item_size(item)
        for setting, kind, item in stored_items(tables)
        if setting == "EVALSVC_RESULTS_TABLE" and kind == "p"
    ]
    assert len(scored_items) == 2
    assert max(scored_items) > MAX_DEFINITIONS * MAX_REASON_CHARS * 4  # the reasons are kept
    sizes = largest(tables)
    over = {kind: size for kind, size in sizes.items() if size > ITEM_LIMIT}
    assert not over, over


def test_a_long_text_is_kept_apart_once_and_read_back_whole(tables: dict[str, str]) -> None:
    from evalsvc.core.errors import StorageUnavailable
    from evalsvc.storage import texts

    table = tables["EVALSVC_RESULTS_TABLE"]
    short, long = "short prompt", wide(MAX_TEXT_CHARS)
    assert texts.text_field(table, "acme", "prompt", short) == {"prompt": {"S": short}}
    first = texts.text_field(table, "acme", "prompt", long)
    again = texts.text_field(table, "acme", "prompt", long)
    assert first == again and set(first) == {"prompt_ref"}
    assert texts.read_text(table, "acme", first, "prompt") == long
    assert texts.field_bytes(first, "prompt") == len(long.encode())
    # Another tenant's reference to the same text finds nothing of this tenant's.
    with pytest.raises(StorageUnavailable):
        texts.read_text(table, "globex", first, "prompt")
    many = [wide(MAX_DEFINITION_CHARS) for _ in range(MAX_DEFINITIONS)]
    field = texts.list_field(table, "acme", "definitions", many)
    assert set(field) == {"definitions_ref"}
    assert texts.read_list(table, "acme", field, "definitions") == many
    # Each text was written once, in the parts its reference counts.
    parts = [kind for _, kind, _ in stored_items(tables) if kind == "part"]
    counted = [
        int(f[name]["M"]["parts"]["N"])
        for f, name in [(first, "prompt_ref"), (field, "definitions_ref")]
    ]
    assert len(parts) == sum(counted)


def test_a_text_read_once_is_not_read_again_by_the_same_process(
    tables: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.storage import dynamo, texts

    table = tables["EVALSVC_DATASETS_TABLE"]
    prompt = wide(5_000)  # over a dataset header's inline bytes, under the cache's share
    field = texts.text_field(table, "acme", "system_prompt", prompt, inline_bytes=2048)
    assert texts.read_text(table, "acme", field, "system_prompt") == prompt

    def no_query(**kwargs: object) -> None:
        raise AssertionError("the text was read again")

    monkeypatch.setattr(dynamo, "query_items", no_query)
    assert texts.read_text(table, "acme", field, "system_prompt") == prompt
    # The cache is the tenant's own: another tenant's read of the same sha goes to storage
    with pytest.raises(AssertionError, match="read again"):
        texts.read_text(table, "globex", field, "system_prompt")


def test_a_dataset_header_stays_one_read_unit_at_the_field_limits(
    tables: dict[str, str],
) -> None:
    from evalsvc.models.datasets import DatasetKind, Pair
    from evalsvc.storage import dynamo
    from evalsvc.storage.datasets import add_pair, dataset_pk, write_dataset

    dataset_id = "d" * 128
    for prompt in ("", wide(500), wide(MAX_TEXT_CHARS)):
        write_dataset("t" * 64, DatasetKind.SEED, dataset_id, [], prompt)
        add_pair("t" * 64, DatasetKind.SEED, dataset_id, Pair(id="p", input="i", output="o"))
        header = dynamo.get_item(
            table=tables["EVALSVC_DATASETS_TABLE"],
            key={
                "pk": {"S": dataset_pk("t" * 64, DatasetKind.SEED, dataset_id)},
                "sk": {"S": "dataset"},
            },
        )
        assert header is not None and dynamo.item_size(header) <= 4096, len(prompt)


def test_the_selection_of_the_most_pairs_at_the_field_limits_is_kept_under_the_limit(
    tables: dict[str, str],
) -> None:
    from evalsvc.logic.reproduce import cut_pieces
    from evalsvc.models.datasets import MAX_PAIRS, DatasetKind
    from evalsvc.models.evaluations import EvaluationResult
    from evalsvc.storage import results as results_store
    from evalsvc.storage import texts
    from evalsvc.storage.datasets.keys import append_ord

    # Given a result of the most pairs a dataset holds, each appended with the longest pair id
    # (the longest ords: a piece names its first and last), for the longest tenant and ids
    tenant, longest = "t" + "x" * 127, "r" + "x" * 127
    ords = [
        append_ord(1_764_000_000_000 + k, PAIR_ID[: -len(str(k))] + str(k))
        for k in range(MAX_PAIRS)
    ]
    pieces = cut_pieces(ords)
    result = EvaluationResult(
        tenant=tenant,
        results_id=longest,
        created_ms=1,
        dataset_id=longest,
        dataset_kind=DatasetKind.SEED,
        metrics_id=longest,
        definitions=["check:non_empty"],
        system_prompt="",
        pair_count=MAX_PAIRS,
        summaries=[],
    )

    # When the result is stored with what it scored, and a fresh process reads the selection
    results_store.put(result, [], pieces)
    texts._cache.clear()

    # Then the selection is kept apart from the header, in parts each under the item limit,
    # and read back whole
    sizes = largest(tables)
    assert sizes["EVALSVC_RESULTS_TABLE", "part"] < ITEM_LIMIT
    assert sizes["EVALSVC_RESULTS_TABLE", "result"] < 4096
    assert results_store.selection(tenant, longest) == pieces


def test_a_pair_judged_by_the_largest_jury_stays_under_the_limit(
    acme: Tenant, tables: dict[str, str], work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.models.metric_sets import MAX_JUDGE_NAME_CHARS, MAX_JUDGES
    from evalsvc.storage import results as results_store

    # Given the most judges, each with the longest name in 4-byte characters, whose scores
    # vary (3 or 4: a mean of three is as long as a float's repr gets), and whose every reason
    # is as long as a reason is kept
    names = [f"openai:{k}{wide(MAX_JUDGE_NAME_CHARS - 8)}" for k in range(MAX_JUDGES)]
    reason = wide(MAX_REASON_CHARS + 50)
    turn = [0]

    def answer(request: dict[str, Any]) -> tuple[int, str]:
        turn[0] += 1
        return 200, json.dumps({"reason": reason, "score": 3 + turn[0] % 2})

    fake = FakeJudge(answer=answer)
    with fake.running():
        endpoints = {name: {"base_url": fake.base_url, "api_key": "sk-test"} for name in names}
        point_service_at(
            {
                **service_env(fake),
                "EVALSVC_JUDGES": ",".join(names),
                "EVALSVC_JUDGE_ENDPOINTS": json.dumps(endpoints),
                "EVALSVC_PRICES": json.dumps({name: {"input": 1, "output": 1} for name in names}),
                "EVALSVC_INLINE_MAX_JUDGE_CALLS": "10000",
            },
            monkeypatch,
        )
        labels = [wide(MAX_LABEL_CHARS)]
        pairs = [{"id": PAIR_ID, "input": "in", "output": "out", "labels": labels}]
        assert send(acme, "POST", "/data/seed/jury", {"data": pairs}).status_code == 200
        questions = [f"{k:02d} is it right?" for k in range(MAX_DEFINITIONS)]
        specified = send(
            acme, "POST", "/specify_questions", {"metrics": questions, "judges": names}
        )
        assert specified.status_code == 200, specified.text[:300]
        body = {
            "seed_data_id": "jury",
            "metrics_id": specified.json()["metrics_id"],
            "judge_samples": 3,
            "cluster_by": "label",
        }

        # When it is evaluated inside the request and queued
        inline = send(acme, "POST", "/evaluate", body)
        assert inline.status_code == 200, inline.text[:300]
        queued = send(acme, "POST", "/evaluate", body, Prefer="respond-async")
        assert queued.status_code == 202, queued.text[:300]
        work.drain()
        done = acme.get(f"/evaluation/{queued.json()['eval_results_id']}")
        assert done.json()["status"] == "complete", done.text[:300]
        assert done.json()["score_juries"][0]["jury"]["judges"] == names

    # Then each scored pair keeps every judge's score of every metric and its long reasons, and
    # every item (the set, the result's header, the scored pair) stays under the limit
    for results_id in (inline.json()["eval_results_id"], queued.json()["eval_results_id"]):
        scored = results_store.get_scored("acme", results_id, [PAIR_ID])[PAIR_ID]
        assert scored.judge_scores is not None and len(scored.judge_scores) == MAX_DEFINITIONS
        assert all(len(scores) == MAX_JUDGES for scores in scored.judge_scores)
        assert all(len(reason) == MAX_REASON_CHARS for reason in scored.reasons)
    sizes = largest(tables)
    over = {kind: size for kind, size in sizes.items() if size > ITEM_LIMIT}
    assert not over, over
