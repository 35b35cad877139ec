"""The OpenAI-compatible transport: chat completions over http.client (OpenAI, vLLM, Ollama,
llama.cpp and llama-cpp-python all speak it), with `EVALSVC_OPENAI_BASE_URL` and the key
credentials.py gives (`EVALSVC_OPENAI_API_KEY`, or the secret `EVALSVC_OPENAI_API_KEY_SECRET_ARN`
names), read as each call is made. Structured output is asked for in the mode the endpoint
takes (structured.py)."""

from __future__ import annotations

import email.utils
import http.client
import json
import math
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from evalsvc.core.errors import ProviderUnavailable
from evalsvc.core.observability import logger
from evalsvc.scoring.llm.credentials import KeySource, PlainKey
from evalsvc.scoring.llm.provider import (
    Answer,
    InvalidAnswer,
    RetryableError,
    ShapeRefused,
    clean,
    json_objects,
    reported_tokens,
)
from evalsvc.scoring.llm.structured import (
    AUTO,
    ENDPOINTS,
    MODES,
    Endpoint,
    is_shape_refusal,
    prompt_instruction,
)

# The largest answer read from a provider: far above what max_tokens allows.
MAX_ANSWER_BYTES = 4 * 1024 * 1024
# A call that waited its whole timeout for another to find the endpoint's mode.
WAITED = "another call was finding the structured output the LLM takes"


class OpenAIEndpoint:
    """An OpenAI-compatible server's base URL and key, posted to over http.client: one kept-alive
    connection per worker thread, with TCP_NODELAY; the key read when a call is made (a secret is
    read then, not before), and read afresh once when the server refuses it (a rotation). What
    every OpenAI-compatible transport sends through (chat completions here, embeddings in
    embeddings_openai.py); `what` names the model in its messages ("the LLM")."""

    def __init__(self, base_url: str, api_key: str | KeySource, what: str = "the LLM") -> None:
        self.base_url = base_url.rstrip("/")
        self.what = what
        parts = urlsplit(self.base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProviderUnavailable(f"EVALSVC_OPENAI_BASE_URL {base_url!r} is not an http(s) URL")
        self._scheme = parts.scheme
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path
        self.api_key = api_key if isinstance(api_key, KeySource) else PlainKey(api_key)
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
        self, path: str, payload: dict[str, Any], timeout: float, api_key: str
    ) -> tuple[int, bytes, float | None]:
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        body = json.dumps(payload).encode()
        connection: http.client.HTTPConnection | None = None
        sent = False
        try:
            connection = self._connection(timeout)
            connection.request("POST", f"{self._prefix}/{path}", body=body, headers=headers)
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
                f"could not reach {self.what}: {exc.__class__.__name__}", billed=sent
            ) from exc

    def post(
        self, path: str, payload: dict[str, Any], timeout: float
    ) -> tuple[int, bytes, float | None]:
        """`POST {base_url}/{path}` with the key: (status, body, the pause the server asked
        for). A key refused (401, 403) is read afresh and sent once more when it may have been
        rotated; RetryableError when the server could not be reached."""
        api_key = self.api_key()
        status, raw, wait = self._post(path, payload, timeout, api_key)
        if status in (401, 403) and self.api_key.refresh(api_key):
            # The key was rotated (and the old one revoked) since it was read: the new one.
            status, raw, wait = self._post(path, payload, timeout, self.api_key())
        return status, raw, wait

    def refused_credentials(self, status: int) -> ProviderUnavailable:
        return ProviderUnavailable(
            f"{self.what} refused the credentials (HTTP {status}); check {self.api_key.setting}"
        )


class OpenAIProvider:
    """`POST {base_url}/chat/completions`, temperature 0 (more after an unusable answer),
    structured output asked for in the mode `structured` pins, or (auto) the one the endpoint
    was found to take (OpenAIEndpoint: the connections and the key)."""

    def __init__(
        self, model: str, base_url: str, api_key: str | KeySource, structured: str = AUTO
    ) -> None:
        self.name = f"openai:{model}"
        self.model = model
        if structured != AUTO and structured not in MODES:
            raise ProviderUnavailable(
                f"EVALSVC_LLM_STRUCTURED={structured!r} is not understood: use auto or one of "
                + ", ".join(MODES)
            )
        self.structured = structured
        self._http = OpenAIEndpoint(base_url, api_key)
        self._base_url = self._http.base_url

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
        request = _Request(system, user, schema, schema_name, max_tokens, temperature)
        if self.structured != AUTO:
            return self._ask(self.structured, request, timeout)
        endpoint = ENDPOINTS.get(self._base_url, self.model)
        if not endpoint.settled and not endpoint.refused:
            # Nothing refused yet: calls go at once in the first mode (most servers take it).
            return self._negotiate(endpoint, MODES[0], request, timeout)
        if not endpoint.settled:
            # A mode was refused: one call at a time tries the next, the others wait for it.
            started = time.monotonic()
            if not endpoint.probing.acquire(timeout=timeout):
                raise RetryableError(WAITED)
            try:
                if not endpoint.settled:
                    left = timeout - (time.monotonic() - started)
                    if left <= 0:
                        raise RetryableError(WAITED)
                    return self._negotiate(endpoint, endpoint.mode, request, left)
            finally:
                endpoint.probing.release()
            timeout -= time.monotonic() - started
            if timeout <= 0:
                raise RetryableError(WAITED)
        return self._ask(endpoint.mode, request, timeout)

    def _negotiate(
        self, endpoint: Endpoint, mode: str, request: _Request, timeout: float
    ) -> Answer:
        """One call in `mode`, the endpoint's to try: settled on when answered; when its shape
        is refused, the endpoint moves to the next mode and ShapeRefused says to ask again."""
        try:
            answer = self._ask(mode, request, timeout)
        except ShapeRefused:
            ENDPOINTS.refused(endpoint, mode)
            raise
        except InvalidAnswer:
            # The server took the request (its answer is what failed): this mode works.
            self._settle(endpoint, mode)
            raise
        self._settle(endpoint, mode)
        return answer

    def _settle(self, endpoint: Endpoint, mode: str) -> None:
        if ENDPOINTS.answered(endpoint, mode):
            logger.info(
                "structured output settled",
                extra={"llm": self.name, "mode": mode, "refused_modes": list(endpoint.refused)},
            )

    def _payload(self, mode: str, request: _Request) -> dict[str, Any]:
        system, user, schema = request.system, request.user, request.schema
        schema_name = request.schema_name
        if mode == "prompt":
            system = f"{system}\n\n{prompt_instruction(schema)}"
        payload: dict[str, Any] = {
            "model": self.model,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        }
        if mode == "json_schema":
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "strict": True, "schema": schema},
            }
        elif mode == "json_object":
            payload["response_format"] = {"type": "json_object", "schema": schema}
        elif mode == "tools":
            payload["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": schema_name,
                        "description": "Record the answer.",
                        "parameters": schema,
                    },
                }
            ]
            payload["tool_choice"] = {"type": "function", "function": {"name": schema_name}}
        return payload

    def _ask(self, mode: str, request: _Request, timeout: float) -> Answer:
        """One call in `mode`. ShapeRefused when the server refused the request's shape in
        a mode that can still move down (auto, and not the prompt mode, which adds no shape);
        pinned, such a refusal is ProviderUnavailable naming the setting."""
        payload = self._payload(mode, request)
        status, raw, wait = self._http.post("chat/completions", payload, timeout)
        if mode != "prompt" and is_shape_refusal(status, raw):
            detail = raw[:200].decode(errors="replace")
            if self.structured != AUTO:
                raise ProviderUnavailable(
                    f"the LLM refused structured output in mode {mode!r} (HTTP {status}: "
                    f"{detail}); EVALSVC_LLM_STRUCTURED={mode} pins that mode: set it to "
                    "auto, or to a mode the server takes"
                )
            endpoint = ENDPOINTS.get(self._base_url, self.model)
            # Once settled, its own mode is no longer refused for its shape; a call sent in an
            # earlier mode, before another settled it, is asked again in the settled one.
            if not endpoint.settled or mode != endpoint.mode:
                raise ShapeRefused(
                    f"the LLM refused structured output in mode {mode!r} (HTTP {status}: {detail})"
                )
        if status == 429 or status >= 500:
            raise RetryableError(f"the LLM answered HTTP {status}", retry_after=wait)
        if status in (401, 403):
            raise self._http.refused_credentials(status)
        if status != 200:
            detail = raw[:200].decode(errors="replace")
            endpoint = ENDPOINTS.get(self._base_url, self.model)
            if self.structured == AUTO and mode == "prompt" and not endpoint.settled:
                raise ProviderUnavailable(
                    f"the LLM refused every structured-output mode ({', '.join(MODES)}); in "
                    f"the last it answered HTTP {status}: {detail}"
                )
            raise ProviderUnavailable(f"the LLM answered HTTP {status}: {detail}")
        return _answer(raw)


@dataclass(frozen=True, slots=True)
class _Request:
    """What one call asks, whatever the mode it is sent in."""

    system: str
    user: str
    schema: dict[str, Any]
    schema_name: str
    max_tokens: int
    temperature: float


def _answer(raw: bytes) -> Answer:
    """The JSON values of a 200's message: a tool call's arguments first, then its text."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InvalidAnswer("the response is not JSON") from exc
    tokens = None
    if isinstance(document, dict) and isinstance(document.get("usage"), dict):
        usage = document["usage"]
        tokens = reported_tokens(usage.get("prompt_tokens"), usage.get("completion_tokens"))
    try:
        message = document["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise InvalidAnswer("the response has no message", tokens) from exc
    if not isinstance(message, dict):
        raise InvalidAnswer("the response has no message", tokens)
    values: list[Any] = []
    calls = message.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            function = call.get("function") if isinstance(call, dict) else None
            arguments = function.get("arguments") if isinstance(function, dict) else None
            if isinstance(arguments, str):
                values.extend(json_objects(arguments))
            elif isinstance(arguments, dict):
                values.append(clean(arguments))
    content = message.get("content")
    if isinstance(content, str):
        values.extend(json_objects(content))
    elif not values:
        raise InvalidAnswer("the message has neither text nor a tool call", tokens)
    return Answer(values, tokens)


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
