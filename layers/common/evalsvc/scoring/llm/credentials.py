"""The OpenAI-compatible transport's API key: from AWS Secrets Manager when
`EVALSVC_OPENAI_API_KEY_SECRET_ARN` names a secret (deployed), from `EVALSVC_OPENAI_API_KEY`
otherwise (`make run`, tests).

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
from typing import Any

from evalsvc.core.errors import ProviderUnavailable
from evalsvc.core.observability import logger
from evalsvc.core.settings import Settings

SECRET_SETTING = "EVALSVC_OPENAI_API_KEY_SECRET_ARN"  # noqa: S105 - the setting's name
PLAIN_SETTING = "EVALSVC_OPENAI_API_KEY"
# How long a key read from the secret is used before it is read again.
SECRET_MAX_AGE_SECONDS = 300
# The JSON field holding the key, when the secret is a JSON object.
SECRET_FIELD = "api_key"  # noqa: S105 - a field's name

_lock = threading.Lock()
# region -> Powertools' SecretsProvider (its cache lives with it).
_providers: dict[str, Any] = {}


class KeySource:
    """Gives the key when a call is made; `setting` is what a refusal of it names."""

    setting = PLAIN_SETTING

    def __call__(self) -> str:
        raise NotImplementedError

    def refresh(self, refused: str) -> bool:
        """The provider refused `refused`: whether a newer key may now be had (a rotation)."""
        return False


class PlainKey(KeySource):
    """A key given as it is (EVALSVC_OPENAI_API_KEY, tests)."""

    def __init__(self, key: str) -> None:
        self._key = key

    def __call__(self) -> str:
        return self._key


def key_source(settings: Settings) -> KeySource:
    """What gives the OpenAI key when a call is made: the secret EVALSVC_OPENAI_API_KEY_SECRET_ARN
    names, or EVALSVC_OPENAI_API_KEY."""
    secret = settings.openai_api_key_secret_arn.strip()
    if secret:
        return SecretKey(secret, settings.region)
    return PlainKey(settings.openai_api_key.get_secret_value())


class SecretKey(KeySource):
    """The key in a secret. One transport (one request's, one chunk's) reads it once, on its
    first call, and keeps what that read gave, the key or the failure, for its other calls
    rather than each asking Secrets Manager again. A key the provider refuses is read afresh
    once (past the cache: it may have been rotated and the old one revoked)."""

    setting = SECRET_SETTING

    def __init__(self, secret: str, region: str, setting: str = SECRET_SETTING) -> None:
        self.secret = secret
        self.region = region
        # What names the secret in a message (a juror's: EVALSVC_JUDGE_ENDPOINTS[<judge>]).
        self.setting = setting
        self._lock = threading.Lock()
        # The latest read's outcome: the key, or why there is none.
        self._read: str | ProviderUnavailable | None = None
        self._refreshed = False

    def __call__(self) -> str:
        with self._lock:
            if self._read is None:
                try:
                    self._read = secret_key(self.secret, self.region, setting=self.setting)
                except ProviderUnavailable as exc:
                    self._read = exc
            if isinstance(self._read, ProviderUnavailable):
                raise ProviderUnavailable(self._read.message)
            return self._read

    def refresh(self, refused: str) -> bool:
        with self._lock:
            if self._read != refused:
                # Another call read a newer key meanwhile.
                return isinstance(self._read, str)
            if self._refreshed:
                return False
            self._refreshed = True
            try:
                self._read = secret_key(self.secret, self.region, fresh=True, setting=self.setting)
            except ProviderUnavailable:
                return False
            return self._read != refused


def _secrets(region: str) -> Any:
    provider = _providers.get(region)
    if provider is None:
        import boto3
        from aws_lambda_powertools.utilities.parameters import SecretsProvider
        from botocore.config import Config

        # The read happens inside a request (29 s in all) or a chunk: seconds, not botocore's
        # default 60 s per connect and per read, before it is given up as unavailable.
        config = Config(
            connect_timeout=2, read_timeout=5, retries={"mode": "standard", "max_attempts": 2}
        )
        client = boto3.client("secretsmanager", region_name=region, config=config)
        provider = SecretsProvider(boto3_client=client)
        _providers[region] = provider
    return provider


def secret_key(
    secret: str, region: str, *, fresh: bool = False, setting: str = SECRET_SETTING
) -> str:
    """The key the secret holds (cached for SECRET_MAX_AGE_SECONDS; `fresh`: read past the
    cache); ProviderUnavailable when it cannot be read or holds no key, naming `setting`."""
    from aws_lambda_powertools.utilities.parameters.exceptions import GetParameterError

    # One read at a time: the judge's threads all wait for the first instead of each asking.
    with _lock:
        try:
            value = _secrets(region).get(secret, max_age=SECRET_MAX_AGE_SECONDS, force_fetch=fresh)
        except GetParameterError as exc:
            reason = _reason(exc)
            logger.error(
                "the OpenAI API key could not be read from its secret",
                extra={"secret": secret, "reason": reason},
            )
            raise ProviderUnavailable(
                f"the LLM is unavailable: the secret {setting} names could not be read "
                f"({reason}); check that it exists and that this function may read it"
            ) from None
    return _key_in(value, setting)


def _reason(exc: Exception) -> str:
    """The error code of a failed read (never the secret's value: a failed read has none)."""
    cause = exc.__cause__ or exc.__context__
    response = getattr(cause, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        if code:
            return str(code)
    return (cause or exc).__class__.__name__


def _key_in(value: object, setting: str = SECRET_SETTING) -> str:
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
                f"the LLM is unavailable: the secret {setting} names is a JSON object "
                f'without a string "{SECRET_FIELD}": store the key alone, or as '
                f'{{"{SECRET_FIELD}": "<key>"}}'
            )
        return field.strip()
    if not text:
        raise ProviderUnavailable(
            f"the LLM is unavailable: the secret {setting} names is empty: store the "
            f'key in it, alone or as {{"{SECRET_FIELD}": "<key>"}}'
        )
    return text


def reset() -> None:
    """Forget the secrets client and its cache (tests; the environment changed)."""
    with _lock:
        _providers.clear()
