"""Each function may touch only what it needs: read template.yaml and check every policy."""

from __future__ import annotations

from typing import Any

from evalsvc_tools.local.tables import load_template

READ, CRUD = "DynamoDBReadPolicy", "DynamoDBCrudPolicy"

# What each function needs, and nothing more: table -> access.
EXPECTED: dict[str, dict[str, str]] = {
    "create_seed_dataset": {"DatasetsTable": CRUD, "IdempotencyTable": CRUD},
    "add_seed_pair_for_prompt": {"DatasetsTable": CRUD, "IdempotencyTable": CRUD},
    "write_seed_dataset": {"DatasetsTable": CRUD, "IdempotencyTable": CRUD},
    "replace_seed_dataset": {"DatasetsTable": CRUD, "IdempotencyTable": CRUD},
    "get_seed_dataset": {"DatasetsTable": READ},
    "add_seed_pair": {"DatasetsTable": CRUD, "IdempotencyTable": CRUD},
    "get_synthetic_dataset": {"DatasetsTable": READ, "JobsTable": READ},
    "specify_questions": {"MetricsTable": CRUD, "IdempotencyTable": CRUD},
    "list_questions": {"MetricsTable": READ},
    "get_question": {"MetricsTable": READ},
    "evaluate": {
        "DatasetsTable": READ,
        "MetricsTable": READ,
        "ResultsTable": CRUD,
        "JobsTable": CRUD,
        "JudgeCacheTable": CRUD,
        "IdempotencyTable": CRUD,
        "UsageTable": CRUD,
    },
    "estimate_evaluation": {"DatasetsTable": READ, "MetricsTable": READ, "JudgeCacheTable": READ},
    "get_usage": {"UsageTable": READ},
    "get_evaluation": {"ResultsTable": READ, "JobsTable": READ, "CritiquesTable": READ},
    "vote_eval_pair": {
        "ResultsTable": READ,
        "JobsTable": READ,
        "CritiquesTable": CRUD,
        "IdempotencyTable": CRUD,
    },
    "compare": {"ResultsTable": READ, "JobsTable": READ},
    "get_comparison_report": {"ResultsTable": READ, "JobsTable": READ, "DatasetsTable": READ},
    "get_evaluation_report": {
        "ResultsTable": READ,
        "JobsTable": READ,
        "CritiquesTable": READ,
        "DatasetsTable": READ,
    },
    "get_evaluation_agreement": {"ResultsTable": READ, "JobsTable": READ, "CritiquesTable": READ},
    "get_question_agreement": {"MetricsTable": READ, "CritiquesTable": READ},
    "get_audit_sample": {
        "ResultsTable": READ,
        "JobsTable": READ,
        "CritiquesTable": READ,
        "DatasetsTable": READ,
    },
    "questions": {"MetricsTable": CRUD, "IdempotencyTable": CRUD, "UsageTable": CRUD},
    "improve_prompt": {
        "DatasetsTable": READ,
        "MetricsTable": READ,
        "ResultsTable": READ,
        "JobsTable": READ,
        "CritiquesTable": READ,
        "IdempotencyTable": CRUD,
        "UsageTable": CRUD,
    },
    "augment": {
        "DatasetsTable": CRUD,
        "ResultsTable": READ,
        "JobsTable": CRUD,
        "IdempotencyTable": CRUD,
        "UsageTable": CRUD,
    },
    "score_chunks": {
        "DatasetsTable": CRUD,
        "ResultsTable": CRUD,
        "JobsTable": CRUD,
        "JudgeCacheTable": CRUD,
        "UsageTable": CRUD,
    },
    "fail_chunks": {"ResultsTable": CRUD, "DatasetsTable": CRUD, "JobsTable": CRUD},
    "sweep_jobs": {"ResultsTable": CRUD, "DatasetsTable": CRUD, "JobsTable": CRUD},
}
USES_LLM = {"evaluate", "questions", "improve_prompt", "augment", "score_chunks"}
# Queue access: function -> (policy template, queue) pairs.
QUEUE_ACCESS: dict[str, set[tuple[str, str]]] = {
    "evaluate": {("SQSSendMessagePolicy", "WorkQueue")},
    "augment": {("SQSSendMessagePolicy", "WorkQueue")},
    "score_chunks": {
        ("SQSPollerPolicy", "WorkQueue"),
        ("SQSSendMessagePolicy", "WorkQueue"),
    },
    "fail_chunks": {("SQSPollerPolicy", "WorkDeadLetterQueue")},
    "sweep_jobs": {("SQSSendMessagePolicy", "WorkQueue")},
}
# Queue workers are not routes: they never see an API key.
WORKERS = {"score_chunks", "fail_chunks", "sweep_jobs"}


def functions() -> dict[str, dict[str, Any]]:
    return {
        resource["Properties"]["CodeUri"].strip("/").split("/")[-1]: resource
        for resource in load_template()["Resources"].values()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def test_every_function_has_exactly_the_table_access_it_needs() -> None:
    found = functions()
    assert set(found) == set(EXPECTED)
    for name, resource in found.items():
        tables: dict[str, str] = {}
        queues: set[tuple[str, str]] = set()
        for policy in resource["Properties"]["Policies"]:
            if "Statement" in policy:
                continue
            ((kind, args),) = policy.items()
            if kind.startswith("SQS"):
                queues.add((kind, args["QueueName"]["Fn::GetAtt"].removesuffix(".QueueName")))
                continue
            assert kind in (READ, CRUD), (name, kind)
            table = args["TableName"]["Ref"]
            tables[table] = CRUD if CRUD in (tables.get(table), kind) else kind
        if name not in WORKERS:
            # every route checks keys, none writes them
            assert tables.pop("ApiKeysTable") == READ, name
        assert tables == EXPECTED[name], name
        assert queues == QUEUE_ACCESS.get(name, set()), name


def test_no_statement_grants_a_wildcard_action_and_only_llm_functions_call_bedrock() -> None:
    for name, resource in functions().items():
        statements = [
            statement
            for policy in resource["Properties"]["Policies"]
            if "Statement" in policy
            for statement in policy["Statement"]
        ]
        actions = [action for statement in statements for action in statement["Action"]]
        assert all("*" not in action for action in actions), name
        assert actions == (["bedrock:InvokeModel"] if name in USES_LLM else []), name
        for statement in statements:
            for resource_arn in statement["Resource"]:
                assert "foundation-model/" in str(resource_arn) or "inference-profile/" in str(
                    resource_arn
                )


def test_the_stage_is_throttled_and_every_error_is_json() -> None:
    api = load_template()["Resources"]["EvalApi"]["Properties"]
    assert api["StageName"] == "v1"
    settings = api["MethodSettings"][0]
    assert settings["ThrottlingRateLimit"] and settings["ThrottlingBurstLimit"]
    for response in api["GatewayResponses"].values():
        assert response["ResponseTemplates"]["application/json"].startswith('{"error": ')
