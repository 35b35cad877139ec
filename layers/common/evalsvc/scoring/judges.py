"""The LLM judge: providers (Bedrock Converse, OpenAI-compatible chat completions), retries
with jittered backoff, bounded concurrency, and the per-tenant verdict cache.

`EVALSVC_LLM` chooses the provider: `bedrock:<model-id>` or `openai:<model>` (with
`OPENAI_BASE_URL` and `OPENAI_API_KEY`; OpenAI, vLLM and Ollama all speak it). Unset, only
`check:` metrics can be scored.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import socket
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import Any, Protocol
from urllib.parse import urlsplit

from evalsvc.errors import JudgeFailed, ProviderUnavailable
from evalsvc.models.datasets import Pair
from evalsvc.observability import logger, metrics
from evalsvc.scoring.checks import Score
from evalsvc.scoring.verdicts import (
    PROMPT_VERSION,
    SYSTEM,
    VERDICT_SCHEMA,
    InvalidVerdict,
    parse_verdict,
    user_message,
    verdict_from_object,
)
from evalsvc.settings import Settings, get_settings
from evalsvc.storage import judge_cache

TOOL_NAME = "record_verdict"


class RetryableError(Exception):
    """Throttling, a 5xx, or a timeout: worth asking again after a pause."""


class Provider(Protocol):
    name: str

    def ask(self, system: str, user: str) -> tuple[int, str]: ...


# ---- OpenAI-compatible -------------------------------------------------------------------------


class OpenAIProvider:
    """`POST {base_url}/chat/completions` with a JSON-schema response format, temperature 0.
    Connections are kept alive, one per worker thread."""

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
            raise RetryableError(f"could not reach the judge: {exc.__class__.__name__}") from exc

    def ask(self, system: str, user: str) -> tuple[int, str]:
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
                    "json_schema": {"name": "verdict", "strict": True, "schema": VERDICT_SCHEMA},
                },
            }
        )
        if status == 429 or status >= 500:
            raise RetryableError(f"the judge answered HTTP {status}")
        if status in (401, 403):
            raise ProviderUnavailable(
                f"the judge refused the credentials (HTTP {status}); check OPENAI_API_KEY"
            )
        if status != 200:
            raise ProviderUnavailable(
                f"the judge answered HTTP {status}: {raw[:200].decode(errors='replace')}"
            )
        try:
            content = json.loads(raw)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise InvalidVerdict("the judge's response has no message content") from exc
        if not isinstance(content, str):
            raise InvalidVerdict("the judge's message content is not text")
        return parse_verdict(content)


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
    """Bedrock Converse with a forced tool whose input is the verdict, temperature 0."""

    def __init__(self, model_id: str, client: Any) -> None:
        self.name = f"bedrock:{model_id}"
        self.model_id = model_id
        self.client = client

    def ask(self, system: str, user: str) -> tuple[int, str]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self.client.converse(
                modelId=self.model_id,
                system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": user}]}],
                inferenceConfig={"temperature": 0, "maxTokens": 512},
                toolConfig={
                    "tools": [
                        {
                            "toolSpec": {
                                "name": TOOL_NAME,
                                "description": "Record the verdict: the reason, then the score.",
                                "inputSchema": {"json": VERDICT_SCHEMA},
                            }
                        }
                    ],
                    "toolChoice": {"tool": {"name": TOOL_NAME}},
                },
            )
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in _BEDROCK_RETRYABLE:
                raise RetryableError(f"Bedrock answered {code}") from exc
            raise ProviderUnavailable(
                f"Bedrock refused the judge call ({code}); check EVALSVC_LLM and access"
            ) from exc
        except BotoCoreError as exc:
            raise RetryableError(f"could not reach Bedrock: {exc.__class__.__name__}") from exc
        blocks = response.get("output", {}).get("message", {}).get("content", [])
        for block in blocks:
            if "toolUse" in block:
                return verdict_from_object(block["toolUse"].get("input"))
        text = "".join(block.get("text", "") for block in blocks)
        return parse_verdict(text)


@cache
def _bedrock_client(region: str) -> Any:
    import boto3
    from botocore.config import Config

    # Retries are the judge's own (below), so one policy covers every provider.
    config = Config(retries={"mode": "standard", "max_attempts": 1}, read_timeout=60)
    return boto3.client("bedrock-runtime", region_name=region, config=config)


# ---- the judge ---------------------------------------------------------------------------------


def cache_key(provider: str, question: str, system_prompt: str, pair: Pair) -> str:
    material = json.dumps(
        [provider, PROMPT_VERSION, question, system_prompt, pair.input, pair.output]
    )
    return hashlib.sha256(material.encode()).hexdigest()


class CachedJudge:
    """Scores every pair for one question: cached verdicts first, then the provider, with up to
    `concurrency` calls in flight and retries with jittered exponential backoff."""

    def __init__(self, provider: Provider, tenant: str, settings: Settings) -> None:
        self.provider = provider
        self.tenant = tenant
        self.concurrency = max(1, settings.judge_concurrency)
        self.max_attempts = max(1, settings.judge_max_attempts)
        self.base_delay = settings.judge_retry_base_seconds
        self._lock = threading.Lock()
        self.calls = 0
        self.retries = 0

    def _ask(self, question: str, pair: Pair, system_prompt: str) -> tuple[int, str]:
        user = user_message(question, system_prompt, pair.input, pair.output)
        problem = ""
        for attempt in range(self.max_attempts):
            if attempt:
                with self._lock:
                    self.retries += 1
                jitter = random.uniform(0.5, 1.0)  # noqa: S311 - spreads retries, not a secret
                time.sleep(min(8.0, self.base_delay * 2 ** (attempt - 1)) * jitter)
            with self._lock:
                self.calls += 1
            try:
                return self.provider.ask(SYSTEM, user)
            except RetryableError as exc:
                problem = str(exc)
            except InvalidVerdict as exc:
                problem = f"unusable answer ({exc})"
        preview = question if len(question) <= 60 else question[:57] + "..."
        raise JudgeFailed(
            f"the judge failed on metric {preview!r} for pair {pair.id!r} after "
            f"{self.max_attempts} attempts: {problem}; nothing was stored"
        )

    def score_all(self, question: str, pairs: Sequence[Pair], system_prompt: str) -> list[Score]:
        retries_before = self.retries
        keys = [cache_key(self.provider.name, question, system_prompt, p) for p in pairs]
        verdicts = judge_cache.get_many(self.tenant, keys)
        hits = sum(1 for key in keys if key in verdicts)
        todo = [i for i, key in enumerate(keys) if key not in verdicts]
        fresh: dict[str, tuple[int, str]] = {}
        if todo:
            pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo)))
            try:
                futures = {
                    i: pool.submit(self._ask, question, pairs[i], system_prompt) for i in todo
                }
                for i, future in futures.items():
                    fresh[keys[i]] = future.result()
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            judge_cache.put_many(self.tenant, fresh)
        verdicts.update(fresh)
        metrics.add_metric(name="JudgeCacheHits", unit="Count", value=hits)
        metrics.add_metric(name="JudgeCalls", unit="Count", value=len(todo))
        metrics.add_metric(name="JudgeRetries", unit="Count", value=self.retries - retries_before)
        logger.debug("judged", extra={"pairs": len(pairs), "cache_hits": hits, "calls": len(todo)})
        return [Score(float(verdicts[key][0]), verdicts[key][1]) for key in keys]


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


def configured_judge(tenant: str) -> CachedJudge | None:
    """The judge EVALSVC_LLM configures, for `tenant`; None when it is unset."""
    settings = get_settings()
    provider = provider_from_settings(settings)
    return CachedJudge(provider, tenant, settings) if provider else None
