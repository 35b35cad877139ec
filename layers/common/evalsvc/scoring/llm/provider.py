"""The contract between the LLM client (client.py) and each transport (openai.py, bedrock.py):
what a transport is (Provider), what one call gives (Answer), how a call fails (RetryableError,
ShapeRefused, InvalidAnswer); the reading every transport shares of what a model said
(json_objects, and the token counts it reported); and the choice of transport that EVALSVC_LLM
names, whose module is imported only then.

Model text is hostile: answers are read with bounds (size, nesting) and lone surrogates in them
become U+FFFD, so whatever is stored from them can be stored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from evalsvc.core.errors import ProviderUnavailable
from evalsvc.core.settings import Settings
from evalsvc.scoring.bounded_json import MAX_DEPTH, nesting_depth
from evalsvc.scoring.text import storable


class RetryableError(Exception):
    """Throttling, a 5xx, or a timeout: worth asking again after a pause (at least
    `retry_after` seconds when the provider said so). `billed`: the model may have done the
    work all the same (the answer timed out after the request was sent)."""

    def __init__(
        self, message: str, retry_after: float | None = None, *, billed: bool = False
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.billed = billed


class ShapeRefused(Exception):
    """The provider refused the shape of the request (how structured output was asked for),
    and the transport has moved to its next mode: worth asking again at once, never in the
    same mode."""


class InvalidAnswer(ValueError):
    """The model's answer is not what the schema asked for; `tokens` (input, output) when the
    provider said what it used on it."""

    def __init__(self, message: str, tokens: tuple[int, int] | None = None) -> None:
        super().__init__(message)
        self.tokens = tokens


# The most tokens a provider's count is believed for, per call (far above any context window).
MAX_REPORTED_TOKENS = 100_000_000


def reported_tokens(input_tokens: Any, output_tokens: Any) -> tuple[int, int] | None:
    """The provider's counts when both are sane whole numbers; None otherwise."""
    counts = (input_tokens, output_tokens)
    if all(
        isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= MAX_REPORTED_TOKENS
        for c in counts
    ):
        return int(input_tokens), int(output_tokens)
    return None


@dataclass(slots=True)
class Answer:
    """What one call gave: the JSON values of the answer (most likely first), and the tokens
    (input, output) the provider said it used, or None when it did not say."""

    values: list[Any]
    tokens: tuple[int, int] | None


class Provider(Protocol):
    name: str

    def complete(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        max_tokens: int,
        timeout: float,
        *,
        temperature: float = 0.0,
    ) -> Answer:
        """The answer, within `timeout` seconds; at most `max_tokens` of it, sampled at
        `temperature` (0, greedy, unless an earlier answer was unusable)."""
        ...


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
# An answer holds one object, perhaps with text or a fence around it: a few starts suffice.
MAX_OBJECT_STARTS = 32


def clean(value: Any) -> Any:
    """A decoded answer with every string made storable (a lone surrogate becomes U+FFFD)."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, list):
        return [clean(item) for item in value]
    if isinstance(value, dict):
        return {clean(key): clean(item) for key, item in value.items()}
    return value


def json_objects(text: str) -> list[Any]:
    """Every JSON object in `text`: inside code fences first, then anywhere, in order. Text
    nested deeper than bounded_json reads yields none; strings are made storable. A raw
    control character (a line break) inside a string is taken as itself: small models write
    them, and grammar-constrained servers let them through."""
    if nesting_depth(text) > MAX_DEPTH:
        return []
    decoder = json.JSONDecoder(strict=False)
    found: list[Any] = []
    for source in [*_FENCE.findall(text), text]:
        for start, match in enumerate(re.finditer(r"\{", source)):
            if start == MAX_OBJECT_STARTS:
                break
            try:
                value, _ = decoder.raw_decode(source, match.start())
            except ValueError:  # not JSON there, or a number too long to read
                continue
            found.append(clean(value))
    return found


def schema_problem(schema: dict[str, Any], value: Any) -> str | None:
    """Where and why `value` breaks `schema` (scoring.json_schema: Draft 2020-12, bounded
    work), as a sentence; None when it conforms. Whatever mode or transport gave the answer,
    only what matches the schema the request named is used."""
    from evalsvc.scoring.json_schema import TooMuchWork, compile_schema

    try:
        return compile_schema(json.dumps(schema, sort_keys=True)).first_error(value)
    except (TooMuchWork, RecursionError) as exc:
        return f"it could not be checked ({exc.__class__.__name__})"


def model_spec(setting: str, spec: str) -> tuple[str, str] | None:
    """(kind, model) of a model setting's value (`openai:<model>` or `bedrock:<model-id>`);
    None when it is empty; ProviderUnavailable naming the setting when it names no model or
    no known kind."""
    spec = spec.strip()
    if not spec:
        return None
    kind, _, model = spec.partition(":")
    if not model:
        raise ProviderUnavailable(
            f"{setting}={spec!r} names no model: use bedrock:<model-id> or openai:<model>"
        )
    if kind not in ("openai", "bedrock"):
        raise ProviderUnavailable(
            f"{setting}={spec!r} is not understood: use bedrock:<model-id> or openai:<model>"
        )
    return kind, model


def json_object(raw: bytes | str) -> dict[str, Any]:
    """A response body that must be one JSON object; InvalidAnswer otherwise."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InvalidAnswer("the response is not JSON") from exc
    if not isinstance(document, dict):
        raise InvalidAnswer("the response is not a JSON object")
    return document


def provider_from_settings(settings: Settings) -> Provider | None:
    parsed = model_spec("EVALSVC_LLM", settings.llm)
    if parsed is None:
        return None
    kind, model = parsed
    if kind == "openai":
        from evalsvc.scoring.llm.credentials import key_source
        from evalsvc.scoring.llm.openai import OpenAIProvider

        return OpenAIProvider(
            model, settings.openai_base_url, key_source(settings), settings.llm_structured
        )
    from evalsvc.scoring.llm.bedrock import BedrockProvider

    return BedrockProvider.for_region(model, settings.region)
