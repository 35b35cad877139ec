"""template.yaml as an operator deploys it: the edge, the secret, retained data, logs, alarms."""

from __future__ import annotations

import json
import re
from typing import Any

from evalsvc_tools.local.tables import load_template

from tests.template_policies import Deploy, functions

TENANT_TABLES = {
    "ApiKeysTable",
    "DatasetsTable",
    "MetricsTable",
    "ResultsTable",
    "JobsTable",
    "CritiquesTable",
    "UsageTable",
    "MonitorsTable",
}
# Caches that refill themselves (judge answers, replays of recent answers): dropped with the stack.
DISPOSABLE_TABLES = {"JudgeCacheTable", "IdempotencyTable"}


def resources(kind: str) -> dict[str, dict[str, Any]]:
    return {
        logical_id: resource
        for logical_id, resource in load_template()["Resources"].items()
        if resource["Type"] == kind
    }


def web_acl_rules() -> dict[str, dict[str, Any]]:
    acl = load_template()["Resources"]["EdgeWebAcl"]
    return {rule["Name"]: rule for rule in acl["Properties"]["Rules"]}


# ---- the edge ----------------------------------------------------------------------------------


def test_the_web_acl_is_regional_and_attached_to_the_v1_stage_unless_turned_off() -> None:
    template = load_template()
    acl = template["Resources"]["EdgeWebAcl"]
    association = template["Resources"]["EdgeWebAclAssociation"]
    assert acl["Properties"]["Scope"] == "REGIONAL"
    assert acl["Properties"]["DefaultAction"] == {"Allow": {}}
    assert association["Properties"]["WebACLArn"] == {"Fn::GetAtt": "EdgeWebAcl.Arn"}
    assert association["Properties"]["ResourceArn"] == {
        "Fn::Sub": "arn:${AWS::Partition}:apigateway:${AWS::Region}::/restapis/${EvalApi}/stages/v1"
    }
    # SAM's stage for StageName v1 must exist before it can be associated
    assert association["DependsOn"] == "EvalApiv1Stage"
    assert template["Conditions"]["EdgeProtectionEnabled"] == {
        "Fn::Equals": [{"Ref": "EdgeProtection"}, "enabled"]
    }
    assert set(template["Parameters"]["EdgeProtection"]["AllowedValues"]) == {
        "enabled",
        "disabled",
    }
    for logical_id in ("EdgeWebAcl", "EdgeWebAclAssociation", "EdgeLogGroup", "EdgeLogging"):
        assert template["Resources"][logical_id]["Condition"] == "EdgeProtectionEnabled"


def _throttles_with_a_json_429(rule: dict[str, Any]) -> None:
    response = rule["Action"]["Block"]["CustomResponse"]
    assert response["ResponseCode"] == 429
    assert {"Name": "Retry-After", "Value": "60"} in response["ResponseHeaders"]
    bodies = load_template()["Resources"]["EdgeWebAcl"]["Properties"]["CustomResponseBodies"]
    body = bodies[response["CustomResponseBodyKey"]]
    assert body["ContentType"] == "APPLICATION_JSON"
    assert set(json.loads(body["Content"])) == {"error"}


def test_one_api_key_is_rate_limited_on_the_authorization_header() -> None:
    rule = web_acl_rules()["rate-per-key"]["Statement"]["RateBasedStatement"]
    assert rule["AggregateKeyType"] == "CUSTOM_KEYS"
    ((key,),) = [list(custom.values()) for custom in rule["CustomKeys"]]
    assert key["Name"].lower() == "authorization"
    assert rule["Limit"] == {"Ref": "RateLimitPerKey"}
    _throttles_with_a_json_429(web_acl_rules()["rate-per-key"])


def test_one_client_ip_is_rate_limited() -> None:
    rule = web_acl_rules()["rate-per-ip"]["Statement"]["RateBasedStatement"]
    assert rule["AggregateKeyType"] == "IP"
    assert rule["Limit"] == {"Ref": "RateLimitPerIp"}
    _throttles_with_a_json_429(web_acl_rules()["rate-per-ip"])


def test_aws_known_bad_inputs_are_blocked_except_in_bodies_which_are_tenant_data() -> None:
    rule = web_acl_rules()["aws-known-bad-inputs"]
    group = rule["Statement"]["ManagedRuleGroupStatement"]
    assert (group["VendorName"], group["Name"]) == ("AWS", "AWSManagedRulesKnownBadInputsRuleSet")
    # the group's own actions (block), not overridden to count as a whole
    assert rule["OverrideAction"] == {"None": {}}
    # but a dataset holding an exploit string as text is stored, not refused at the edge
    counted = {o["Name"]: o["ActionToUse"] for o in group["RuleActionOverrides"]}
    assert counted == {"Log4JRCE_BODY": {"Count": {}}, "JavaDeserializationRCE_BODY": {"Count": {}}}


def test_a_request_without_a_key_is_refused_at_the_edge_with_a_json_401() -> None:
    rule = web_acl_rules()["requests-without-a-key"]
    present = rule["Statement"]["NotStatement"]["Statement"]["SizeConstraintStatement"]
    assert present["FieldToMatch"]["SingleHeader"]["Name"].lower() == "authorization"
    assert (present["ComparisonOperator"], present["Size"]) == ("GT", 0)
    response = rule["Action"]["Block"]["CustomResponse"]
    assert response["ResponseCode"] == 401
    bodies = load_template()["Resources"]["EdgeWebAcl"]["Properties"]["CustomResponseBodies"]
    error = json.loads(bodies[response["CustomResponseBodyKey"]]["Content"])["error"]
    assert "Authorization" in error
    # evaluated after the per-IP limit, so a flood of keyless requests is still counted there
    rules = web_acl_rules()
    assert rules["rate-per-ip"]["Priority"] < rule["Priority"] < rules["rate-per-key"]["Priority"]


def test_the_edge_log_never_holds_an_api_key() -> None:
    logging = load_template()["Resources"]["EdgeLogging"]["Properties"]
    assert logging["ResourceArn"] == {"Fn::GetAtt": "EdgeWebAcl.Arn"}
    assert {"SingleHeader": {"Name": "authorization"}} in logging["RedactedFields"]


# ---- the secret --------------------------------------------------------------------------------

SECRET_NAMES = re.compile(r"(_KEY$|SECRET|TOKEN|PASSWORD|CREDENTIAL)", re.IGNORECASE)


def _environments(template: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = [("Globals", template["Globals"]["Function"]["Environment"]["Variables"])]
    for name, resource in functions(template).items():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        found.append((name, variables))
    return found


# AWS's own variables, which the template may set as AWS names them (Powertools reads its own).
AWS_OWN = re.compile(r"^(AWS_|POWERTOOLS_|_X_AMZN_|_HANDLER$|LAMBDA_)")


def test_every_variable_the_template_sets_is_evalsvc_prefixed_but_awss_own() -> None:
    from evalsvc.core.settings import Settings, variable

    settings = {variable(field) for field in Settings.model_fields}
    found = 0
    for where, variables in _environments(load_template()):
        for name in variables:
            found += 1
            if AWS_OWN.match(name):
                continue
            assert name.startswith("EVALSVC_"), (where, name)
            # And it is a setting the service reads (not a misspelt one, read by nothing).
            assert name in settings, (where, name)
    assert found > 0


def test_no_environment_holds_a_secret_only_the_secrets_arn() -> None:
    template = load_template()
    assert "OpenAIApiKey" not in template["Parameters"]
    for parameter in template["Parameters"].values():
        assert not parameter.get("NoEcho"), "a secret passed as a parameter"
    for where, variables in _environments(template):
        assert "EVALSVC_OPENAI_API_KEY" not in variables, where
        for name, value in variables.items():
            if SECRET_NAMES.search(name):
                assert name == "EVALSVC_OPENAI_API_KEY_SECRET_ARN", (where, name)
                assert value == {
                    "Fn::If": [
                        "UsesOpenAI",
                        {
                            "Fn::If": [
                                "CreateOpenAISecret",
                                {"Ref": "OpenAIApiKeySecret"},
                                {"Ref": "OpenAIApiKeySecretArn"},
                            ]
                        },
                        {"Ref": "AWS::NoValue"},
                    ]
                }, where


def test_the_secret_is_made_only_when_none_is_given_and_for_an_openai_model() -> None:
    template = load_template()
    secret = template["Resources"]["OpenAIApiKeySecret"]
    assert secret["Type"] == "AWS::SecretsManager::Secret"
    assert secret["Condition"] == "CreateOpenAISecret"
    assert "SecretString" not in secret["Properties"]  # no value in the template
    assert template["Conditions"]["CreateOpenAISecret"] == {
        "Fn::And": [
            {"Fn::Condition": "UsesOpenAI"},  # !Condition, as tools/ reads the template
            {"Fn::Equals": [{"Ref": "OpenAIApiKeySecretArn"}, ""]},
        ]
    }
    assert template["Outputs"]["OpenAIApiKeySecret"]["Condition"] == "CreateOpenAISecret"


# Creating a metrics set checks the judges it names (E13: a jury's) and their prices: the
# function knows the judges, and calls no model.
NAMES_JUDGES_ONLY = {"specify_questions"}


def test_the_runtime_judge_setting_keeps_its_provider_colon_model_form() -> None:
    template = load_template()
    assert template["Parameters"]["JudgeProvider"]["AllowedValues"] == ["none", "bedrock", "openai"]
    for name, resource in functions(template).items():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        if "EVALSVC_LLM" in variables:
            assert variables["EVALSVC_LLM"] == {
                "Fn::If": ["JudgeIsNone", "", {"Fn::Sub": "${JudgeProvider}:${JudgeModelId}"}]
            }, name
            if name in NAMES_JUDGES_ONLY:
                assert "EVALSVC_EMBEDDINGS" not in variables, name
                continue
            # the embeddings model beside the judge, in the same form
            assert variables["EVALSVC_EMBEDDINGS"] == {
                "Fn::If": [
                    "EmbeddingsIsNone",
                    "",
                    {"Fn::Sub": "${EmbeddingsProvider}:${EmbeddingsModelId}"},
                ]
            }, name
        else:
            assert "EVALSVC_EMBEDDINGS" not in variables, name
    assert template["Parameters"]["EmbeddingsProvider"]["AllowedValues"] == [
        "none",
        "bedrock",
        "openai",
    ]
    assert template["Parameters"]["EmbeddingsProvider"]["Default"] == "none"


# ---- data kept -------------------------------------------------------------------------------


def test_tenant_data_outlives_the_stack_and_a_replacement() -> None:
    tables = resources("AWS::DynamoDB::Table")
    assert set(tables) == TENANT_TABLES | DISPOSABLE_TABLES
    for logical_id, table in tables.items():
        properties = table["Properties"]
        assert properties["PointInTimeRecoverySpecification"] == {
            "PointInTimeRecoveryEnabled": True
        }, logical_id
        if logical_id in TENANT_TABLES:
            assert table["DeletionPolicy"] == "Retain", logical_id
            assert table["UpdateReplacePolicy"] == "Retain", logical_id
            assert properties["DeletionProtectionEnabled"] is True, logical_id
        else:
            assert "DeletionPolicy" not in table, logical_id
            assert "DeletionProtectionEnabled" not in properties, logical_id


# ---- logs --------------------------------------------------------------------------------------


def test_every_function_logs_to_its_own_retained_group_with_the_retention_parameter() -> None:
    template = load_template()
    groups = resources("AWS::Logs::LogGroup")
    logical_ids = {
        logical_id
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }
    used: set[str] = set()
    for logical_id in logical_ids:
        config = template["Resources"][logical_id]["Properties"]["LoggingConfig"]
        group_id = config["LogGroup"]["Ref"]
        assert group_id == f"{logical_id}LogGroup"
        group = groups[group_id]
        assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}
        assert group["DeletionPolicy"] == "Retain" and group["UpdateReplacePolicy"] == "Retain"
        used.add(group_id)
    assert len(used) == len(logical_ids)
    for group in groups.values():
        assert group["Properties"]["RetentionInDays"] == {"Ref": "LogRetentionDays"}


def test_the_api_writes_a_json_access_log_line_per_request() -> None:
    template = load_template()
    api = template["Resources"]["EvalApi"]
    setting = api["Properties"]["AccessLogSetting"]
    assert setting["DestinationArn"] == {"Fn::GetAtt": "ApiAccessLogGroup.Arn"}
    # with every $context variable as a value, the format is a JSON object
    line = json.loads(re.sub(r"\$context\.[\w.]+", "x", setting["Format"]))
    fields = dict(re.findall(r'"(\w+)": "\$context\.([\w.]+)"', setting["Format"]))
    assert set(line) == set(fields)
    assert {
        "requestId": "requestId",
        "sourceIp": "identity.sourceIp",
        "status": "status",
        "responseLatency": "responseLatency",
        "integrationLatency": "integration.latency",
        "route": "resourcePath",
        "error": "error.message",
        "wafError": "waf.error",
    }.items() <= fields.items()
    assert not any("authorization" in value.lower() for value in fields.values())
    # API Gateway logs through the account's CloudWatch role, which the stack sets first
    assert api["DependsOn"] == "ApiGatewayAccount"
    account = template["Resources"]["ApiGatewayAccount"]["Properties"]
    assert account["CloudWatchRoleArn"] == {"Fn::GetAtt": "ApiGatewayCloudWatchRole.Arn"}
    role = template["Resources"]["ApiGatewayCloudWatchRole"]["Properties"]
    assert role["ManagedPolicyArns"] == [
        {
            "Fn::Sub": "arn:${AWS::Partition}:iam::aws:policy/service-role/"
            "AmazonAPIGatewayPushToCloudWatchLogs"
        }
    ]


# ---- alarms ------------------------------------------------------------------------------------

TOPIC = {"Fn::If": ["CreateAlarmTopic", {"Ref": "AlarmTopic"}, {"Ref": "AlarmTopicArn"}]}


def _alarm(namespace: str, metric: str, dimension: dict[str, Any] | None) -> dict[str, Any]:
    found = [
        alarm["Properties"]
        for alarm in resources("AWS::CloudWatch::Alarm").values()
        if alarm["Properties"]["Namespace"] == namespace
        and alarm["Properties"]["MetricName"] == metric
        and (dimension is None or dimension in alarm["Properties"].get("Dimensions", []))
    ]
    assert len(found) == 1, (namespace, metric, dimension)
    return found[0]


def test_alarms_watch_the_dead_letters_the_backlog_5xx_errors_and_throttles() -> None:
    dead = _alarm(
        "AWS/SQS",
        "ApproximateNumberOfMessagesVisible",
        {"Name": "QueueName", "Value": {"Fn::GetAtt": "WorkDeadLetterQueue.QueueName"}},
    )
    assert (dead["ComparisonOperator"], dead["Threshold"]) == ("GreaterThanThreshold", 0)
    age = _alarm(
        "AWS/SQS",
        "ApproximateAgeOfOldestMessage",
        {"Name": "QueueName", "Value": {"Fn::GetAtt": "WorkQueue.QueueName"}},
    )
    assert age["Threshold"] == {"Ref": "QueueAgeAlarmSeconds"}
    api = _alarm("AWS/ApiGateway", "5XXError", {"Name": "Stage", "Value": "v1"})
    api_name = load_template()["Resources"]["EvalApi"]["Properties"]["Name"]
    assert {"Name": "ApiName", "Value": api_name} in api["Dimensions"]
    # the purge of expired versions: behind the stream by over an hour (it keeps records 24)
    lag = _alarm(
        "AWS/Lambda",
        "IteratorAge",
        {"Name": "FunctionName", "Value": {"Ref": "PurgeVersionsFunction"}},
    )
    assert lag["Statistic"] == "Maximum" and 0 < lag["Threshold"] <= 6 * 3600 * 1000
    # throttles: the account-wide sum (no dimension), reserved and shared concurrency alike
    throttles = _alarm("AWS/Lambda", "Throttles", None)
    assert "Dimensions" not in throttles
    for logical_id in resources("AWS::Serverless::Function"):
        errors = _alarm(
            "AWS/Lambda", "Errors", {"Name": "FunctionName", "Value": {"Ref": logical_id}}
        )
        assert (errors["ComparisonOperator"], errors["Threshold"]) == ("GreaterThanThreshold", 0)


def _arn_of(target: Any) -> str:
    """The logical id `!GetAtt Queue.Arn` names."""
    attribute = target["Fn::GetAtt"]
    name = attribute[0] if isinstance(attribute, list) else attribute.split(".")[0]
    return str(name)


def test_every_queue_of_failed_work_is_watched_kept_two_weeks_and_encrypted() -> None:
    template = load_template()
    queues = resources("AWS::SQS::Queue")
    failed = {
        _arn_of(queue["Properties"]["RedrivePolicy"]["deadLetterTargetArn"])
        for queue in queues.values()
        if "RedrivePolicy" in queue["Properties"]
    }
    failed |= {
        _arn_of(mapping["Properties"]["DestinationConfig"]["OnFailure"]["Destination"])
        for mapping in resources("AWS::Lambda::EventSourceMapping").values()
        if "DestinationConfig" in mapping["Properties"]
    }
    assert failed == {"WorkDeadLetterQueue", "PurgeVersionsDeadLetterQueue"}
    for logical_id in failed:
        properties = template["Resources"][logical_id]["Properties"]
        assert properties["MessageRetentionPeriod"] == 1209600, logical_id
        alarm = _alarm(
            "AWS/SQS",
            "ApproximateNumberOfMessagesVisible",
            {"Name": "QueueName", "Value": {"Fn::GetAtt": f"{logical_id}.QueueName"}},
        )
        assert (alarm["ComparisonOperator"], alarm["Threshold"]) == ("GreaterThanThreshold", 0)
    for logical_id, queue in queues.items():
        assert queue["Properties"]["SqsManagedSseEnabled"] is True, logical_id


def test_every_alarm_notifies_the_named_topic_or_the_stacks_encrypted_one() -> None:
    template = load_template()
    alarms = resources("AWS::CloudWatch::Alarm")
    assert alarms
    for logical_id, alarm in alarms.items():
        assert alarm["Properties"]["AlarmActions"] == [TOPIC], logical_id
        assert alarm["Properties"]["TreatMissingData"] == "notBreaching", logical_id
    topic = template["Resources"]["AlarmTopic"]
    assert topic["Condition"] == "CreateAlarmTopic"
    assert topic["Properties"]["KmsMasterKeyId"] == {"Ref": "AlarmTopicKey"}
    assert template["Conditions"]["CreateAlarmTopic"] == {
        "Fn::Equals": [{"Ref": "AlarmTopicArn"}, ""]
    }
    # CloudWatch can publish to an encrypted topic only if the key lets it
    key = template["Resources"]["AlarmTopicKey"]["Properties"]
    assert key["EnableKeyRotation"] is True
    (cloudwatch,) = [s for s in key["KeyPolicy"]["Statement"] if s["Principal"].get("Service")]
    assert cloudwatch["Principal"]["Service"] == "cloudwatch.amazonaws.com"
    assert set(cloudwatch["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey*"}


# ---- cost guard and fair share -----------------------------------------------------------------

SPENDING = {
    "evaluate",
    "rerun_evaluation",
    "augment",
    "questions",
    "improve_prompt",
    "score_chunks",
    "estimate_evaluation",
    "get_usage",
    "pairwise",
    "estimate_pairwise",
}
STARTS_OR_ENDS_JOBS = {
    "evaluate",
    "rerun_evaluation",
    "augment",
    "pairwise",
    "score_chunks",
    "fail_chunks",
    "sweep_jobs",
    "run_monitor",
    "dispatch_monitors",
}


def test_the_default_monthly_limit_and_the_running_jobs_cap_reach_the_functions_that_use_them() -> (
    None
):
    template = load_template()
    assert template["Parameters"]["DefaultMonthlyLimitUsd"]["Default"] == "100"
    assert template["Parameters"]["MaxRunningJobsPerTenant"]["Default"] == 4
    for name, resource in functions(template).items():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        limit = variables.get("EVALSVC_DEFAULT_MONTHLY_LIMIT_USD")
        cap = variables.get("EVALSVC_MAX_RUNNING_JOBS_PER_TENANT")
        assert limit == ({"Ref": "DefaultMonthlyLimitUsd"} if name in SPENDING else None), name
        assert cap == (
            {"Ref": "MaxRunningJobsPerTenant"} if name in STARTS_OR_ENDS_JOBS else None
        ), name
    # the operator's CLI reads the default from the stack's outputs (an output cannot be empty)
    output = template["Outputs"]["DefaultMonthlyLimitUsd"]
    assert output["Value"] == {"Ref": "DefaultMonthlyLimitUsd"}
    assert template["Conditions"][output["Condition"]] == {
        "Fn::Not": [{"Fn::Equals": [{"Ref": "DefaultMonthlyLimitUsd"}, ""]}]
    }
    pattern = re.compile(template["Parameters"]["DefaultMonthlyLimitUsd"]["AllowedPattern"])
    assert all(pattern.fullmatch(value) for value in ("", "100", "12.50"))
    assert not any(pattern.fullmatch(value) for value in ("-1", "ten", "1e3"))


def test_every_function_that_asks_an_openai_compatible_judge_gets_the_structured_output_mode() -> (
    None
):
    from typing import get_args

    from evalsvc.core.settings import Settings

    modes = get_args(Settings.model_fields["llm_structured"].annotation)
    template = load_template()
    parameter = template["Parameters"]["JudgeStructuredOutput"]
    assert parameter["Default"] == "auto"
    assert set(parameter["AllowedValues"]) == set(modes)
    asking = []
    for name, resource in functions(template).items():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        if "EVALSVC_OPENAI_BASE_URL" in variables:
            asking.append(name)
            assert variables["EVALSVC_LLM_STRUCTURED"] == {"Ref": "JudgeStructuredOutput"}, name
        else:
            assert "EVALSVC_LLM_STRUCTURED" not in variables, name
    assert {
        "evaluate",
        "rerun_evaluation",
        "questions",
        "improve_prompt",
        "augment",
        "score_chunks",
    } <= set(asking)


# ---- a jury of judges (E13) ------------------------------------------------------------------

JUDGE = "us.anthropic.claude-3-5-haiku-20241022-v1:0"


def test_every_function_that_judges_or_creates_metrics_sets_knows_the_jurys_judges() -> None:
    template = load_template()
    knowing = set()
    for name, resource in functions(template).items():
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        if "EVALSVC_LLM" in variables:
            knowing.add(name)
            assert variables["EVALSVC_JUDGE_ENDPOINTS"] == {"Ref": "JuryOpenAIEndpoints"}, name
            assert "EVALSVC_JUDGES" in variables, name
        else:
            assert not {"EVALSVC_JUDGES", "EVALSVC_JUDGE_ENDPOINTS"} & set(variables), name
    # the ones that judge, estimate a judging's cost, or create metrics sets
    assert {
        "evaluate",
        "rerun_evaluation",
        "estimate_evaluation",
        "pairwise",
        "estimate_pairwise",
        "questions",
        "improve_prompt",
        "augment",
        "score_chunks",
        "specify_questions",
    } == knowing


def test_the_jurys_judges_are_the_judge_and_the_jurors_in_the_judges_form() -> None:
    from evalsvc.core.settings import Settings
    from evalsvc.scoring.llm.jurors import judge_names

    bedrock = {"JudgeProvider": "bedrock", "JudgeModelId": JUDGE}
    openai = {"JudgeProvider": "openai", "JudgeModelId": "gpt-4o-mini"}
    jurors = {"JuryBedrockModelIds": "us.amazon.nova-pro-v1:0,mistral.large-v1:0"}
    local = {"JuryOpenAIModels": "qwen2.5-7b-instruct, gpt-4o"}
    cases = [
        # no jurors: empty, the judge alone
        ({}, "", ()),
        (bedrock, "", (f"bedrock:{JUDGE}",)),
        (openai, "", ("openai:gpt-4o-mini",)),
        (
            {**bedrock, **jurors, **local},
            f"bedrock:{JUDGE},bedrock:us.amazon.nova-pro-v1:0,bedrock:mistral.large-v1:0,"
            "openai:qwen2.5-7b-instruct,openai:gpt-4o",
            (
                f"bedrock:{JUDGE}",
                "bedrock:us.amazon.nova-pro-v1:0",
                "bedrock:mistral.large-v1:0",
                "openai:qwen2.5-7b-instruct",
                "openai:gpt-4o",
            ),
        ),
        (
            {**openai, **jurors},
            "openai:gpt-4o-mini,bedrock:us.amazon.nova-pro-v1:0,bedrock:mistral.large-v1:0",
            (
                "openai:gpt-4o-mini",
                "bedrock:us.amazon.nova-pro-v1:0",
                "bedrock:mistral.large-v1:0",
            ),
        ),
        (
            {**bedrock, **local},
            f"bedrock:{JUDGE},openai:qwen2.5-7b-instruct,openai:gpt-4o",
            (f"bedrock:{JUDGE}", "openai:qwen2.5-7b-instruct", "openai:gpt-4o"),
        ),
        # jurors without a judge: an empty first entry, which the reading skips
        (
            {**local},
            ",openai:qwen2.5-7b-instruct,openai:gpt-4o",
            ("openai:qwen2.5-7b-instruct", "openai:gpt-4o"),
        ),
    ]
    for parameters, expected, names in cases:
        deploy = Deploy(
            {**parameters, "JuryOpenAIEndpoints": '{"openai:x": {"base_url": "http://h"}}'}
        )
        for name in ("evaluate", "score_chunks", "estimate_evaluation", "specify_questions"):
            variables = deploy.environment(name)
            assert variables["EVALSVC_JUDGES"] == expected, (name, parameters)
            assert variables["EVALSVC_JUDGE_ENDPOINTS"] == '{"openai:x": {"base_url": "http://h"}}'
            settings = Settings(llm=variables["EVALSVC_LLM"], judges=variables["EVALSVC_JUDGES"])
            assert judge_names(settings) == names, (name, parameters)
