"""The OpenAI-compatible transport: chat completions over http.client (OpenAI, vLLM and Ollama
all speak it), with `OPENAI_BASE_URL` and the key credentials.py gives (`OPENAI_API_KEY`, or
the secret `OPENAI_API_KEY_SECRET_ARN` names), read as each call is made."""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import socket
import threading
import time
from typing import Any
from urllib.parse import urlsplit

from evalsvc.errors import ProviderUnavailable
from evalsvc.scoring.llm.credentials import KeySource, PlainKey
from evalsvc.scoring.llm.provider import (
    Answer,
    InvalidAnswer,
    RetryableError,
    json_objects,
    reported_tokens,
)

# The largest answer read from a provider: far above what max_tokens allows.
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class OpenAIProvider:
    """`POST {base_url}/chat/completions` with a JSON-schema response format, temperature 0.
    Connections are kept alive, one per worker thread, with TCP_NODELAY. `api_key` is the key,
    or what gives it when a call is made (a secret is read then, not before)."""

    def __init__(self, model: str, base_url: str, api_key: str | KeySource) -> None:
        self.name = f"openai:{model}"
        self.model = model
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderUnavailable(f"OPENAI_BASE_URL {base_url!r} is not an http(s) URL")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._path = f"{parts.path}/chat/completions"
        self._api_key = api_key if isinstance(api_key, KeySource) else PlainKey(api_key)
        self._local = threading.local()

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        connection: http.client.HTTPConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            factory = (
                http.client.HTTPSConnection
                if self._scheme == "https"
                else http.client.HTTPConnection
            )
            connection = factory(self._host, self._port, timeout=timeout)
            connection.connect()
            # Requests are small and answers awaited: never hold a segment back (Nagle).
            connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._local.connection = connection
        connection.timeout = timeout
        if connection.sock is not None:
            connection.sock.settimeout(timeout)
        return connection

    def _post(
        self, payload: dict[str, Any], timeout: float, api_key: str
    ) -> tuple[int, bytes, float | None]:
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        body = json.dumps(payload).encode()
        connection: http.client.HTTPConnection | None = None
        sent = False
        try:
            connection = self._connection(timeout)
            connection.request("POST", self._path, body=body, headers=headers)
            sent = True
            response = connection.getresponse()
            raw = response.read(MAX_ANSWER_BYTES + 1)
            if len(raw) > MAX_ANSWER_BYTES:
                connection.close()
                self._local.connection = None
                raise InvalidAnswer(f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
            return response.status, raw, retry_after(response.headers)
        except (OSError, http.client.HTTPException) as exc:
            if connection is not None:
                connection.close()
            self._local.connection = None
            raise RetryableError(
                f"could not reach the LLM: {exc.__class__.__name__}", billed=sent
            ) from exc

    def complete(
        self,
        system: str,
        user: str,
        schema: dict[str, Any],
        schema_name: str,
        max_tokens: int,
        timeout: float,
    ) -> Answer:
        payload = {
            "model": self.model,
            "temperature": 0,
            "max_tokens": max_tokens,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "strict": True, "schema": schema},
            },
        }
        api_key = self._api_key()
        status, raw, wait = self._post(payload, timeout, api_key)
        if status in (401, 403) and self._api_key.refresh(api_key):
            # The key was rotated (and the old one revoked) since it was read: the new one.
            status, raw, wait = self._post(payload, timeout, self._api_key())
        if status == 429 or status >= 500:
            raise RetryableError(f"the LLM answered HTTP {status}", retry_after=wait)
        if status in (401, 403):
            raise ProviderUnavailable(
                f"the LLM refused the credentials (HTTP {status}); check {self._api_key.setting}"
            )
        if status != 200:
            detail = raw[:200].decode(errors="replace")
            raise ProviderUnavailable(f"the LLM answered HTTP {status}: {detail}")
        try:
            document = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise InvalidAnswer("the response is not JSON") from exc
        tokens = None
        if isinstance(document, dict) and isinstance(document.get("usage"), dict):
            usage = document["usage"]
            tokens = reported_tokens(usage.get("prompt_tokens"), usage.get("completion_tokens"))
        try:
            content = document["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise InvalidAnswer("the response has no message content", tokens) from exc
        if not isinstance(content, str):
            raise InvalidAnswer("the message content is not text", tokens)
        return Answer(json_objects(content), tokens)


def retry_after(headers: Any) -> float | None:
    """The pause a provider asked for: `retry-after-ms`, or `Retry-After` in seconds or as an
    HTTP date; None when it gave none (or nonsense). At most an hour."""
    milliseconds = headers.get("retry-after-ms")
    try:
        if milliseconds is not None:
            return min(3600.0, max(0.0, float(milliseconds) / 1000))
    except ValueError:
        pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    if not math.isfinite(seconds):
        return None
    return min(3600.0, max(0.0, seconds))
