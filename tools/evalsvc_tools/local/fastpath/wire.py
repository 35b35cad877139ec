"""The JSON protocol, both ways (fastpath/__init__.py: "Responses", "Requests"): a DynamoDB
result is written as JSON directly, not through moto's shape-driven serializer, and an item
operation's JSON body is read with `json.loads`, not through its shape-driven parser; a
result's items become plain dicts without moto's generic walk for values that are plain
already."""

from __future__ import annotations

import base64
import datetime
import json
from typing import Any

from evalsvc_tools.local.journal import binary_values

# The operations whose results hold only JSON-ready values (besides binary attribute values).
FAST_RESPONSES = frozenset(
    {
        "GetItem",
        "BatchGetItem",
        "Query",
        "Scan",
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "BatchWriteItem",
        "TransactGetItems",
        "TransactWriteItems",
    }
)


def _default(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    if isinstance(value, datetime.datetime):
        return value.timestamp()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def dump_result(result: dict[str, Any]) -> str:
    """A DynamoDB result (from moto's handler) as the JSON protocol's body."""
    return json.dumps(result, default=_default, separators=(",", ":"))


def patches() -> list[tuple[Any, str, Any]]:
    """The JSON protocol's patches of moto (which `fastpath._patch` has checked)."""
    from moto.dynamodb import responses
    from moto.dynamodb.models import utilities
    from moto.dynamodb.models.dynamo_type import DynamoType, LimitedSizeDict
    from moto.dynamodb.responses import DynamoHandler

    serialized = DynamoHandler.serialized

    def fast_serialized(self: Any, action_result: Any) -> Any:
        result = action_result.result
        if type(result) is dict and self._get_action() in FAST_RESPONSES:
            headers = {"Content-Type": "application/x-amz-json-1.0", **self.response_headers}
            return 200, headers, dump_result(result)
        return serialized(self, action_result)

    to_dict = utilities.dynamo_to_dict

    def plain_dict(obj: Any) -> Any:
        # What dynamo_to_dict makes of a result's items, without its generic walk for the
        # values that are plain already (strings, numbers, booleans, null).
        if type(obj) is DynamoType:
            value = obj.value
            if (type(value) is str and obj.type != "B") or type(value) is bool:
                return {obj.type: value}
            return to_dict(obj)
        if type(obj) in (dict, LimitedSizeDict):
            return {k: plain_dict(v) for k, v in obj.items()}
        if type(obj) is list:
            return [plain_dict(v) for v in obj]
        return to_dict(obj)

    parse_parameters = DynamoHandler.parse_parameters

    def json_parameters(self: Any, request: Any) -> None:
        if self._get_action() not in FAST_RESPONSES:
            parse_parameters(self, request)
            return
        body = request.data
        try:
            params = json.loads(body) if body else {}
        except ValueError:
            params = None
        if not isinstance(params, dict):
            parse_parameters(self, request)  # not a JSON object: moto says what is wrong
            return
        self.params = binary_values(params) if b'"B' in body else params

    return [
        (DynamoHandler, "serialized", fast_serialized),
        (DynamoHandler, "parse_parameters", json_parameters),
        (utilities, "dynamo_to_dict", plain_dict),
        (responses, "dynamo_to_dict", plain_dict),
    ]
