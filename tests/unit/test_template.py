"""template.yaml is the one definition of routes and tables: the app and tests follow it."""

from __future__ import annotations

import json
from typing import Any

from evalsvc.api.app import create_app
from evalsvc.api.routes import ROUTE_MODULES, all_routers
from evalsvc_tools.local.tables import load_template, table_definitions, table_env_vars

from tests.conftest import ROOT

# Functions that serve files, not API routes: function -> its paths.
FILES = {"review_app": {("GET", "/app"), ("GET", "/app/{proxy+}")}}


def template_routes(*, files: bool = False) -> set[tuple[str, str]]:
    """The template's API routes; with `files`, only those of the functions in FILES."""
    routes = set()
    for resource in load_template()["Resources"].values():
        if resource["Type"] != "AWS::Serverless::Function":
            continue
        code = resource["Properties"]["CodeUri"].strip("/").split("/")[-1]
        if (code in FILES) != files:
            continue
        for event in resource["Properties"].get("Events", {}).values():
            if event["Type"] == "Api":
                routes.add((event["Properties"]["Method"].upper(), event["Properties"]["Path"]))
    return routes


def app_routes() -> set[tuple[str, str]]:
    paths = create_app(all_routers(), docs=True).openapi()["paths"]
    return {(method.upper(), path) for path, operations in paths.items() for method in operations}


def test_template_routes_and_app_routes_are_the_same_set() -> None:
    assert template_routes() == app_routes()


def test_every_function_serves_exactly_its_own_route() -> None:
    functions = {
        r["Properties"]["CodeUri"].strip("/").split("/")[-1]: r
        for r in load_template()["Resources"].values()
        if r["Type"] == "AWS::Serverless::Function"
    }
    assert set(functions) == (
        set(ROUTE_MODULES) | set(QUEUE_WORKERS) | set(STREAM_WORKERS) | set(SCHEDULED) | set(FILES)
    )
    for name in ROUTE_MODULES:
        source = (ROOT / "functions" / name / "app.py").read_text()
        assert f"from evalsvc.api.routes.{name} import router" in source
        events = functions[name]["Properties"]["Events"]
        assert len(events) == 1


def test_every_route_has_an_event_file() -> None:
    for name in [*ROUTE_MODULES, *FILES]:
        assert (ROOT / "events" / f"{name}.json").is_file(), name


def test_the_review_app_is_served_by_its_own_function_on_the_api() -> None:
    assert template_routes(files=True) == set().union(*FILES.values())
    source = (ROOT / "functions" / "review_app" / "app.py").read_text()
    assert "from evalsvc.handlers.review_app import WebApp" in source
    assert (ROOT / "functions" / "review_app" / "static" / "index.html").is_file()


# Queue workers: function -> (the queue its event source mapping reads, its handler).
QUEUE_WORKERS = {
    "score_chunks": ("WorkQueue", "chunk_handler"),
    "fail_chunks": ("WorkDeadLetterQueue", "dead_chunk_handler"),
}


# Stream workers: function -> (the table whose stream its event source mapping reads, its
# handler).
STREAM_WORKERS = {"purge_versions": ("DatasetsTable", "purge_handler")}


# Scheduled functions: function -> its handler in evalsvc.handlers.background.
SCHEDULED = {"sweep_jobs": "sweep_handler", "dispatch_monitors": "dispatch_handler"}


def test_the_sweeper_and_the_dispatcher_run_on_a_schedule_with_an_event_file() -> None:
    resources = load_template()["Resources"]
    for name, handler in SCHEDULED.items():
        (function,) = [
            r
            for r in resources.values()
            if r["Type"] == "AWS::Serverless::Function"
            and r["Properties"]["CodeUri"].strip("/").endswith(name)
        ]
        (event,) = function["Properties"]["Events"].values()
        assert event["Type"] == "ScheduleV2"
        assert event["Properties"]["ScheduleExpression"].startswith("rate(")
        source = (ROOT / "functions" / name / "app.py").read_text()
        assert f"from evalsvc.handlers.background import {handler}" in source
        assert (ROOT / "events" / f"{name}.json").is_file()


def test_each_queue_worker_reads_its_queue_with_partial_batch_failures() -> None:
    resources = load_template()["Resources"]
    mappings = {
        r["Properties"]["FunctionName"]["Ref"].removesuffix(".Alias"): r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
    }
    by_code = {
        r["Properties"]["CodeUri"].strip("/").split("/")[-1]: logical_id
        for logical_id, r in resources.items()
        if r["Type"] == "AWS::Serverless::Function"
    }
    for name, (queue, handler) in QUEUE_WORKERS.items():
        function = by_code[name]
        assert "Events" not in resources[function]["Properties"], name
        mapping = mappings[function]
        assert mapping["EventSourceArn"] == {"Fn::GetAtt": f"{queue}.Arn"}
        assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
        source = (ROOT / "functions" / name / "app.py").read_text()
        assert f"from evalsvc.handlers.background import {handler}" in source
        assert (ROOT / "events" / f"{name}.json").is_file(), name


def _matches(pattern: Any, value: Any) -> bool:
    """Whether `value` matches an event filter `pattern` (the forms the template uses: objects,
    lists of literals, and {"prefix": ...})."""
    if isinstance(pattern, dict):
        return isinstance(value, dict) and all(
            key in value and _matches(sub, value[key]) for key, sub in pattern.items()
        )
    return any(
        value.startswith(option["prefix"]) if isinstance(option, dict) else value == option
        for option in pattern
    )


def test_the_purge_reads_only_ttl_removals_of_version_records_from_the_datasets_stream() -> None:
    import copy

    from evalsvc.storage.datasets import history

    from tests.lambda_support import load_event

    resources = load_template()["Resources"]
    table = resources["DatasetsTable"]["Properties"]
    assert table["TimeToLiveSpecification"] == {
        "AttributeName": history.TTL_ATTRIBUTE,
        "Enabled": True,
    }
    assert table["StreamSpecification"] == {"StreamViewType": "OLD_IMAGE"}
    (function,) = [
        logical_id
        for logical_id, r in resources.items()
        if r["Type"] == "AWS::Serverless::Function"
        and r["Properties"]["CodeUri"].strip("/").endswith("purge_versions")
    ]
    assert "Events" not in resources[function]["Properties"]
    (mapping,) = [
        r["Properties"]
        for r in resources.values()
        if r["Type"] == "AWS::Lambda::EventSourceMapping"
        and r["Properties"]["FunctionName"] == {"Ref": f"{function}.Alias"}
    ]
    for name, (source, handler) in STREAM_WORKERS.items():
        assert mapping["EventSourceArn"] == {"Fn::GetAtt": f"{source}.StreamArn"}
        source_code = (ROOT / "functions" / name / "app.py").read_text()
        assert f"from evalsvc.handlers.background import {handler}" in source_code
        assert (ROOT / "events" / f"{name}.json").is_file(), name
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert mapping["BisectBatchOnFunctionError"] is True
    assert 1 <= mapping["MaximumRetryAttempts"] <= 10
    assert mapping["DestinationConfig"]["OnFailure"]["Destination"] == {
        "Fn::GetAtt": "PurgeVersionsDeadLetterQueue.Arn"
    }
    dead = resources["PurgeVersionsDeadLetterQueue"]["Properties"]
    assert dead["SqsManagedSseEnabled"] is True and dead["MessageRetentionPeriod"] == 1209600

    # The filter: the events/ file's record (a TTL removal of a version record) passes, and
    # the same record removed by a caller, an insert, or another item's removal does not.
    (entry,) = mapping["FilterCriteria"]["Filters"]
    pattern = json.loads(entry["Pattern"])
    (record,) = load_event("purge_versions")["Records"]
    assert _matches(pattern, record)
    by_caller = {k: v for k, v in record.items() if k != "userIdentity"}
    inserted = {**record, "eventName": "INSERT"}
    other = copy.deepcopy(record)
    other["dynamodb"]["Keys"]["sk"] = {"S": "gone#5f0c9a1e2b3d4c5e6f708192a3b4c5d6"}
    by_another_service = copy.deepcopy(record)
    by_another_service["userIdentity"]["principalId"] = "lambda.amazonaws.com"
    for ignored in (by_caller, inserted, other, by_another_service):
        assert not _matches(pattern, ignored)
    assert pattern["dynamodb"]["Keys"]["sk"]["S"] == [{"prefix": history.RECORD_PREFIX}]


def test_the_work_queue_dead_letters_and_outlasts_its_worker() -> None:
    resources = load_template()["Resources"]
    queue = resources["WorkQueue"]["Properties"]
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {
        "Fn::GetAtt": "WorkDeadLetterQueue.Arn"
    }
    assert queue["RedrivePolicy"]["maxReceiveCount"] >= 3
    worker = resources["ScoreChunksFunction"]["Properties"]
    assert queue["VisibilityTimeout"] >= 6 * worker["Timeout"]
    assert worker["ReservedConcurrentExecutions"] == {"Ref": "WorkerConcurrency"}
    scaling = resources["ScoreChunksEventSource"]["Properties"]["ScalingConfig"]
    assert scaling["MaximumConcurrency"] == {"Ref": "WorkerConcurrency"}


def test_tables_come_from_the_template() -> None:
    definitions = table_definitions()
    assert set(definitions) == {
        "DatasetsTable",
        "ApiKeysTable",
        "MetricsTable",
        "ResultsTable",
        "JobsTable",
        "CritiquesTable",
        "JudgeCacheTable",
        "IdempotencyTable",
        "UsageTable",
        "MonitorsTable",
    }
    index = definitions["DatasetsTable"]["LocalSecondaryIndexes"][0]
    assert index["IndexName"] == "by_order"
    indexes = {i["IndexName"]: i for i in definitions["ResultsTable"]["GlobalSecondaryIndexes"]}
    assert set(indexes) == {"by_tenant", "by_dataset"}
    [due] = definitions["MonitorsTable"]["GlobalSecondaryIndexes"]
    assert due["IndexName"] == "due"
    assert table_env_vars() == {
        "EVALSVC_DATASETS_TABLE": "DatasetsTable",
        "EVALSVC_API_KEYS_TABLE": "ApiKeysTable",
        "EVALSVC_METRICS_TABLE": "MetricsTable",
        "EVALSVC_RESULTS_TABLE": "ResultsTable",
        "EVALSVC_JOBS_TABLE": "JobsTable",
        "EVALSVC_CRITIQUES_TABLE": "CritiquesTable",
        "EVALSVC_JUDGE_CACHE_TABLE": "JudgeCacheTable",
        "EVALSVC_IDEMPOTENCY_TABLE": "IdempotencyTable",
        "EVALSVC_USAGE_TABLE": "UsageTable",
        "EVALSVC_MONITORS_TABLE": "MonitorsTable",
    }


def test_functions_run_arm64_on_a_supported_python_with_snapstart() -> None:
    function = load_template()["Globals"]["Function"]
    assert function["Runtime"] in {"python3.12", "python3.13"}
    assert function["Architectures"] == ["arm64"]
    assert function["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    assert function["Tracing"] == "Active"
    assert function["LoggingConfig"]["LogFormat"] == "JSON"


def test_the_results_list_indexes_are_keyed_and_projected_as_the_storage_reads_them() -> None:
    from evalsvc.storage import results

    table = table_definitions()["ResultsTable"]
    types = {a["AttributeName"]: a["AttributeType"] for a in table["AttributeDefinitions"]}
    for index, partition in [
        (results.TENANT_INDEX, "list_pk"),
        (results.DATASET_INDEX, "list_dpk"),
    ]:
        (definition,) = [i for i in table["GlobalSecondaryIndexes"] if i["IndexName"] == index]
        keys = {k["KeyType"]: k["AttributeName"] for k in definition["KeySchema"]}
        assert keys == {"HASH": partition, "RANGE": "list_sk"}
        assert types[partition] == types["list_sk"] == "S"
        # only what a list shows: the header's statistics and texts stay out of the index
        assert definition["Projection"]["ProjectionType"] == "INCLUDE"
        assert set(definition["Projection"]["NonKeyAttributes"]) == set(results.LISTED_ATTRIBUTES)
