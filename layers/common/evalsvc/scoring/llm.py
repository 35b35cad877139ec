"""The one LLM provider module: Bedrock Converse and OpenAI-compatible chat completions, each
asked for structured output (a JSON object matching a schema), with the same settings, retries
and failure rules for every caller (the judge, prompt improvement, question generation,
augmentation).

`EVALSVC_LLM` chooses the provider: `bedrock:<model-id>` or `openai:<model>` (with
`OPENAI_BASE_URL` and `OPENAI_API_KEY`; OpenAI, vLLM and Ollama all speak it). Unset, there
is no LLM and callers take their deterministic paths.
"""

from __future__ import annotations

import http.client
import json
import random
import re
import socket
import threading
import time
from collections.abc import Callable
from functools import cache
from typing import Any, Protocol, TypeVar
from urllib.parse import urlsplit

from evalsvc.errors import ProviderUnavailable
from evalsvc.settings import Settings, get_settings

T = TypeVar("T")


class RetryableError(Exception):
    """Throttling, a 5xx, or a timeout: worth asking again after a pause."""


class InvalidAnswer(ValueError):
    """The model's answer is not what the schema asked for."""


class LLMFailed(Exception):
    """No usable answer after every attempt; `problem` says what went wrong last."""

    def __init__(self, problem: str, attempts: int, *, transient: bool = False) -> None:
        super().__init__(problem)
        self.problem = problem
        self.attempts = attempts
        # The last attempt met throttling, a 5xx or a timeout (not an unusable answer): the
        # provider may well answer later.
        self.transient = transient


class Provider(Protocol):
    name: str

    def complete(
        self, system: str, user: str, schema: dict[str, Any], schema_name: str, max_tokens: int
    ) -> list[Any]:
        """The JSON values the answer holds, most likely first."""
        ...


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def json_objects(text: str) -> list[Any]:
    """Every JSON object in `text`: inside code fences first, then anywhere, in order."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    for source in [*_FENCE.findall(text), text]:
        for match in re.finditer(r"\{", source):
            try:
                value, _ = decoder.raw_decode(source, match.start())
            except json.JSONDecodeError:
                continue
            found.append(value)
    return found


# ---- OpenAI-compatible -------------------------------------------------------------------------


class OpenAIProvider:
    """`POST {base_url}/chat/completions` with a JSON-schema response format, temperature 0.
    Connections are kept alive, one per worker thread, with TCP_NODELAY."""

    def __init__(self, model: str, base_url: str, api_key: str, timeout: float) -> None:
        self.name = f"openai:{model}"
        self.model = model
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderUnavailable(f"OPENAI_BASE_URL {base_url!r} is not an http(s) URL")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._path = f"{parts.path}/chat/completions"
        self._api_key = api_key
        self._timeout = timeout
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            factory = (
                http.client.HTTPSConnection
                if self._scheme == "https"
                else http.client.HTTPConnection
            )
            connection = factory(self._host, self._port, timeout=self._timeout)
            connection.connect()
            # Requests are small and answers awaited: never hold a segment back (Nagle).
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._local.connection = connection
        return connection

    def _post(self, payload: dict[str, Any]) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        body = json.dumps(payload).encode()
        connection: http.client.HTTPConnection | None = None
        try:
            connection = self._connection()
            connection.request("POST", self._path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        except (OSError, http.client.HTTPException) as exc:
            if connection is not None:
                connection.close()
            self._local.connection = None
            raise RetryableError(f"could not reach the LLM: {exc.__class__.__name__}") from exc

    def complete(
        self, system: str, user: str, schema: dict[str, Any], schema_name: str, max_tokens: int
    ) -> list[Any]:
        # `max_tokens` is not sent: OpenAI's newer models refuse it; the schema bounds the answer.
        status, raw = self._post(
            {
                "model": self.model,
                "temperature": 0,
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "strict": True, "schema": schema},
                },
            }
        )
        if status == 429 or status >= 500:
            raise RetryableError(f"the LLM answered HTTP {status}")
        if status in (401, 403):
            raise ProviderUnavailable(
                f"the LLM refused the credentials (HTTP {status}); check OPENAI_API_KEY"
            )
        if status != 200:
            detail = raw[:200].decode(errors="replace")
            raise ProviderUnavailable(f"the LLM answered HTTP {status}: {detail}")
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise InvalidAnswer("the response has no message content") from exc
        if not isinstance(content, str):
            raise InvalidAnswer("the message content is not text")
        return json_objects(content)


# ---- Bedrock -----------------------------------------------------------------------------------

_BEDROCK_RETRYABLE = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelTimeoutException",
        "ModelNotReadyException",
    }
)


class BedrockProvider:
    """Bedrock Converse with a forced tool whose input schema is the answer's, temperature 0."""

    def __init__(self, model_id: str, client: Any) -> None:
        self.name = f"bedrock:{model_id}"
        self.model_id = model_id
        self.client = client

    def complete(
        self, system: str, user: str, schema: dict[str, Any], schema_name: str, max_tokens: int
    ) -> list[Any]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self.client.converse(
                modelId=self.model_id,
                system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": user}]}],
                inferenceConfig={"temperature": 0, "maxTokens": max_tokens},
                toolConfig={
                    "tools": [
                        {
                            "toolSpec": {
                                "name": schema_name,
                                "description": "Record the answer.",
                                "inputSchema": {"json": schema},
                            }
                        }
                    ],
                    "toolChoice": {"tool": {"name": schema_name}},
                },
            )
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in _BEDROCK_RETRYABLE:
                raise RetryableError(f"Bedrock answered {code}") from exc
            raise ProviderUnavailable(
                f"Bedrock refused the call ({code}); check EVALSVC_LLM and model access"
            ) from exc
        except BotoCoreError as exc:
            raise RetryableError(f"could not reach Bedrock: {exc.__class__.__name__}") from exc
        blocks = response.get("output", {}).get("message", {}).get("content", [])
        tool_inputs = [b["toolUse"].get("input") for b in blocks if "toolUse" in b]
        if tool_inputs:
            return tool_inputs
        return json_objects("".join(block.get("text", "") for block in blocks))


@cache
def _bedrock_client(region: str) -> Any:
    import boto3
    from botocore.config import Config

    # Retries are this module's own (below), so one policy covers every provider.
    config = Config(retries={"mode": "standard", "max_attempts": 1}, read_timeout=60)
    return boto3.client("bedrock-runtime", region_name=region, config=config)


def provider_from_settings(settings: Settings) -> Provider | None:
    spec = settings.llm.strip()
    if not spec:
        return None
    kind, _, model = spec.partition(":")
    if not model:
        raise ProviderUnavailable(
            f"EVALSVC_LLM={spec!r} names no model: use bedrock:<model-id> or openai:<model>"
        )
    if kind == "openai":
        return OpenAIProvider(
            model,
            settings.openai_base_url,
            settings.openai_api_key.get_secret_value(),
            settings.judge_timeout_seconds,
        )
    if kind == "bedrock":
        return BedrockProvider(model, _bedrock_client(settings.region))
    raise ProviderUnavailable(
        f"EVALSVC_LLM={spec!r} is not understood: use bedrock:<model-id> or openai:<model>"
    )


# ---- asking with retries -----------------------------------------------------------------------


class LLM:
    """A provider with the service's retry rules: throttling, 5xx, timeouts and unusable answers
    are asked again after a jittered exponential pause, up to `max_attempts` in all."""

    def __init__(self, provider: Provider, settings: Settings) -> None:
        self.provider = provider
        self.name = provider.name
        self.max_attempts = max(1, settings.judge_max_attempts)
        self.base_delay = settings.judge_retry_base_seconds
        self.concurrency = max(1, settings.judge_concurrency)
        self._lock = threading.Lock()
        self.calls = 0
        self.retries = 0

    def ask(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        accept: Callable[[Any], T],
        *,
        max_tokens: int = 1024,
    ) -> T:
        """The first JSON value of the answer that `accept` takes (it raises InvalidAnswer
        otherwise); LLMFailed after the last attempt."""
        problem = ""
        transient = False
        for attempt in range(self.max_attempts):
            if attempt:
                with self._lock:
                    self.retries += 1
                jitter = random.uniform(0.5, 1.0)  # noqa: S311 - spreads retries, not a secret
                time.sleep(min(8.0, self.base_delay * 2 ** (attempt - 1)) * jitter)
            with self._lock:
                self.calls += 1
            try:
                candidates = self.provider.complete(system, user, schema, schema_name, max_tokens)
            except RetryableError as exc:
                problem, transient = str(exc), True
                continue
            except InvalidAnswer as exc:
                problem, transient = f"unusable answer ({exc})", False
                continue
            transient = False
            problems = []
            for candidate in candidates:
                try:
                    return accept(candidate)
                except InvalidAnswer as exc:
                    problems.append(str(exc))
            # The first (outermost) JSON value is the one the model meant as its answer.
            problem = f"unusable answer ({problems[0] if problems else 'no JSON object in it'})"
        raise LLMFailed(problem, self.max_attempts, transient=transient)


def configured_llm() -> LLM | None:
    """The LLM that EVALSVC_LLM configures; None when it is unset."""
    settings = get_settings()
    provider = provider_from_settings(settings)
    return LLM(provider, settings) if provider else None
