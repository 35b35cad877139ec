"""Every DynamoDB call a function makes is one template.yaml grants it: each route's handler runs
with its events/ file (the queue workers on the work that makes, the purge on the versions the
overwrites kept), every call is recorded by table (or index) and action, and checked against the
function's policy statements."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from evalsvc.core.identifiers import now_ms
from evalsvc.core.settings import reset_settings
from evalsvc.logic import jobs, monitors
from evalsvc.models.api_keys import Identity

from tests import dataset_stream
from tests.fake_judge import FakeJudge
from tests.lambda_support import (
    LambdaContext,
    handler_of,
    invoke,
    load_event,
    with_body,
    with_header,
    with_path,
    with_query,
)
from tests.template_policies import dynamodb_grants, functions
from tests.webhook_receiver import receiver
from tests.work_queue import Work

# A transaction needs, on each item's table, the action of what it does there.
_TRANSACT_ACTIONS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
}


class Calls:
    """DynamoDB calls by function: function -> {(table or table/index/name, action)}."""

    def __init__(self, tables: dict[str, str]) -> None:
        self.logical_ids = {name: name.split("-", 1)[1] for name in tables.values()}
        self.function: str | None = None
        self.made: dict[str, set[tuple[str, str]]] = {}

    def record(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        assert self.function, f"a DynamoDB {model.name} outside any function"
        made = self.made.setdefault(self.function, set())
        action = model.name
        if action in ("BatchGetItem", "BatchWriteItem"):
            made |= {(self.logical_ids[table], action) for table in params["RequestItems"]}
        elif action == "TransactWriteItems":
            for item in params["TransactItems"]:
                ((kind, write),) = item.items()
                made.add((self.logical_ids[write["TableName"]], _TRANSACT_ACTIONS[kind]))
        else:
            target = self.logical_ids[params["TableName"]]
            if "IndexName" in params:
                target = f"{target}/index/{params['IndexName']}"
            made.add((target, action))

    @contextmanager
    def running(self, function: str) -> Iterator[None]:
        self.function = function
        try:
            yield
        finally:
            self.function = None

    def invoke(self, function: str, event: dict[str, Any]) -> tuple[int, Any]:
        with self.running(function):
            return invoke(function, event)

    def page(self, function: str, event: dict[str, Any]) -> int:
        """Call a route that answers HTML; its status."""
        with self.running(function):
            status: int = handler_of(function)(event, LambdaContext())["statusCode"]
            return status


@pytest.fixture
def calls(tables: dict[str, str], work: Work, priced_judge: FakeJudge) -> Iterator[Calls]:
    """Set up last: the other fixtures point the service at a new environment (new clients)."""
    from evalsvc.storage import dynamo
    from evalsvc.storage import idempotency as idempotency_store

    # the idempotency layer keeps the client it was made with: make it again on this one
    idempotency_store.reset()
    recorder = Calls(tables)
    events = dynamo.client().meta.events
    events.register("before-parameter-build.dynamodb", recorder.record)
    try:
        yield recorder
    finally:
        events.unregister("before-parameter-build.dynamodb", recorder.record)


def _with_key(event: dict[str, Any], key: str) -> dict[str, Any]:
    return with_header(event, "Idempotency-Key", key)


def test_every_dynamodb_call_of_every_function_is_granted_to_it(
    event_key: str,
    calls: Calls,
    work: Work,
    priced_judge: FakeJudge,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def ok(function: str, event: dict[str, Any], status: int = 200) -> Any:
        got, body = calls.invoke(function, event)
        assert got == status, (function, body)
        return body

    # datasets, through every writing route, each once with an Idempotency-Key
    ok("write_seed_dataset", _with_key(load_event("write_seed_dataset"), "w1"))
    ok("replace_seed_dataset", _with_key(load_event("replace_seed_dataset"), "r1"))
    ok("write_seed_dataset", load_event("write_seed_dataset"))
    ok("create_seed_dataset", _with_key(load_event("create_seed_dataset"), "c1"))
    ok("add_seed_pair", _with_key(load_event("add_seed_pair"), "a1"))
    ok("add_seed_pair_for_prompt", _with_key(load_event("add_seed_pair_for_prompt"), "p1"))
    # traces: a new dataset, then the same export again with a key (nothing added)
    ok("ingest_traces", load_event("ingest_traces"))
    ok("ingest_traces", _with_key(load_event("ingest_traces"), "t1"))
    ok("get_seed_dataset", load_event("get_seed_dataset"))
    ok("get_seed_dataset", load_event("get_seed_dataset_latest"))
    ok("get_synthetic_dataset", load_event("get_synthetic_dataset"), 404)
    versions = ok("list_seed_dataset_versions", load_event("list_seed_dataset_versions"))
    assert [v["kind"] for v in versions["versions"]] == ["overwrite", "overwrite", "create"]
    # the versions those overwrites kept reach the end of their retention: TTL removes their
    # records (as the stream's stand-in does), and the purge deletes them, twice over
    stream = dataset_stream.Stream()
    kept = dataset_stream.records("local", "support-faq")
    assert len(kept) == 2
    removals = [stream.expire("local", "support-faq", record) for record in kept]
    with calls.running("purge_versions"):
        assert dataset_stream.purge(*removals) == []
        assert dataset_stream.purge(*removals) == []
    ok("get_seed_dataset", load_event("get_seed_dataset"))
    versions = ok("list_seed_dataset_versions", load_event("list_seed_dataset_versions"))
    assert len(versions["versions"]) == 1

    # metrics: a question for the judge and a check
    metrics = {"metrics": ["Is the answer polite?", "check:non_empty"]}
    specified = ok(
        "specify_questions", _with_key(with_body(load_event("specify_questions"), metrics), "s1")
    )
    ok("list_questions", load_event("list_questions"))
    ok("get_question", load_event("get_question"))
    ok("questions", _with_key(load_event("questions"), "q1"))
    ok("estimate_evaluation", load_event("estimate_evaluation"))

    # two evaluations in the request, one queued; votes, reports, comparisons on them
    evaluate = with_body(
        load_event("evaluate"),
        {"seed_data_id": "support-faq", "metrics_id": specified["metrics_id"]},
    )
    baseline = ok("evaluate", _with_key(evaluate, "e1"))["eval_results_id"]
    queued = ok("evaluate", with_header(evaluate, "Prefer", "respond-async"), 202)
    with calls.running("score_chunks"):
        assert work.drain()
    candidate = queued["eval_results_id"]
    ok("get_usage", load_event("get_usage"))
    ok("list_evaluations", load_event("list_evaluations"))
    listed = with_query(load_event("list_evaluations"), seed_data_id="support-faq")
    assert len(ok("list_evaluations", listed)["evaluations"]) == 2
    for function in ("get_evaluation", "get_evaluation_agreement", "get_audit_sample"):
        ok(function, with_path(load_event(function), id=baseline))
    report = with_path(load_event("get_evaluation_report"), id=baseline)
    assert calls.page("get_evaluation_report", report) == 200
    vote = with_path(load_event("vote_eval_pair"), id=baseline)
    ok("vote_eval_pair", _with_key(vote, "v1"))
    anchored = with_query(load_event("get_evaluation_anchored"), metric_idx="0")
    assert ok("get_evaluation_anchored", with_path(anchored, id=baseline))["judge_only"]
    labels = {"result_id": baseline, "metric_idx": 0, "half_width": 0.1}
    ok("plan", with_body(load_event("plan"), labels), 409)  # no audit labels yet
    ok(
        "get_question_agreement",
        with_path(load_event("get_question_agreement"), id=specified["metrics_id"]),
    )
    ids = {"baseline_id": baseline, "candidate_id": candidate}
    compare = dict(load_event("compare"))
    ok("compare", with_body(compare, {**ids, "alpha": 0.05, "cluster_by": "label"}))
    plan = load_event("plan")
    assert ok("plan", with_body(plan, {**ids, "effect": 0.5}))["metrics"][0]["paired"] is True
    alone = ok("plan", with_body(plan, {"baseline_id": baseline, "effect": 0.5}))
    assert alone["metrics"][0]["paired"] is False
    report = load_event("get_comparison_report")
    report["queryStringParameters"] = ids
    report["multiValueQueryStringParameters"] = {k: [v] for k, v in ids.items()}
    assert calls.page("get_comparison_report", report) == 200
    # pairwise (E5): an estimate, a run in the request, read and voted on, and one queued
    both = {"result_ids": [baseline, candidate], "question": "Which answer is more polite?"}
    ok("estimate_pairwise", with_body(load_event("estimate_pairwise"), both))
    judged = ok("pairwise", _with_key(with_body(load_event("pairwise"), both), "pw1"))
    ok("get_pairwise", with_path(load_event("get_pairwise"), id=judged["pairwise_id"]))
    report = with_path(load_event("get_pairwise_report"), id=judged["pairwise_id"])
    assert calls.page("get_pairwise_report", report) == 200
    voted = {"pair_id": judged["verdicts"][0]["pair_id"], "a": baseline, "b": candidate}
    vote_pairwise = with_body(load_event("vote_pairwise"), {**voted, "winner": "a"})
    ok("vote_pairwise", _with_key(with_path(vote_pairwise, id=judged["pairwise_id"]), "pv1"))
    later = with_header(with_body(load_event("pairwise"), both), "Prefer", "respond-async")
    ok("pairwise", later, 202)
    with calls.running("score_chunks"):
        assert work.drain()
    candidates = [
        {"prompt": "You are a concise support assistant.", "score_means": [3.2, 1.0]},
        {"prompt": "You are a friendly, concise support assistant.", "score_means": [4.1, 1.0]},
    ]
    improve = {
        "seed_data_id": "support-faq",
        "prompt_comparison_results": {"candidates": candidates},
    }
    ok("improve_prompt", _with_key(with_body(load_event("improve_prompt"), improve), "i1"))

    # an augmentation, queued: the chunk worker does it
    augment = with_header(load_event("augment"), "Prefer", "respond-async")
    ok("augment", _with_key(augment, "g1"), 202)
    with calls.running("score_chunks"):
        assert work.drain()
    with calls.running("sweep_jobs"):
        handler_of("sweep_jobs")(load_event("sweep_jobs"), LambdaContext())

    # E7: the dataset overwritten, the results' pairs are read from the version they pinned
    # and run again (in the request, queued, and replayed); once that version is purged, both
    # are 410s naming its expiry
    ok("write_seed_dataset", load_event("write_seed_dataset"))
    for results_id in (baseline, candidate):
        pairs = with_path(load_event("get_evaluation_pairs"), id=results_id)
        listed = ok("get_evaluation_pairs", pairs)["pairs"]
        assert [p["pair_id"] for p in listed] == ["q1", "q2", "q3"]
    rerun = with_path(load_event("rerun_evaluation"), id=baseline)
    assert ok("rerun_evaluation", _with_key(rerun, "rr1"))["pair_count"] == 3
    assert ok("rerun_evaluation", _with_key(rerun, "rr1"))["pair_count"] == 3
    ok("rerun_evaluation", with_header(rerun, "Prefer", "respond-async"), 202)
    with calls.running("score_chunks"):
        assert work.drain()
    # answers too large for an idempotency record: a retry renders them again from the result
    wide = [f'check:json_schema:{{"description": "{"d" * 1500}{k}"}}' for k in range(45)]
    specify = with_body(load_event("specify_questions"), {"metrics": wide})
    wide_metrics = ok("specify_questions", specify)["metrics_id"]
    evaluate_wide = with_body(
        load_event("evaluate"), {"seed_data_id": "support-faq", "metrics_id": wide_metrics}
    )
    wide_result = ok("evaluate", _with_key(evaluate_wide, "e-wide"))
    assert ok("evaluate", _with_key(evaluate_wide, "e-wide")) == wide_result
    rerun_wide = with_path(load_event("rerun_evaluation"), id=wide_result["eval_results_id"])
    wide_rerun = ok("rerun_evaluation", _with_key(rerun_wide, "rr-wide"))
    assert ok("rerun_evaluation", _with_key(rerun_wide, "rr-wide")) == wide_rerun
    with calls.running("purge_versions"):
        dataset_stream.expire_all("local", "support-faq")
    ok("get_evaluation_pairs", with_path(load_event("get_evaluation_pairs"), id=baseline), 410)
    ok("rerun_evaluation", rerun, 410)

    # a job whose chunks were lost: the sweeper queues them again (as at a restart, whatever
    # its last progress, which is the path a stalled job takes), and the worker does them
    asynchronous = with_header(evaluate, "Prefer", "respond-async")
    lost = ok("evaluate", _with_key(asynchronous, "e2"), 202)["eval_results_id"]
    assert work.lose_visible()
    with calls.running("sweep_jobs"):
        assert jobs.sweep(restart=True).resumed_jobs == 1
    with calls.running("score_chunks"):
        assert work.drain()
    assert ok("get_evaluation", with_path(load_event("get_evaluation"), id=lost))["status"] == (
        "complete"
    )

    # a job whose chunk kept failing: the dead-letter worker fails it
    dead = ok("evaluate", _with_key(asynchronous, "e3"), 202)["eval_results_id"]
    assert work.dead_letter_all()
    with calls.running("fail_chunks"):
        work.deliver_dead_letters()
    failed = ok("get_evaluation", with_path(load_event("get_evaluation"), id=dead))
    assert failed["status"] == "failed"

    # E8: a monitor of the dataset, alerting a receiver on this machine; a run now, and the
    # run due on its schedule, each done by the worker (evaluation, comparison, record); a run
    # whose chunk kept failing fails, its alert left pending for the dispatcher to deliver;
    # its history, report and list; then it is deleted.
    monkeypatch.setenv("EVALSVC_ALLOW_LOCAL_WEBHOOKS", "1")
    reset_settings()
    with receiver() as hook:
        watch = {
            "name": "support answers",
            "seed_data_id": "support-faq",
            "metrics_id": specified["metrics_id"],
            "schedule": "rate(1 hour)",
            "max_cost_usd": 1.0,
            "webhook_url": hook.url,
            "webhook_secret": "a-secret-of-16-chars",
        }
        created = ok(
            "create_monitor", _with_key(with_body(load_event("create_monitor"), watch), "m1"), 201
        )
        monitor = {"id": created["monitor_id"]}
        ok("run_monitor", _with_key(with_path(load_event("run_monitor"), **monitor), "mr1"), 202)
        with calls.running("score_chunks"):
            assert work.drain()
        with calls.running("dispatch_monitors"):
            handler_of("dispatch_monitors")(load_event("dispatch_monitors"), LambdaContext())
            _, stored = monitors.get(Identity("local", "u", "", "k"), created["monitor_id"])
            assert len(monitors.dispatch(stored.next_run_ms).claimed) == 1
        with calls.running("score_chunks"):
            assert work.drain()
        ok("run_monitor", with_path(load_event("run_monitor"), **monitor), 202)
        assert work.dead_letter_all()
        with calls.running("fail_chunks"):
            work.deliver_dead_letters()
        with calls.running("dispatch_monitors"):
            assert monitors.dispatch(now_ms() + 1).alerts == 1
        assert [post.json()["failure"] is not None for post in hook.posts] == [True]
    history = with_path(load_event("get_monitor_history"), **monitor)
    runs = ok("get_monitor_history", history)["runs"]
    # newest first: the scheduled run's time (an hour after creation) is the latest
    assert [(r["status"], r["manual"]) for r in runs] == [
        ("complete", False),
        ("failed", True),
        ("complete", True),
    ]
    report = with_path(load_event("get_monitor_report"), **monitor)
    assert calls.page("get_monitor_report", report) == 200
    ok("get_monitor", with_path(load_event("get_monitor"), **monitor))
    assert len(ok("list_monitors", load_event("list_monitors"))["monitors"]) == 1
    deleted = ok("delete_monitor", with_path(load_event("delete_monitor"), **monitor))
    assert deleted["runs_removed"] == 3

    template = functions()
    for function, made in sorted(calls.made.items()):
        grants = dynamodb_grants(template[function])
        missing = {
            (target, action) for target, action in made if action not in grants.get(target, set())
        }
        assert not missing, (function, missing)
    # the review app's files are served without touching any table
    assert calls.page("review_app", load_event("review_app")) == 200
    assert "review_app" not in calls.made
    # every route ran and used a table beyond the keys table (whose reads are cached)
    workers = {"score_chunks", "fail_chunks", "sweep_jobs", "purge_versions", "dispatch_monitors"}
    routes = set(template) - workers - {"review_app"}
    assert routes <= set(calls.made)
    for function in routes:
        assert {target for target, _ in calls.made[function]} - {"ApiKeysTable"}, function
    assert workers <= set(calls.made)
    # the purge: the header's version and the versions' keys, their deletion, the tombstones
    assert calls.made["purge_versions"] == {
        ("DatasetsTable", "Query"),
        ("DatasetsTable", "BatchWriteItem"),
        ("DatasetsTable", "PutItem"),
    }
