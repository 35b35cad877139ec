"""E13: the judges a deployment may use as a jury, and the transport of each.

`EVALSVC_JUDGES` names them, comma-separated, each as `EVALSVC_LLM` names the judge
(`bedrock:<model-id>` or `openai:<model>`); unset, the judge `EVALSVC_LLM` names is the only
one (so no jury can be formed). A Bedrock judge is asked in the deployment's region. An
OpenAI-compatible judge is asked at `EVALSVC_OPENAI_BASE_URL` with the judge's key, unless
`EVALSVC_JUDGE_ENDPOINTS` gives it its own server:

    {"openai:qwen2.5-7b": {"base_url": "http://10.0.0.5:8080/v1",
                           "api_key_secret_arn": "arn:aws:secretsmanager:...:secret:qwen"},
     "openai:gpt-4o-mini": {"base_url": "https://api.openai.com/v1",
                            "api_key_secret_arn": "openai-key", "structured": "json_schema"}}

where `api_key` may stand for the secret when running locally (never in a deployment: an
environment holds no secret), and `structured` pins how the server is asked for JSON (unset:
`EVALSVC_LLM_STRUCTURED`). Structured output is negotiated per server and model
(structured.ENDPOINTS), so one juror's server refusing `json_schema` changes nothing for the
others.

A setting that cannot be read is ProviderUnavailable naming it (503: the judges are
unavailable), never a guess.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from urllib.parse import urlsplit

from evalsvc.core.errors import ProviderUnavailable
from evalsvc.core.settings import Settings
from evalsvc.scoring.llm.provider import Provider, model_spec, provider_from_settings

JUDGES_SETTING = "EVALSVC_JUDGES"
ENDPOINTS_SETTING = "EVALSVC_JUDGE_ENDPOINTS"
# The fields a judge's endpoint may have.
_ENDPOINT_FIELDS = frozenset({"base_url", "api_key", "api_key_secret_arn", "structured"})


@dataclass(frozen=True, slots=True)
class JudgeEndpoint:
    """Where an OpenAI-compatible judge is served, and with which key ("" fields: the
    judge's own settings)."""

    base_url: str
    api_key: str = ""
    api_key_secret_arn: str = ""
    structured: str = ""


def judge_names(settings: Settings) -> tuple[str, ...]:
    """The judges a metrics set may name, in the order configured (each once)."""
    return _names(settings.judges, settings.llm)


@cache
def _names(judges: str, llm: str) -> tuple[str, ...]:
    if not judges.strip():
        return (llm.strip(),) if llm.strip() else ()
    names: list[str] = []
    for raw in judges.split(","):
        name = raw.strip()
        if not name:
            continue
        parsed = model_spec(JUDGES_SETTING, name)
        assert parsed is not None
        if name not in names:
            names.append(name)
    return tuple(names)


def unusable(name: str, settings: Settings) -> str | None:
    """Why judge `name` cannot be on a jury (not among EVALSVC_JUDGES, or without a price, so
    that the jury's cost could not be bounded); None when it can."""
    from evalsvc.spending.prices import price_of

    configured = judge_names(settings)
    if name not in configured:
        known = ", ".join(configured) if configured else "none (EVALSVC_JUDGES is unset)"
        return f"{name[:80]!r} is not a judge this service may use; configured: {known}"
    if price_of(name) is None:
        return (
            f"{name!r} has no price, so the jury's cost could not be bounded: its operator gives "
            "it one in EVALSVC_PRICES"
        )
    return None


def endpoints(settings: Settings) -> dict[str, JudgeEndpoint]:
    """The servers EVALSVC_JUDGE_ENDPOINTS gives, by judge name."""
    return _endpoints(settings.judge_endpoints)


@cache
def _endpoints(text: str) -> dict[str, JudgeEndpoint]:
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        raise ProviderUnavailable(
            f"{ENDPOINTS_SETTING} is not JSON: write "
            '{"openai:<model>": {"base_url": "https://...", "api_key_secret_arn": "..."}}'
        ) from None
    if not isinstance(document, dict):
        raise ProviderUnavailable(
            f"{ENDPOINTS_SETTING} must be a JSON object of judge names, like "
            '{"openai:<model>": {"base_url": "https://...", "api_key_secret_arn": "..."}}'
        )
    found: dict[str, JudgeEndpoint] = {}
    for name, entry in document.items():
        where = f"{ENDPOINTS_SETTING}[{name!r}]"
        if not name.startswith("openai:") or not name[len("openai:") :].strip():
            raise ProviderUnavailable(
                f"{where}: only an OpenAI-compatible judge (openai:<model>) has an endpoint"
            )
        if not isinstance(entry, dict) or not set(entry) <= _ENDPOINT_FIELDS:
            raise ProviderUnavailable(
                f"{where} must be an object with base_url and, optionally, api_key_secret_arn "
                "(or api_key locally) and structured"
            )
        if not all(isinstance(value, str) for value in entry.values()):
            raise ProviderUnavailable(f"{where}: every field is a string")
        base_url = entry.get("base_url", "").strip()
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderUnavailable(f"{where}: base_url {base_url!r} is not an http(s) URL")
        if entry.get("api_key") and entry.get("api_key_secret_arn"):
            raise ProviderUnavailable(
                f"{where} has both api_key and api_key_secret_arn: keep the secret's"
            )
        found[name] = JudgeEndpoint(
            base_url,
            entry.get("api_key", ""),
            entry.get("api_key_secret_arn", "").strip(),
            entry.get("structured", "").strip(),
        )
    return found


def provider_for(name: str, settings: Settings) -> Provider:
    """The transport asking judge `name` (one of judge_names)."""
    parsed = model_spec(JUDGES_SETTING, name)
    assert parsed is not None
    _, model = parsed
    endpoint = endpoints(settings).get(name)
    if endpoint is None:
        # As EVALSVC_LLM would ask it: the judge's base URL and key, the deployment's region.
        provider = provider_from_settings(settings.model_copy(update={"llm": name}))
        assert provider is not None
        return provider
    from evalsvc.scoring.llm.credentials import KeySource, PlainKey, SecretKey
    from evalsvc.scoring.llm.openai import OpenAIProvider

    key: KeySource = (
        SecretKey(
            endpoint.api_key_secret_arn,
            settings.region,
            setting=f"{ENDPOINTS_SETTING}[{name!r}].api_key_secret_arn",
        )
        if endpoint.api_key_secret_arn
        else PlainKey(endpoint.api_key)
    )
    if isinstance(key, PlainKey):
        key.setting = f"{ENDPOINTS_SETTING}[{name!r}].api_key"
    return OpenAIProvider(
        model,
        endpoint.base_url,
        key,
        endpoint.structured or settings.llm_structured,
    )
