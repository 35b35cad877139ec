"""A small JSON Schema validator for `check:json_schema:<schema>`: the keywords people use to
describe an LLM's structured output, no dependency, messages that name the failing place.

Supported: type, enum, const, properties, required, additionalProperties, items, minItems,
maxItems, uniqueItems, minLength, maxLength, pattern, minimum, maximum, exclusiveMinimum,
exclusiveMaximum, multipleOf, anyOf, allOf, oneOf, not. Other keywords are ignored.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}
_SUBSCHEMA_LISTS = ("anyOf", "allOf", "oneOf")


class SchemaError(ValueError):
    """The schema itself is malformed."""


def check_schema(schema: Any, where: str = "schema") -> None:
    """Raise SchemaError unless `schema` is a schema this validator can apply."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise SchemaError(f"{where} must be a JSON object")
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        bad = [k for k in names if k not in _TYPES]
        if bad or not names:
            raise SchemaError(f"{where}.type must be one of {sorted(_TYPES)}, not {kinds!r}")
    for key in ("properties",):
        if key in schema:
            if not isinstance(schema[key], dict):
                raise SchemaError(f"{where}.{key} must be an object")
            for name, sub in schema[key].items():
                check_schema(sub, f"{where}.{key}.{name}")
    for key in ("items", "additionalProperties", "not"):
        if key in schema:
            check_schema(schema[key], f"{where}.{key}")
    for key in _SUBSCHEMA_LISTS:
        if key in schema:
            if not isinstance(schema[key], list) or not schema[key]:
                raise SchemaError(f"{where}.{key} must be a non-empty array of schemas")
            for i, sub in enumerate(schema[key]):
                check_schema(sub, f"{where}.{key}[{i}]")
    if "required" in schema and not (
        isinstance(schema["required"], list) and all(isinstance(r, str) for r in schema["required"])
    ):
        raise SchemaError(f"{where}.required must be an array of strings")
    if "pattern" in schema:
        try:
            re.compile(schema["pattern"])
        except (re.error, TypeError) as exc:
            raise SchemaError(f"{where}.pattern is not a valid regular expression: {exc}") from exc
    for key in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
        if key in schema and not _is_number(schema[key]):
            raise SchemaError(f"{where}.{key} must be a number")
    for key in ("minLength", "maxLength", "minItems", "maxItems"):
        if key in schema and not (_is_integer(schema[key]) and schema[key] >= 0):
            raise SchemaError(f"{where}.{key} must be a non-negative integer")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return _is_number(value) and float(value).is_integer()


def _type_matches(value: Any, kind: str) -> bool:
    tests: dict[str, Callable[[Any], bool]] = {
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": _is_integer,
        "number": _is_number,
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }
    return tests[kind](value)


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def first_error(instance: Any, schema: Any, where: str = "$") -> str | None:
    """The first place where `instance` breaks `schema`, as a sentence; None if it conforms."""
    if schema is True:
        return None
    if schema is False:
        return f"{where} is not allowed"
    kinds = schema.get("type")
    if kinds is not None:
        names = kinds if isinstance(kinds, list) else [kinds]
        if not any(_type_matches(instance, k) for k in names):
            return f"{where} should be {' or '.join(names)}, not {_show(instance)}"
    if "const" in schema and instance != schema["const"]:
        return f"{where} should be {_show(schema['const'])}"
    if "enum" in schema and instance not in schema["enum"]:
        return f"{where} should be one of {_show(schema['enum'])}, not {_show(instance)}"
    if isinstance(instance, str):
        if "minLength" in schema and len(instance) < schema["minLength"]:
            return f"{where} is shorter than {schema['minLength']} characters"
        if "maxLength" in schema and len(instance) > schema["maxLength"]:
            return f"{where} is longer than {schema['maxLength']} characters"
        if "pattern" in schema and not re.search(schema["pattern"], instance):
            return f"{where} does not match {schema['pattern']!r}"
    if _is_number(instance):
        if "minimum" in schema and instance < schema["minimum"]:
            return f"{where} is below the minimum {schema['minimum']}"
        if "maximum" in schema and instance > schema["maximum"]:
            return f"{where} is above the maximum {schema['maximum']}"
        if "exclusiveMinimum" in schema and instance <= schema["exclusiveMinimum"]:
            return f"{where} should be above {schema['exclusiveMinimum']}"
        if "exclusiveMaximum" in schema and instance >= schema["exclusiveMaximum"]:
            return f"{where} should be below {schema['exclusiveMaximum']}"
        if (
            "multipleOf" in schema
            and schema["multipleOf"]
            and not float(instance / schema["multipleOf"]).is_integer()
        ):
            return f"{where} is not a multiple of {schema['multipleOf']}"
    if isinstance(instance, list):
        if "minItems" in schema and len(instance) < schema["minItems"]:
            return f"{where} has fewer than {schema['minItems']} items"
        if "maxItems" in schema and len(instance) > schema["maxItems"]:
            return f"{where} has more than {schema['maxItems']} items"
        if schema.get("uniqueItems") and len(
            {json.dumps(i, sort_keys=True) for i in instance}
        ) != len(instance):
            return f"{where} has duplicate items"
        if "items" in schema:
            for i, item in enumerate(instance):
                error = first_error(item, schema["items"], f"{where}[{i}]")
                if error:
                    return error
    if isinstance(instance, dict):
        for name in schema.get("required", []):
            if name not in instance:
                return f"{where} is missing the required property {name!r}"
        properties = schema.get("properties", {})
        for name, value in instance.items():
            if name in properties:
                error = first_error(value, properties[name], f"{where}.{name}")
            elif "additionalProperties" in schema:
                error = first_error(value, schema["additionalProperties"], f"{where}.{name}")
                if error and schema["additionalProperties"] is False:
                    error = f"{where} has a property {name!r} the schema does not allow"
            else:
                error = None
            if error:
                return error
    if "allOf" in schema:
        for sub in schema["allOf"]:
            error = first_error(instance, sub, where)
            if error:
                return error
    if "anyOf" in schema and all(first_error(instance, sub, where) for sub in schema["anyOf"]):
        return f"{where} matches none of the anyOf schemas"
    if "oneOf" in schema:
        matches = sum(1 for sub in schema["oneOf"] if first_error(instance, sub, where) is None)
        if matches != 1:
            return f"{where} matches {matches} of the oneOf schemas, not exactly one"
    if "not" in schema and first_error(instance, schema["not"], where) is None:
        return f"{where} matches a schema it must not match"
    return None
