"""Each function may touch only what it needs: read template.yaml and check every policy.

NEEDS is what each function's code calls, read from its code paths (the storage modules it
reaches, the idempotency layer on POST and PUT routes); tests/integration/test_granted_calls.py
runs the routes and checks that every DynamoDB call they make is granted here."""

from __future__ import annotations

import json
import re
from typing import Any

from evalsvc_tools.local.tables import load_template

from tests.conftest import ROOT
from tests.template_policies import (
    Deploy,
    actions,
    dynamodb_grants,
    functions,
    managed_policies,
    statements,
)

G, Q, BG, BW = "GetItem", "Query", "BatchGetItem", "BatchWriteItem"
P, U, D = "PutItem", "UpdateItem", "DeleteItem"
CC = "ConditionCheckItem"
READS = {G, Q, BG}
# What an event source mapping reads a table's stream with (the function's code never does).
STREAM_READ = {"DescribeStream", "GetRecords", "GetShardIterator", "ListStreams"}
# Powertools' idempotency (GetItem, PutItem, UpdateItem, DeleteItem) and answers kept in parts.
IDEMPOTENCY = {G, P, U, D, BG, BW}
# Every route reads the caller's key, and only that: one GetItem by the key's hash.
ROUTE_KEYS = {"ApiKeysTable": {G}}

# Function -> table (or table/index/<name>) -> the DynamoDB actions its code uses.
NEEDS: dict[str, dict[str, set[str]]] = {
    "create_seed_dataset": {"DatasetsTable": {BG, BW, G, P, Q}, "IdempotencyTable": IDEMPOTENCY},
    "add_seed_pair_for_prompt": {
        "DatasetsTable": {BG, BW, D, G, P, Q, U},
        "IdempotencyTable": IDEMPOTENCY,
    },
    "write_seed_dataset": {"DatasetsTable": {BG, BW, G, P, Q}, "IdempotencyTable": IDEMPOTENCY},
    "replace_seed_dataset": {"DatasetsTable": {BG, BW, G, P, Q}, "IdempotencyTable": IDEMPOTENCY},
    "get_seed_dataset": {"DatasetsTable": READS, "DatasetsTable/index/by_order": {Q}},
    # The header (counted: its append counters), the `latest` pointer, the versions' records.
    "list_seed_dataset_versions": {"DatasetsTable": READS},
    "add_seed_pair": {"DatasetsTable": {BG, BW, D, G, P, Q, U}, "IdempotencyTable": IDEMPOTENCY},
    # add_seed_pair's appends, many at once, and the spans waiting for their trace's root.
    "ingest_traces": {"DatasetsTable": {BG, BW, D, G, P, Q, U}, "IdempotencyTable": IDEMPOTENCY},
    "get_synthetic_dataset": {
        "DatasetsTable": READS,
        "DatasetsTable/index/by_order": {Q},
        "JobsTable": {G, Q},
    },
    "specify_questions": {"MetricsTable": {BW, P, U}, "IdempotencyTable": IDEMPOTENCY},
    "list_questions": {"MetricsTable": {G, Q}},
    # The review app's files: no data at all (the browser reads the API with the person's key).
    "review_app": {},
    "get_question": {"MetricsTable": {G, Q}},
    "evaluate": {
        "DatasetsTable": READS,
        "DatasetsTable/index/by_order": {Q},
        "MetricsTable": {G, Q},
        "ResultsTable": {BG, BW, G, P, Q, U},
        "JobsTable": {BW, G, P, Q, U},
        "JudgeCacheTable": {BG, BW},
        "IdempotencyTable": IDEMPOTENCY,
        "UsageTable": {G, U},
    },
    "estimate_evaluation": {
        "DatasetsTable": READS,
        "DatasetsTable/index/by_order": {Q},
        "MetricsTable": {G, Q},
        "JudgeCacheTable": {BG},
    },
    "get_usage": {"UsageTable": {BG}},
    "list_evaluations": {
        "ResultsTable/index/by_tenant": {Q},
        "ResultsTable/index/by_dataset": {Q},
    },
    "get_evaluation": {"ResultsTable": READS, "JobsTable": {G, Q}, "CritiquesTable": {Q}},
    # The result and its pinned selection (kept apart when long), the version's header, record
    # or tombstone, and its pairs by ord (a large pair's parts by Query).
    "get_evaluation_pairs": {
        "ResultsTable": {G, Q},
        "DatasetsTable": {G, Q},
        "DatasetsTable/index/by_order": {Q},
    },
    # POST /evaluate's, but for the metrics set and the pairs by key: a rerun scores the
    # definitions the result kept, and reads its pairs by ord from the version it pinned.
    "rerun_evaluation": {
        "DatasetsTable": {G, Q},
        "DatasetsTable/index/by_order": {Q},
        "ResultsTable": {BG, BW, G, P, Q, U},
        "JobsTable": {BW, G, P, Q, U},
        "JudgeCacheTable": {BG, BW},
        "IdempotencyTable": IDEMPOTENCY,
        "UsageTable": {G, U},
    },
    "vote_eval_pair": {
        "ResultsTable": READS,
        "JobsTable": {G, Q},
        "CritiquesTable": {U},
        "IdempotencyTable": IDEMPOTENCY,
    },
    "compare": {"ResultsTable": READS, "JobsTable": {G, Q}},
    # A labels plan (E12) reads the result's votes, and the scores of votes stored without one.
    "plan": {"ResultsTable": READS, "JobsTable": {G, Q}, "CritiquesTable": {Q}},
    "pairwise": {
        "DatasetsTable": READS,
        "DatasetsTable/index/by_order": {Q},
        "ResultsTable": {BG, BW, G, P, Q, U},
        "JobsTable": {BW, G, P, Q, U},
        "JudgeCacheTable": {BG, BW},
        "IdempotencyTable": IDEMPOTENCY,
        "UsageTable": {G, U},
    },
    "estimate_pairwise": {
        "DatasetsTable": READS,
        "DatasetsTable/index/by_order": {Q},
        "ResultsTable": {G, Q},
        "JobsTable": {G, Q},
        "JudgeCacheTable": {BG},
    },
    "get_pairwise": {"ResultsTable": READS, "JobsTable": {G, Q}},
    "get_pairwise_report": {"ResultsTable": READS, "JobsTable": {G, Q}, "DatasetsTable": READS},
    "vote_pairwise": {"ResultsTable": {BG, G, P}, "IdempotencyTable": IDEMPOTENCY},
    "get_comparison_report": {"ResultsTable": READS, "JobsTable": {G, Q}, "DatasetsTable": READS},
    "get_evaluation_report": {
        "ResultsTable": READS,
        "JobsTable": {G, Q},
        "CritiquesTable": {Q},
        "DatasetsTable": READS,
    },
    "get_evaluation_agreement": {
        "ResultsTable": READS,
        "JobsTable": {G, Q},
        "CritiquesTable": {Q},
    },
    "get_evaluation_anchored": {
        "ResultsTable": READS,
        "JobsTable": {G, Q},
        "CritiquesTable": {Q},
    },
    "get_question_agreement": {
        "MetricsTable": {G, Q},
        "CritiquesTable": {Q},
        "CritiquesTable/index/by_metrics_set": {Q},
    },
    "get_audit_sample": {
        "ResultsTable": READS,
        "JobsTable": {G, Q},
        "CritiquesTable": {Q},
        "DatasetsTable": READS,
    },
    "questions": {
        "MetricsTable": {BW, P, U},
        "IdempotencyTable": IDEMPOTENCY,
        "UsageTable": {G, U},
    },
    "improve_prompt": {
        "DatasetsTable": READS,
        "MetricsTable": {G, Q},
        "ResultsTable": READS,
        "JobsTable": {G, Q},
        "CritiquesTable": {Q},
        "IdempotencyTable": IDEMPOTENCY,
        "UsageTable": {G, U},
    },
    "augment": {
        "DatasetsTable": {BG, BW, G, P, Q},
        "DatasetsTable/index/by_order": {Q},
        "ResultsTable": READS,
        "JobsTable": {BW, G, P, Q, U},
        "IdempotencyTable": IDEMPOTENCY,
        "UsageTable": {G, U},
    },
    # A monitor's run, too: its evaluation (the metrics set read), its comparison, its record
    # and alert on the monitors table.
    "score_chunks": {
        "DatasetsTable": {BG, BW, G, P, Q},
        "DatasetsTable/index/by_order": {Q},
        "MetricsTable": {G, Q},
        "ResultsTable": {BG, BW, G, P, Q, U},
        "JobsTable": {BW, G, P, Q, U},
        "JudgeCacheTable": {BG, BW},
        "UsageTable": {G, U},
        "MonitorsTable": {G, Q, U},
    },
    # A monitor run that fails records it on its run (and makes its alert pending).
    "fail_chunks": {
        "ResultsTable": {BG, BW, G, P, Q, U},
        "DatasetsTable": {BG, BW, G, P, Q},
        "DatasetsTable/index/by_order": {Q},
        "JobsTable": {BW, G, P, Q, U},
        "MonitorsTable": {G, U},
    },
    "sweep_jobs": {
        "ResultsTable": {BG, BW, G, P, Q, U},
        "DatasetsTable": {BG, BW, G, P, Q},
        "DatasetsTable/index/by_order": {Q},
        "JobsTable": {BW, G, P, Q, U},
        "JobsTable/index/stalled": {Q},
        "MonitorsTable": {G, U},
    },
    # Monitors (E8). Creating one reads its dataset's header, its metrics set and a fixed
    # baseline, counts the tenant's monitors; a run claims its record with its job, naming
    # itself the monitor's last run (a condition on the monitor).
    "create_monitor": {
        "MonitorsTable": {P, Q},
        "DatasetsTable": {G},
        "MetricsTable": {G, Q},
        "ResultsTable": {G, Q},
        "IdempotencyTable": IDEMPOTENCY,
    },
    "list_monitors": {"MonitorsTable": {Q}},
    "get_monitor": {"MonitorsTable": {G}},
    "delete_monitor": {"MonitorsTable": {BW, D, Q}},
    # A run now: the run the monitor names last (or, naming none, its newest), then the claim.
    "run_monitor": {
        "MonitorsTable": {G, P, Q, U},
        "JobsTable": {BW, G, P, Q, U},
        "IdempotencyTable": IDEMPOTENCY,
    },
    "get_monitor_history": {"MonitorsTable": {G, Q}, "ResultsTable": {G, Q}},
    "get_monitor_report": {"MonitorsTable": {G, Q}, "ResultsTable": {G, Q}},
    # Due monitors by the index; each run claimed with its job; pending alerts leased, their
    # outcome kept, the regressed metrics named from the run's result.
    "dispatch_monitors": {
        "MonitorsTable": {G, P, Q, U},
        "MonitorsTable/index/due": {Q},
        "JobsTable": {BW, G, P, Q, U},
        "ResultsTable": {G, Q},
    },
    # The header's version and a version's keys (Query), their deletion (BatchWriteItem), the
    # tombstone (PutItem); the stream through its event source mapping.
    "purge_versions": {"DatasetsTable": {BW, P, Q}, "DatasetsTable/stream": STREAM_READ},
}
# The functions that call the judge, and of those the API routes (reserved concurrency).
USES_LLM = {
    "evaluate",
    "rerun_evaluation",
    "questions",
    "improve_prompt",
    "augment",
    "pairwise",
    "score_chunks",
}
MODEL_ROUTES = USES_LLM - {"score_chunks"}
# Queue access: function -> (policy template, queue) pairs.
QUEUE_ACCESS: dict[str, set[tuple[str, str]]] = {
    "evaluate": {("SQSSendMessagePolicy", "WorkQueue")},
    "rerun_evaluation": {("SQSSendMessagePolicy", "WorkQueue")},
    "pairwise": {("SQSSendMessagePolicy", "WorkQueue")},
    "augment": {("SQSSendMessagePolicy", "WorkQueue")},
    "score_chunks": {
        ("SQSPollerPolicy", "WorkQueue"),
        ("SQSSendMessagePolicy", "WorkQueue"),
    },
    "fail_chunks": {("SQSPollerPolicy", "WorkDeadLetterQueue")},
    "sweep_jobs": {("SQSSendMessagePolicy", "WorkQueue")},
    "run_monitor": {("SQSSendMessagePolicy", "WorkQueue")},
    "dispatch_monitors": {("SQSSendMessagePolicy", "WorkQueue")},
    # the stream's event source mapping sends a batch that kept failing, as the function
    "purge_versions": {("SQSSendMessagePolicy", "PurgeVersionsDeadLetterQueue")},
}
# Queue and stream workers are not routes: they never see an API key.
WORKERS = {"score_chunks", "fail_chunks", "sweep_jobs", "purge_versions", "dispatch_monitors"}
# Functions that serve files and read nothing: not even the keys table.
FILE_SERVERS = {"review_app"}

# The DynamoDB operation names each table's storage code calls (boto3's snake case), and the
# actions they need (a transaction needs the action of each of its writes).
_OPERATIONS = {
    r"\bget_item\b": G,
    r"\b(query_items|query_pages|query_bounded|merged_query)\(": Q,
    r"\bbatch_get\(": BG,
    r"\bbatch_write\(": BW,
    r"\bput_item\b": P,
    r"\bupdate_item\b": U,
    r"\bdelete_item\b": D,
    r'"Put":': P,
    r'"Update":': U,
    r'"Delete":': D,
    r'"ConditionCheck":': CC,
}
STORAGE = ROOT / "layers" / "common" / "evalsvc" / "storage"
TABLE_CODE = {
    "ApiKeysTable": ["api_keys.py"],
    "DatasetsTable": ["datasets", "texts.py"],
    "MetricsTable": ["metric_sets.py", "texts.py"],
    "ResultsTable": ["results", "texts.py"],
    "JobsTable": ["jobs.py", "texts.py"],
    "CritiquesTable": ["critiques.py"],
    "JudgeCacheTable": ["judge_cache.py"],
    "UsageTable": ["ledger.py"],
    "MonitorsTable": ["monitors.py"],
}


def table_operations(table: str) -> set[str]:
    """The actions the storage code of `table` can call at all."""
    found: set[str] = set()
    for name in TABLE_CODE[table]:
        path = STORAGE / name
        for source in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            text = source.read_text()
            found |= {action for op, action in _OPERATIONS.items() if re.search(op, text)}
    return found


def test_every_function_is_granted_exactly_the_dynamodb_actions_its_code_uses() -> None:
    found = functions()
    assert set(found) == set(NEEDS)
    for name, resource in found.items():
        no_key = name in WORKERS | FILE_SERVERS
        expected = dict(NEEDS[name]) if no_key else {**ROUTE_KEYS, **NEEDS[name]}
        assert dynamodb_grants(resource) == expected, name


def test_no_grant_names_an_action_its_tables_storage_code_never_calls() -> None:
    # A stale grant (the code that needed it is gone) fails here; so does a typo in NEEDS.
    for name, tables in NEEDS.items():
        for target, needed in tables.items():
            table = target.split("/")[0]
            if table == "IdempotencyTable":
                continue
            if target.endswith("/stream"):
                assert needed == STREAM_READ, (name, target)
                continue
            assert needed <= table_operations(table), (name, target)


def test_routes_read_the_keys_table_by_key_only_and_only_the_operator_scans_it() -> None:
    for name, resource in functions().items():
        grants = dynamodb_grants(resource)
        if name in WORKERS | FILE_SERVERS:
            assert "ApiKeysTable" not in grants, name
        else:
            assert grants["ApiKeysTable"] == {G}, name
        for resource_actions in grants.values():
            assert "Scan" not in resource_actions, name


def test_the_file_servers_are_granted_nothing() -> None:
    found = functions()
    for name in FILE_SERVERS:
        assert "Policies" not in found[name]["Properties"], name


def test_queue_access_is_what_each_function_sends_or_receives() -> None:
    for name, resource in functions().items():
        queues: set[tuple[str, str]] = set()
        for policy in resource["Properties"].get("Policies", []):
            if "Statement" in policy or "Ref" in policy:
                continue
            ((kind, args),) = policy.items()
            assert kind.startswith("SQS"), (name, kind)
            queues.add((kind, args["QueueName"]["Fn::GetAtt"].removesuffix(".QueueName")))
        assert queues == QUEUE_ACCESS.get(name, set()), name


def _other_statements(resource: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    return [
        (condition, statement)
        for condition, statement in statements(resource)
        if not all(action.startswith("dynamodb:") for action in actions(statement))
    ]


def test_bedrock_only_on_the_configured_models_and_only_when_each_is_bedrock() -> None:
    profile = (
        "arn:${AWS::Partition}:bedrock:${AWS::Region}:${AWS::AccountId}"
        ":inference-profile/${JudgeModelId}"
    )
    for name, resource in functions().items():
        bedrock = [
            (condition, statement)
            for condition, statement in _other_statements(resource)
            if any(action.startswith("bedrock:") for action in actions(statement))
        ]
        if name not in USES_LLM:
            assert bedrock == [], name
            continue
        # the judge's, the embeddings model's, then the jury's (E13: each only when
        # JuryBedrockModelIds names some; what they grant, test_the_jurys_* below)
        assert [condition for condition, _ in bedrock] == [
            "JudgeIsBedrock",
            "JudgeIsBedrock",
            "EmbeddingsIsBedrock",
            "HasJuryBedrockModels",
            "HasJuryBedrockModels",
        ]
        (_, model), (_, through_profile), (_, embeddings), _, _ = bedrock
        # the embeddings model (Titan v2, invoked by its own id), and nothing else
        assert set(embeddings) == {"Effect", "Action", "Resource"}, name
        assert actions(embeddings) == ["bedrock:InvokeModel"]
        assert embeddings["Resource"] == {
            "Fn::Sub": "arn:${AWS::Partition}:bedrock:*::foundation-model/${EmbeddingsModelId}"
        }
        assert actions(model) == ["bedrock:InvokeModel"]
        assert [arn["Fn::Sub"] for arn in model["Resource"]] == [
            "arn:${AWS::Partition}:bedrock:*::foundation-model/${JudgeModelId}",
            profile,
        ]
        # the models behind the profile, only when called through that profile
        assert actions(through_profile) == ["bedrock:InvokeModel"]
        assert through_profile["Condition"] == {
            "StringEquals": {"bedrock:InferenceProfileArn": {"Fn::Sub": profile}}
        }


def test_the_openai_secret_is_readable_only_by_judge_functions_and_only_that_secret() -> None:
    # the secret the stack made when it made one, else the one the parameter names; each
    # only for an OpenAI judge or embeddings model
    conditions = load_template()["Conditions"]
    given = {"Fn::Equals": [{"Ref": "OpenAIApiKeySecretArn"}, ""]}
    # (E13: OpenAI jurors without endpoints of their own are asked with the same key)
    assert conditions["UsesOpenAI"] == {
        "Fn::Or": [
            {"Fn::Condition": "JudgeIsOpenAI"},
            {"Fn::Condition": "EmbeddingsIsOpenAI"},
            {"Fn::Condition": "JuryUsesOpenAIKey"},
        ]
    }
    assert conditions["JuryUsesOpenAIKey"] == {
        "Fn::And": [
            {"Fn::Condition": "HasJuryOpenAIModels"},
            {"Fn::Equals": [{"Ref": "JuryOpenAIEndpoints"}, ""]},
        ]
    }
    assert conditions["CreateOpenAISecret"] == {"Fn::And": [{"Fn::Condition": "UsesOpenAI"}, given]}
    assert conditions["OpenAISecretGiven"] == {
        "Fn::And": [{"Fn::Condition": "UsesOpenAI"}, {"Fn::Not": [given]}]
    }
    for name, resource in functions().items():
        reads = [
            (condition, statement)
            for condition, statement in _other_statements(resource)
            if any(action.startswith("secretsmanager:") for action in actions(statement))
        ]
        if name not in USES_LLM:
            assert reads == [], name
            continue
        assert [(condition, statement["Resource"]) for condition, statement in reads] == [
            ("CreateOpenAISecret", {"Ref": "OpenAIApiKeySecret"}),
            ("OpenAISecretGiven", {"Ref": "OpenAIApiKeySecretArn"}),
            # the jurors' keys (E13), only when some are named
            ("HasJuryKeySecrets", {"Ref": "JuryOpenAIKeySecretArns"}),
        ], name
        for _, statement in reads:
            assert set(statement) == {"Effect", "Action", "Resource"}, name
            assert actions(statement) == ["secretsmanager:GetSecretValue"], name


# ---- a jury of judges (E13): the template deployed with jurors, resolved -------------------

FOUNDATION = "arn:aws:bedrock:*::foundation-model/{}"
PROFILE = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/{}"
JUDGE = "us.anthropic.claude-3-5-haiku-20241022-v1:0"
JURORS = ["us.amazon.nova-pro-v1:0", "us.meta.llama3-3-70b-instruct-v1:0", "mistral.large-v1:0"]


def _granted(deploy: Deploy, name: str, service: str) -> list[dict[str, Any]]:
    return [
        statement
        for statement in deploy.statements(name)
        if any(action.startswith(f"{service}:") for action in actions(statement))
    ]


def _bedrock(deploy: Deploy, name: str) -> tuple[set[str], set[str]]:
    """The models the function may invoke directly, and the inference profiles through which
    it may invoke any foundation model."""
    direct: set[str] = set()
    profiles: set[str] = set()
    for statement in _granted(deploy, name, "bedrock"):
        assert actions(statement) == ["bedrock:InvokeModel"], (name, statement)
        resources = statement["Resource"]
        resources = resources if isinstance(resources, list) else [resources]
        if "Condition" in statement:
            # any model, but only through these profiles
            assert resources == [FOUNDATION.format("*")], (name, statement)
            ((key, values),) = statement["Condition"]["StringEquals"].items()
            assert key == "bedrock:InferenceProfileArn", (name, statement)
            values = values if isinstance(values, list) else [values]
            assert values, (name, statement)
            profiles.update(values)
        else:
            assert set(statement) == {"Effect", "Action", "Resource"}, (name, statement)
            assert resources, (name, statement)
            direct.update(resources)
    return direct, profiles


def _models(ids: list[str]) -> set[str]:
    return {arn.format(model) for model in ids for arn in (FOUNDATION, PROFILE)}


def test_the_jurys_bedrock_models_are_granted_exactly_and_only_to_the_judge_functions() -> None:
    for judge in (
        {"JudgeProvider": "bedrock", "JudgeModelId": JUDGE},
        {},
        {
            "JudgeProvider": "openai",
            "JudgeModelId": "gpt-4o-mini",
        },
    ):
        judges = [JUDGE] if judge.get("JudgeProvider") == "bedrock" else []
        for jurors in (JURORS[:1], JURORS, [*JURORS, "amazon.nova-lite-v1:0", "us.x.y-v2:0"]):
            deploy = Deploy({**judge, "JuryBedrockModelIds": ",".join(jurors)})
            for name in functions(deploy.template):
                direct, profiles = _bedrock(deploy, name)
                if name not in USES_LLM:
                    assert (direct, profiles) == (set(), set()), name
                    continue
                # each model by its id and by its profile in the region, and nothing else
                assert direct == _models(judges + jurors), (name, jurors)
                assert profiles == {PROFILE.format(model) for model in judges + jurors}, name


def test_without_jurors_the_judge_functions_are_granted_what_the_judge_alone_needs() -> None:
    # No statement of the jury's: neither an empty one nor one on an empty model id.
    for name in USES_LLM:
        deploy = Deploy({"JudgeProvider": "bedrock", "JudgeModelId": JUDGE})
        assert _granted(deploy, name, "bedrock") == [
            {
                "Effect": "Allow",
                "Action": ["bedrock:InvokeModel"],
                "Resource": [FOUNDATION.format(JUDGE), PROFILE.format(JUDGE)],
            },
            {
                "Effect": "Allow",
                "Action": ["bedrock:InvokeModel"],
                "Resource": FOUNDATION.format("*"),
                "Condition": {
                    "StringEquals": {"bedrock:InferenceProfileArn": PROFILE.format(JUDGE)}
                },
            },
        ], name
        assert _granted(deploy, name, "secretsmanager") == [], name
        assert deploy.environment(name)["EVALSVC_JUDGES"] == "", name
        for parameters in ({}, {"JudgeProvider": "openai", "JudgeModelId": "gpt-4o-mini"}):
            assert _granted(Deploy(parameters), name, "bedrock") == [], (name, parameters)
        openai = Deploy({"JudgeProvider": "openai", "JudgeModelId": "gpt-4o-mini"})
        assert _granted(openai, name, "secretsmanager") == [
            {
                "Effect": "Allow",
                "Action": ["secretsmanager:GetSecretValue"],
                "Resource": "<OpenAIApiKeySecret>",
            }
        ], name


SECRETS = [
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:evalsvc/qwen-AbCdEf",
    "arn:aws:secretsmanager:us-east-1:123456789012:secret:evalsvc/mistral-GhIjKl",
]
ENDPOINTS = json.dumps(
    {
        "openai:qwen2.5-7b-instruct": {"base_url": "http://10.0.0.5:8080/v1"},
        "openai:mistral-small": {
            "base_url": "https://api.mistral.ai/v1",
            "api_key_secret_arn": SECRETS[1],
            "structured": "json_object",
        },
        "openai:gpt-4o": {
            "base_url": "https://api.openai.com/v1",
            "api_key_secret_arn": SECRETS[0],
        },
    }
)


def _secrets(deploy: Deploy, name: str) -> list[str]:
    found: list[str] = []
    for statement in _granted(deploy, name, "secretsmanager"):
        assert set(statement) == {"Effect", "Action", "Resource"}, (name, statement)
        assert actions(statement) == ["secretsmanager:GetSecretValue"], (name, statement)
        resources = statement["Resource"]
        found.extend(resources if isinstance(resources, list) else [resources])
    return found


def test_the_jurys_key_secrets_are_readable_exactly_and_only_by_the_judge_functions() -> None:
    jury = {
        "JudgeProvider": "bedrock",
        "JudgeModelId": JUDGE,
        "JuryOpenAIModels": "qwen2.5-7b-instruct,mistral-small,gpt-4o",
        "JuryOpenAIEndpoints": ENDPOINTS,
    }
    for secrets in (SECRETS[:1], SECRETS):
        deploy = Deploy({**jury, "JuryOpenAIKeySecretArns": ",".join(secrets)})
        for name in functions(deploy.template):
            assert _secrets(deploy, name) == (secrets if name in USES_LLM else []), name
            # every juror has its endpoint: the OpenAI key is neither made nor read
            assert "EVALSVC_OPENAI_API_KEY_SECRET_ARN" not in deploy.environment(name), name
        assert not deploy.condition("CreateOpenAISecret")
    # jurors with endpoints but no key (a server of one's own): no secret at all
    deploy = Deploy(jury)
    assert all(_secrets(deploy, name) == [] for name in functions(deploy.template))


def test_openai_jurors_without_endpoints_are_asked_with_the_openai_key() -> None:
    # Asked at OpenAIBaseUrl as an OpenAI judge would be, with the key the stack makes or the
    # one OpenAIApiKeySecretArn names, though the judge is on Bedrock.
    given = "arn:aws:secretsmanager:us-east-1:123456789012:secret:openai-MnOpQr"
    jury = {"JudgeProvider": "bedrock", "JudgeModelId": JUDGE, "JuryOpenAIModels": "gpt-4o"}
    for parameters, secret in (
        (jury, "<OpenAIApiKeySecret>"),
        ({**jury, "OpenAIApiKeySecretArn": given}, given),
    ):
        deploy = Deploy(parameters)
        assert deploy.condition("CreateOpenAISecret") == (secret != given)
        for name in USES_LLM:
            assert _secrets(deploy, name) == [secret], name
            assert deploy.environment(name)["EVALSVC_OPENAI_API_KEY_SECRET_ARN"] == secret, name


def test_the_jury_parameters_take_no_wildcard_and_at_most_five_bedrock_models() -> None:
    parameters = load_template()["Parameters"]
    models = re.compile(parameters["JuryBedrockModelIds"]["AllowedPattern"])
    assert parameters["JuryBedrockModelIds"]["Default"] == ""
    for good in ("", JURORS[0], ",".join(JURORS), ",".join(["a.b-v1:0"] * 5)):
        assert models.fullmatch(good), good
    for bad in (
        "*",
        "anthropic.*",
        f"{JURORS[0]},*",
        ", ".join(JURORS),
        ",".join(["a"] * 6),
        f"arn:aws:bedrock:us-east-1::foundation-model/{JURORS[0]}",
        f"{JURORS[0]},",
    ):
        assert not models.fullmatch(bad), bad
    # five slots, one condition each: the sixth model would have no grant
    conditions = load_template()["Conditions"]
    assert [name for name in conditions if name.startswith("JuryBedrockModel")] == [
        f"JuryBedrockModel{slot}" for slot in range(1, 6)
    ]
    secrets = re.compile(parameters["JuryOpenAIKeySecretArns"]["AllowedPattern"])
    assert parameters["JuryOpenAIKeySecretArns"]["Type"] == "CommaDelimitedList"
    for good in ("", SECRETS[0], ",".join(SECRETS)):
        assert secrets.fullmatch(good), good
    for bad in ("*", "evalsvc/qwen", SECRETS[0][:-6] + "*", SECRETS[0][:-6] + "??????"):
        assert not secrets.fullmatch(bad), bad
    # no key in the endpoints: deployed, only the secrets that hold them
    endpoints = re.compile(parameters["JuryOpenAIEndpoints"]["AllowedPattern"])
    assert endpoints.fullmatch(ENDPOINTS) and endpoints.fullmatch("")
    local = json.dumps({"openai:qwen": {"base_url": "http://127.0.0.1:8080/v1", "api_key": "k"}})
    assert not endpoints.fullmatch(local)
    assert not endpoints.fullmatch(json.dumps(json.loads(local), indent=2))


def test_grants_reach_functions_only_through_their_policies() -> None:
    # What the tests above read is all a function is granted: no policy attaches itself to a
    # role, no function brings a role of its own, and every managed policy is listed by some
    # function (each once).
    resources = load_template()["Resources"]
    assert not [r for r in resources.values() if r["Type"] in ("AWS::IAM::Policy",)]
    roles = [logical_id for logical_id, r in resources.items() if r["Type"] == "AWS::IAM::Role"]
    assert roles == ["ApiGatewayCloudWatchRole"]
    managed = managed_policies()
    for logical_id, policy in managed.items():
        assert not {"Roles", "Users", "Groups"} & set(policy["Properties"]), logical_id
    listed: set[str] = set()
    for name, resource in functions().items():
        assert "Role" not in resource["Properties"], name
        refs = [p["Ref"] for p in resource["Properties"].get("Policies", []) if "Ref" in p]
        assert len(refs) == len(set(refs)), name
        listed |= set(refs)
    assert listed == set(managed)


# IAM attaches at most 10 managed policies to a role (a quota that can only be raised by
# asking); SAM attaches 2 to each function's (basic execution: logs; X-Ray: Tracing Active).
MANAGED_POLICIES_PER_ROLE = 10
SAMS_MANAGED_POLICIES = 2


def test_every_functions_role_stays_within_the_managed_policies_quota() -> None:
    assert load_template()["Globals"]["Function"]["Tracing"] == "Active"
    for name, resource in functions().items():
        refs = [p for p in resource["Properties"].get("Policies", []) if "Ref" in p]
        assert len(refs) + SAMS_MANAGED_POLICIES <= MANAGED_POLICIES_PER_ROLE, name


def test_nothing_else_is_granted_and_no_action_is_a_wildcard() -> None:
    for name, resource in functions().items():
        for _, statement in statements(resource):
            assert statement["Effect"] == "Allow"
            for action in actions(statement):
                assert "*" not in action, (name, action)
                assert action.split(":")[0] in {"dynamodb", "bedrock", "secretsmanager"}, name


def test_api_functions_that_call_a_model_have_reserved_concurrency() -> None:
    for name, resource in functions().items():
        reserved = resource["Properties"].get("ReservedConcurrentExecutions")
        if name in MODEL_ROUTES:
            assert reserved == {"Ref": "ModelRouteConcurrency"}, name
        elif name not in WORKERS:
            assert reserved is None, name
    parameter = load_template()["Parameters"]["ModelRouteConcurrency"]
    assert parameter["Type"] == "Number" and parameter["MinValue"] >= 1


def test_the_stage_is_throttled_and_every_error_is_json() -> None:
    api = load_template()["Resources"]["EvalApi"]["Properties"]
    assert api["StageName"] == "v1"
    settings = api["MethodSettings"][0]
    assert settings["ThrottlingRateLimit"] and settings["ThrottlingBurstLimit"]
    for response in api["GatewayResponses"].values():
        assert response["ResponseTemplates"]["application/json"].startswith('{"error": ')
    # a function past its reserved concurrency is not a 500: busy, and when to retry
    throttled = api["GatewayResponses"]["INTEGRATION_FAILURE"]
    assert throttled["StatusCode"] == 503
    assert throttled["ResponseParameters"]["Headers"]["Retry-After"] == "'5'"
