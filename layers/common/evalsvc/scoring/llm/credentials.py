"""The OpenAI-compatible transport's API key: from AWS Secrets Manager when
`OPENAI_API_KEY_SECRET_ARN` names a secret (deployed), from `OPENAI_API_KEY` otherwise (`make
run`, tests).

The secret is read through Powertools' parameters utility, cached for SECRET_MAX_AGE_SECONDS
(a rotated key is picked up within that time), and only when a call is about to be made: never
at import, never on a route that does not call a model, so a SnapStart snapshot never holds it.
Powertools' parameters module is imported on that first read too (routes without a model do
not pay for it at their start).

The secret is the key itself, or a JSON object with the key under "api_key" (what the console's
key/value editor writes). A secret that cannot be read is ProviderUnavailable (503: the judge
is unavailable) naming the setting and the reason; the key is never in a message or a log.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from evalsvc.errors import ProviderUnavailable
from evalsvc.observability import logger
from evalsvc.settings import Settings

SECRET_SETTING = "OPENAI_API_KEY_SECRET_ARN"  # noqa: S105 - the setting's name
PLAIN_SETTING = "OPENAI_API_KEY"
# How long a key read from the secret is used before it is read again.
SECRET_MAX_AGE_SECONDS = 300
# The JSON field holding the key, when the secret is a JSON object.
SECRET_FIELD = "api_key"  # noqa: S105 - a field's name

_lock = threading.Lock()
# region -> Powertools' SecretsProvider (its cache lives with it).
_providers: dict[str, Any] = {}

KeySource = Callable[[], str]


def key_source(settings: Settings) -> tuple[KeySource, str]:
    """What gives the key when a call is made, and the setting to name when it is refused. One
    transport (one request's, one chunk's) reads the secret once, on its first call, and keeps
    what that read gave: the key, or the failure, which its other calls then share rather than
    each asking Secrets Manager again."""
    secret = settings.openai_api_key_secret_arn.strip()
    if secret:
        return _SecretKey(secret, settings.region), SECRET_SETTING
    plain = settings.openai_api_key.get_secret_value()
    return (lambda: plain), PLAIN_SETTING


class _SecretKey:
    def __init__(self, secret: str, region: str) -> None:
        self.secret = secret
        self.region = region
        self._lock = threading.Lock()
        # The first read's outcome: the key, or why there is none.
        self._read: str | ProviderUnavailable | None = None

    def __call__(self) -> str:
        with self._lock:
            if self._read is None:
                try:
                    self._read = secret_key(self.secret, self.region)
                except ProviderUnavailable as exc:
                    self._read = exc
            if isinstance(self._read, ProviderUnavailable):
                raise ProviderUnavailable(self._read.message)
            return self._read


def _secrets(region: str) -> Any:
    provider = _providers.get(region)
    if provider is None:
        import boto3
        from aws_lambda_powertools.utilities.parameters import SecretsProvider

        provider = SecretsProvider(boto3_client=boto3.client("secretsmanager", region_name=region))
        _providers[region] = provider
    return provider


def secret_key(secret: str, region: str) -> str:
    """The key the secret holds (cached for SECRET_MAX_AGE_SECONDS); ProviderUnavailable when
    it cannot be read or holds no key."""
    from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

    # One read at a time: the judge's threads all wait for the first instead of each asking.
    with _lock:
        try:
            value = _secrets(region).get(secret, max_age=SECRET_MAX_AGE_SECONDS)
        except GetParameterError as exc:
            reason = _reason(exc)
            logger.error(
                "the OpenAI API key could not be read from its secret",
                extra={"secret": secret, "reason": reason},
            )
            raise ProviderUnavailable(
                f"the LLM is unavailable: the secret {SECRET_SETTING} names could not be read "
                f"({reason}); check that it exists and that this function may read it"
            ) from None
    return _key_in(value)


def _reason(exc: Exception) -> str:
    """The error code of a failed read (never the secret's value: a failed read has none)."""
    cause = exc.__cause__ or exc.__context__
    response = getattr(cause, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        if code:
            return str(code)
    return (cause or exc).__class__.__name__


def _key_in(value: object) -> str:
    if isinstance(value, bytes):
        try:
            value = value.decode()
        except UnicodeDecodeError:
            value = ""
    text = value.strip() if isinstance(value, str) else ""
    if text.startswith("{"):
        try:
            document = json.loads(text)
        except ValueError:
            document = None
        field = document.get(SECRET_FIELD) if isinstance(document, dict) else None
        if not isinstance(field, str) or not field.strip():
            raise ProviderUnavailable(
                f"the LLM is unavailable: the secret {SECRET_SETTING} names is a JSON object "
                f'without a string "{SECRET_FIELD}": store the key alone, or as '
                f'{{"{SECRET_FIELD}": "<key>"}}'
            )
        return field.strip()
    if not text:
        raise ProviderUnavailable(
            f"the LLM is unavailable: the secret {SECRET_SETTING} names is empty: store the "
            f'key in it, alone or as {{"{SECRET_FIELD}": "<key>"}}'
        )
    return text


def reset() -> None:
    """Forget the secrets client and its cache (tests; the environment changed)."""
    with _lock:
        _providers.clear()
