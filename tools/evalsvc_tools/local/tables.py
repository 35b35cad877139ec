"""DynamoDB tables built from template.yaml, so tests and the local server can never drift
from what is deployed."""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import yaml

_CREATE_KEYS = (
    "AttributeDefinitions",
    "KeySchema",
    "LocalSecondaryIndexes",
    "GlobalSecondaryIndexes",
    "BillingMode",
)


# libyaml's parser when PyYAML has it (a tenth of the time of the pure-Python one; the
# template is read at every start of the embedded store).
_SafeLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _CloudFormationLoader(_SafeLoader):  # type: ignore[misc]
    """Reads template.yaml, keeping short-form intrinsics (!Ref, !Sub…) as plain values."""


def _intrinsic(loader: Any, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node)
    else:
        value = loader.construct_mapping(node)
    return {f"Fn::{suffix}" if suffix != "Ref" else "Ref": value}


_CloudFormationLoader.add_multi_constructor("!", _intrinsic)


def find_template() -> Path:
    """template.yaml: $EVALSVC_TEMPLATE, else the repository this package was installed from,
    else the current directory or a parent of it."""
    explicit = os.environ.get("EVALSVC_TEMPLATE")
    if explicit:
        return Path(explicit)
    candidates = [Path(__file__).resolve().parents[3], *Path.cwd().resolve().parents]
    candidates.insert(1, Path.cwd().resolve())
    for directory in candidates:
        path = directory / "template.yaml"
        if path.is_file():
            return path
    raise FileNotFoundError("template.yaml not found; set EVALSVC_TEMPLATE to its path")


def load_template(path: Path | None = None) -> dict[str, Any]:
    """The template as data: a fresh copy each call (callers may change it), parsed once per
    version of the file (every test's tables are built from it: parsing took 64 ms a test)."""
    path = (path or find_template()).resolve()
    stat = path.stat()
    return dict(json.loads(_parsed(path, stat.st_mtime_ns, stat.st_size)))


@functools.lru_cache(maxsize=4)
def _parsed(path: Path, mtime_ns: int, size: int) -> str:
    """The template at `path` as it was at (`mtime_ns`, `size`), as JSON text."""
    with path.open() as handle:
        document: dict[str, Any] = yaml.load(handle, Loader=_CloudFormationLoader)  # noqa: S506
    return json.dumps(document)


def table_definitions(template: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """CreateTable arguments (without TableName) for every AWS::DynamoDB::Table, by logical id."""
    template = template or load_template()
    definitions: dict[str, dict[str, Any]] = {}
    for logical_id, resource in template.get("Resources", {}).items():
        if resource.get("Type") != "AWS::DynamoDB::Table":
            continue
        properties = resource.get("Properties", {})
        definitions[logical_id] = {k: properties[k] for k in _CREATE_KEYS if k in properties}
    return definitions


def table_env_vars(template: dict[str, Any] | None = None) -> dict[str, str]:
    """Environment variable → logical table id, as the functions' Globals declare them."""
    template = template or load_template()
    variables = (
        template.get("Globals", {}).get("Function", {}).get("Environment", {}).get("Variables", {})
    )
    tables = table_definitions(template)
    return {
        var: value["Ref"]
        for var, value in variables.items()
        if isinstance(value, dict) and value.get("Ref") in tables
    }


def create_tables(client: Any, prefix: str) -> dict[str, str]:
    """Create every table of the template (those missing) and return the environment the
    functions need to find them: env var → table name."""
    template = load_template()
    existing = set(client.list_tables().get("TableNames", []))
    for logical_id, definition in table_definitions(template).items():
        name = f"{prefix}-{logical_id}"
        if name not in existing:
            client.create_table(TableName=name, **definition)
    return {var: f"{prefix}-{logical_id}" for var, logical_id in table_env_vars(template).items()}


# ---- queues ------------------------------------------------------------------------------------


def _queue_attributes(properties: dict[str, Any], arns: dict[str, str]) -> dict[str, str]:
    attributes: dict[str, str] = {
        name: str(properties[name])
        for name in ("VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds")
        if name in properties
    }
    redrive = properties.get("RedrivePolicy")
    if redrive:
        target = redrive["deadLetterTargetArn"]
        # !GetAtt Queue.Arn (short form: "Queue.Arn") or Fn::GetAtt: [Queue, Arn]
        attribute = target["Fn::GetAtt"] if isinstance(target, dict) else str(target)
        logical_id = attribute[0] if isinstance(attribute, list) else attribute
        attributes["RedrivePolicy"] = json.dumps(
            {
                "deadLetterTargetArn": arns[logical_id.split(".")[0]],
                "maxReceiveCount": str(redrive["maxReceiveCount"]),
            }
        )
    return attributes


def create_queues(client: Any, prefix: str) -> dict[str, str]:
    """Create every SQS queue of the template (dead-letter queues first) and return their URLs
    by logical id."""
    template = load_template()
    queues = {
        logical_id: resource.get("Properties", {})
        for logical_id, resource in template.get("Resources", {}).items()
        if resource.get("Type") == "AWS::SQS::Queue"
    }
    urls: dict[str, str] = {}
    arns: dict[str, str] = {}
    for logical_id in sorted(queues, key=lambda q: "RedrivePolicy" in queues[q]):
        url = client.create_queue(
            QueueName=f"{prefix}-{logical_id}",
            Attributes=_queue_attributes(queues[logical_id], arns),
        )["QueueUrl"]
        urls[logical_id] = url
        arns[logical_id] = client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
    return urls


def queue_env_vars(template: dict[str, Any] | None = None) -> dict[str, str]:
    """Environment variable -> logical queue id, as the functions' environments name them."""
    template = template or load_template()
    resources = template.get("Resources", {})
    found: dict[str, str] = {}
    for resource in resources.values():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        variables = resource.get("Properties", {}).get("Environment", {}).get("Variables", {})
        for var, value in variables.items():
            ref = value.get("Ref") if isinstance(value, dict) else None
            if not isinstance(ref, str) or ref not in resources:
                continue
            if resources[ref].get("Type") == "AWS::SQS::Queue":
                found[var] = ref
    return found
