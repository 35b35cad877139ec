"""What template.yaml grants each function: its policy statements, inline or in the managed
policies it lists, read as data."""

from __future__ import annotations

import re
from typing import Any

from evalsvc_tools.local.tables import load_template

NO_VALUE = {"Ref": "AWS::NoValue"}


def functions(template: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Every function resource by its code directory (functions/<name>/)."""
    template = template or load_template()
    return {
        resource["Properties"]["CodeUri"].strip("/").split("/")[-1]: resource
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def managed_policies(template: dict[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """The template's managed policies (one per access pattern) by logical id."""
    template = template or load_template()
    return {
        logical_id: resource
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::IAM::ManagedPolicy"
    }


def policy_documents(
    resource: dict[str, Any], template: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The documents whose statements the function is granted: its inline `Statement` entries
    and the managed policies it lists (`!Ref SomePolicy`). SAM's policy templates (SQS) are
    not among them: test_least_privilege checks those by name."""
    managed = managed_policies(template)
    documents: list[dict[str, Any]] = []
    for policy in resource["Properties"].get("Policies", []):
        if "Statement" in policy:
            documents.append(policy)
        elif "Ref" in policy:
            # a managed policy of this template, granted whatever the conditions (a policy
            # under a Condition, or listed under an !If, would need reading here)
            target = managed[policy["Ref"]]
            assert set(target) == {"Type", "Properties"}, (policy, sorted(target))
            documents.append(target["Properties"]["PolicyDocument"])
        else:
            ((kind, _),) = policy.items()
            assert kind.startswith("SQS"), f"a policy this module cannot read: {policy!r}"
    return documents


def statements(
    resource: dict[str, Any], template: dict[str, Any] | None = None
) -> list[tuple[str | None, dict[str, Any]]]:
    """The function's policy statements, inline or from the managed policies it lists, each
    with the condition it is granted under (an `!If [condition, statement, !Ref
    AWS::NoValue]`), or None when it always is."""
    found: list[tuple[str | None, dict[str, Any]]] = []
    for document in policy_documents(resource, template):
        for statement in document["Statement"]:
            if "Fn::If" in statement:
                condition, granted, otherwise = statement["Fn::If"]
                assert otherwise == NO_VALUE, statement
                found.append((condition, granted))
            else:
                found.append((None, statement))
    return found


def actions(statement: dict[str, Any]) -> list[str]:
    value = statement["Action"]
    return [value] if isinstance(value, str) else list(value)


def dynamodb_target(resource: Any) -> str:
    """`Table` for !GetAtt Table.Arn, `Table/index/name` for !Sub "${Table.Arn}/index/name",
    `Table/stream` for !GetAtt Table.StreamArn and !Sub "${Table.Arn}/stream/*" (its streams:
    a table has one at a time)."""
    if isinstance(resource, dict) and "Fn::GetAtt" in resource:
        attribute = resource["Fn::GetAtt"]
        if isinstance(attribute, list):
            name, field = attribute
        else:
            name, _, field = str(attribute).partition(".")
        assert field in ("Arn", "StreamArn"), resource
        return f"{name}/stream" if field == "StreamArn" else str(name)
    if isinstance(resource, dict) and "Fn::Sub" in resource:
        text = str(resource["Fn::Sub"])
        if text.endswith(".Arn}/stream/*"):
            assert text.startswith("${") and text.count("${") == 1, text
            return f"{text[2:].removesuffix('.Arn}/stream/*')}/stream"
        table, _, index = text.partition(".Arn}/index/")
        assert table.startswith("${") and index and "*" not in index, text
        return f"{table[2:]}/index/{index}"
    raise AssertionError(f"a DynamoDB grant on {resource!r}: name one table or index")


def dynamodb_grants(
    resource: dict[str, Any], template: dict[str, Any] | None = None
) -> dict[str, set[str]]:
    """Table (or table/index/name) -> the DynamoDB actions granted on it, without the prefix."""
    grants: dict[str, set[str]] = {}
    for condition, statement in statements(resource, template):
        names = actions(statement)
        if not any(name.startswith("dynamodb:") for name in names):
            continue
        assert condition is None and statement["Effect"] == "Allow", statement
        assert all(name.startswith("dynamodb:") for name in names), statement
        targets = statement["Resource"]
        for target in targets if isinstance(targets, list) else [targets]:
            grants.setdefault(dynamodb_target(target), set()).update(
                name.removeprefix("dynamodb:") for name in names
            )
    return grants


# ---- the template resolved for given parameters -------------------------------------------
# What CloudFormation would make of an intrinsic for a deploy with these parameters: enough of
# it (Ref, the condition functions, Fn::If, Join, Split, Select, Sub) to read a function's
# environment and grants as they would be, AWS::NoValue dropped as CloudFormation drops it.
# A resource's Ref or GetAtt stands for itself ("<Logical.Attribute>").

PSEUDO = {"AWS::Partition": "aws", "AWS::Region": "us-east-1", "AWS::AccountId": "123456789012"}


class _Gone:
    """AWS::NoValue: removed from the list or object holding it."""


GONE = _Gone()


class Deploy:
    """The template as deployed with `parameters` (the others at their defaults)."""

    def __init__(self, parameters: dict[str, str], template: dict[str, Any] | None = None) -> None:
        self.template = template or load_template()
        declared = self.template["Parameters"]
        assert set(parameters) <= set(declared), sorted(set(parameters) - set(declared))
        self.values: dict[str, Any] = {}
        for name, parameter in declared.items():
            value = str(parameters.get(name, parameter.get("Default", "")))
            if parameter["Type"] == "CommaDelimitedList":
                self.values[name] = [item.strip() for item in value.split(",")]
            else:
                self.values[name] = value
        self._conditions: dict[str, bool] = {}

    def condition(self, name: str) -> bool:
        if name not in self._conditions:
            self._conditions[name] = bool(self.resolve(self.template["Conditions"][name]))
        return self._conditions[name]

    def _ref(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        if name in PSEUDO:
            return PSEUDO[name]
        if name == "AWS::NoValue":
            return GONE
        assert name in self.template["Resources"], name
        return f"<{name}>"

    def _sub(self, text: str, variables: dict[str, Any]) -> str:
        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in variables:
                found = variables[name]
            elif "." in name:
                found = f"<{name}>"
            else:
                found = self._ref(name)
            assert isinstance(found, str), (name, found)
            return found

        return re.sub(r"\$\{([^}!]+)\}", value, text)

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            items = [self.resolve(item) for item in value]
            return [item for item in items if item is not GONE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((key, argument),) = value.items()
            if key == "Ref":
                return self._ref(argument)
            if key == "Fn::GetAtt":
                name = argument if isinstance(argument, str) else ".".join(argument)
                return f"<{name}>"
            if key == "Fn::If":
                condition, granted, otherwise = argument
                return self.resolve(granted if self.condition(condition) else otherwise)
            if key == "Fn::Condition":
                return self.condition(argument)
            if key == "Fn::Equals":
                left, right = (self.resolve(item) for item in argument)
                return bool(left == right)
            if key == "Fn::Not":
                return not self.resolve(argument[0])
            if key == "Fn::And":
                return all(self.resolve(item) for item in argument)
            if key == "Fn::Or":
                return any(self.resolve(item) for item in argument)
            if key == "Fn::Join":
                separator, items = argument
                return separator.join(self.resolve(items))
            if key == "Fn::Split":
                separator, text = argument
                return str(self.resolve(text)).split(separator)
            if key == "Fn::Select":
                index, items = argument
                return self.resolve(items)[int(self.resolve(index))]
            if key == "Fn::Sub":
                if isinstance(argument, str):
                    return self._sub(argument, {})
                text, variables = argument
                return self._sub(text, self.resolve(variables))
        resolved = {key: self.resolve(item) for key, item in value.items()}
        return {key: item for key, item in resolved.items() if item is not GONE}

    def environment(self, function: str) -> dict[str, Any]:
        """The function's own variables (Globals' apart), resolved."""
        resource = functions(self.template)[function]
        variables = resource["Properties"].get("Environment", {}).get("Variables", {})
        return dict(self.resolve(variables))

    def statements(self, function: str) -> list[dict[str, Any]]:
        """The statements the function is granted, resolved (those whose !If is false gone)."""
        resource = functions(self.template)[function]
        found: list[dict[str, Any]] = []
        for document in policy_documents(resource, self.template):
            found.extend(self.resolve(document["Statement"]))
        return found
