"""`check:json_schema:<schema>`: JSON Schema Draft 2020-12 by the `jsonschema` library, made safe
for tenant schemas and model output.

- Imported on first use: only a metrics set with a schema check, or an LLM answer (checked
  against the schema its request named, scoring/llm/client.py), pays for the import.
- References resolve inside the schema (and to the published meta-schemas) only: nothing is
  ever fetched, and a `$ref` that does not resolve is refused when the metric is created.
- `pattern` and `patternProperties` are matched by RE2 (scoring.patterns), never by Python's
  backtracking `re`: the library's own calls are pointed at it.
- `uniqueItems` and the `unevaluated*` keywords, quadratic in the library, are linear here.
- One validation may apply at most MAX_STEPS keywords and run at most MAX_SECONDS: a schema
  whose combinators multiply (`anyOf` under `anyOf` under `items`…) against a large output
  ends as a failing score that says so, not as a hang.
- Validators are compiled once per schema text and cached.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from evalsvc.scoring.patterns import PatternError, compile_pattern

# Keyword applications in one validation (about 1 s of jsonschema on this project's 2-core
# machine: a step costs 7-15 us), and a wall-clock guard above it for what steps do not count.
MAX_STEPS = 100_000
MAX_SECONDS = 2.0
# Bytes a pattern search may scan for one step.
BYTES_PER_STEP = 256
# The reasons name at most this much of the library's message.
MESSAGE_CHARS = 300


class SchemaError(ValueError):
    """The schema cannot be used; the message names the place and the problem."""


class TooMuchWork(Exception):
    """Validation went past its step or time budget."""


class _Meter(threading.local):
    steps_left = 0
    deadline = 0.0

    def spend(self, steps: int) -> None:
        self.steps_left -= steps
        if self.steps_left < 0:
            raise TooMuchWork(f"more than {MAX_STEPS:,} schema keyword applications")
        if time.monotonic() > self.deadline:
            raise TooMuchWork(f"more than {MAX_SECONDS:g} s")


_meter = _Meter()


class _RE2Search:
    """Stands in for the `re` module inside jsonschema, whose only use of it is
    `re.search(pattern, text)`: the tenant's pattern is matched by RE2, and pays for its bytes."""

    @staticmethod
    def search(pattern: str, text: str) -> bool:
        _meter.spend(1 + len(text) // BYTES_PER_STEP)
        return compile_pattern(pattern).search(text)


def _canonical(value: Any) -> Any:
    """A hashable form equal exactly when JSON Schema calls two values equal (1 == 1.0, but
    true != 1; objects by their members)."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", int(value) if isinstance(value, float) and value.is_integer() else value)
    if isinstance(value, list):
        return ("a", tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, _canonical(item)) for key, item in value.items()))
    return ("v", value)


@lru_cache(maxsize=1)
def _validator_class() -> Any:
    """Draft 2020-12 with the keywords metered and the quadratic ones made linear."""
    import jsonschema
    from jsonschema import _keywords, _utils
    from jsonschema.exceptions import ValidationError

    # The library calls `re.search` from these two modules (pattern, patternProperties,
    # additionalProperties, unevaluatedProperties): RE2 answers instead.
    _keywords.re = _RE2Search
    _utils.re = _RE2Search

    def unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
        if unique and validator.is_type(instance, "array"):
            _meter.spend(1 + len(instance) // 64)
            if len({_canonical(item) for item in instance}) != len(instance):
                yield ValidationError("the array has items that are not unique")

    def unevaluated_items(
        validator: Any, unevaluated: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "array"):
            return
        seen = set(_utils.find_evaluated_item_indexes_by_schema(validator, instance, schema))
        extra = [item for index, item in enumerate(instance) if index not in seen]
        if extra:
            names, verb = _utils.extras_msg(extra)
            yield ValidationError(f"Unevaluated items are not allowed ({names} {verb} unexpected)")

    def unevaluated_properties(
        validator: Any, unevaluated: Any, instance: Any, schema: Any
    ) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        seen = set(_utils.find_evaluated_property_keys_by_schema(validator, instance, schema))
        extra = [
            key
            for key in instance
            if key not in seen
            and any(
                True
                for _ in validator.descend(instance[key], unevaluated, path=key, schema_path=key)
            )
        ]
        if extra:
            names, verb = _utils.extras_msg(extra)
            yield ValidationError(
                f"Unevaluated properties are not allowed ({names} {verb} unexpected)"
            )

    def metered(keyword: Callable[..., Any]) -> Callable[..., Iterator[Any]]:
        def apply(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
            _meter.spend(1)
            errors = keyword(validator, value, instance, schema)
            if errors is not None:
                yield from errors

        return apply

    base = jsonschema.Draft202012Validator
    keywords = {
        **base.VALIDATORS,
        "uniqueItems": unique_items,
        "unevaluatedItems": unevaluated_items,
        "unevaluatedProperties": unevaluated_properties,
    }
    return jsonschema.validators.extend(base, {name: metered(fn) for name, fn in keywords.items()})


def _registry() -> Any:
    """The published meta-schemas, and nothing that could be fetched."""
    from jsonschema_specifications import REGISTRY

    return REGISTRY


_DRAFT_2020_12 = frozenset(
    {
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2020-12/schema#",
    }
)


def _check_subschema(resolver: Any, schema: dict[str, Any]) -> None:
    """One subschema: its dialect, its patterns (RE2), its references (resolvable here)."""
    import referencing.exceptions

    dialect = schema.get("$schema")
    if dialect is not None and dialect not in _DRAFT_2020_12:
        raise SchemaError(
            f"$schema {dialect!r} is not supported: schemas are read as Draft 2020-12 "
            "(https://json-schema.org/draft/2020-12/schema)"
        )
    patterns = [("pattern", schema["pattern"])] if isinstance(schema.get("pattern"), str) else []
    if isinstance(schema.get("patternProperties"), dict):
        patterns.extend(("patternProperties", p) for p in schema["patternProperties"])
    for keyword, pattern in patterns:
        try:
            compile_pattern(pattern)
        except PatternError as exc:
            raise SchemaError(f"{keyword} {pattern!r} cannot be used: {exc}") from exc
    for keyword in ("$ref", "$dynamicRef"):
        reference = schema.get(keyword)
        if isinstance(reference, str):
            try:
                resolver.lookup(reference)
            except referencing.exceptions.Unresolvable as exc:
                raise SchemaError(
                    f"{keyword} {reference!r} does not resolve: references must point inside "
                    "the schema (e.g. #/$defs/name); nothing is fetched"
                ) from exc


def _check_subschemas(schema: Any) -> None:
    """Every subschema (the library's own traversal: not `enum` or `const` data) checked."""
    from referencing.jsonschema import DRAFT202012

    root = DRAFT202012.create_resource(schema)
    pending = [(_registry().resolver_with_root(root), root)]
    while pending:
        resolver, resource = pending.pop()
        if isinstance(resource.contents, dict):
            _check_subschema(resolver, resource.contents)
        pending.extend((resolver.in_subresource(sub), sub) for sub in resource.subresources())


def _start_metering() -> None:
    _meter.steps_left = MAX_STEPS
    _meter.deadline = time.monotonic() + MAX_SECONDS


def _describe(error: Any) -> str:
    """The library's message, cut short, with the likeliest cause when it is an anyOf/oneOf."""
    from jsonschema.exceptions import best_match

    message = str(error.message)
    if len(message) > MESSAGE_CHARS:
        message = message[: MESSAGE_CHARS - 3] + "..."
    if error.context:
        cause = best_match(error.context)
        if cause is not None:
            message += f" (closest: {_describe(cause)})"
    return message


class CompiledSchema:
    """A checked schema, ready to validate instances."""

    def __init__(self, validator: Any) -> None:
        self._validator = validator

    def first_error(self, instance: Any) -> str | None:
        """Where and why `instance` breaks the schema, as a sentence; None if it conforms.
        TooMuchWork when validation passes its budget; RecursionError when the schema refers to
        itself without end."""
        _start_metering()
        first = next(self._validator.iter_errors(instance), None)
        if first is None:
            return None
        # The first error in the document's order.
        return f"{first.json_path}: {_describe(first)}"


@lru_cache(maxsize=1)
def _warm_meta_schema() -> None:
    """Check one empty schema against the meta-schema, once per process, before any budget
    starts: the first check reads the published meta-schemas and resolves their references,
    the library's one-off work (seconds on a loaded or cold machine), which a tenant's schema
    must not be charged for."""
    cls = _validator_class()
    _meter.steps_left = MAX_STEPS
    _meter.deadline = float("inf")  # no clock: the schema is the service's own, and fixed
    for _ in cls(cls.META_SCHEMA, registry=_registry()).iter_errors({}):
        pass


@lru_cache(maxsize=128)
def compile_schema(text: str) -> CompiledSchema:
    """The schema written as JSON `text`, checked against the Draft 2020-12 meta-schema, its
    patterns and references; SchemaError saying what is wrong."""
    from jsonschema.exceptions import best_match

    from evalsvc.scoring.bounded_json import NotJson, loads

    try:
        schema = loads(text)
    except NotJson as exc:
        raise SchemaError(f"the schema is not valid JSON: {exc}") from exc
    if not isinstance(schema, dict | bool):
        raise SchemaError("the schema must be a JSON object (or true or false)")
    cls = _validator_class()
    _warm_meta_schema()
    _start_metering()
    problem = best_match(cls(cls.META_SCHEMA, registry=_registry()).iter_errors(schema))
    if problem is not None:
        where = problem.json_path.replace("$", "schema", 1)
        raise SchemaError(f"{where}: {_describe(problem)}")
    _check_subschemas(schema)
    return CompiledSchema(cls(schema, registry=_registry()))
