"""The OpenAI-compatible embeddings transport: `POST {EVALSVC_OPENAI_BASE_URL}/embeddings` with
`{"model", "input": [texts]}` (and `dimensions` when EVALSVC_EMBEDDINGS_DIMENSIONS is set), through
the judge's connection and key (openai.OpenAIEndpoint: the same base URL, the same key or secret).
OpenAI, vLLM, Ollama, llama.cpp's llama-server (`--embeddings`) and llama-cpp-python's server
(`--embedding true`) all serve it."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from evalsvc.core.errors import ProviderUnavailable
from evalsvc.scoring.llm.credentials import KeySource
from evalsvc.scoring.llm.embedder import Embedded, EmbeddingRefused
from evalsvc.scoring.llm.openai import OpenAIEndpoint
from evalsvc.scoring.llm.provider import (
    InvalidAnswer,
    RetryableError,
    json_object,
    reported_tokens,
)

# Statuses that refuse what the request carries (a text too long, an input not taken).
REFUSALS = frozenset({400, 413, 422})
# A 5xx that says a text is too large for the model: llama-server answers 500 "input (N tokens)
# is too large to process" for a text longer than its batch. Asked again, it would be again.
TOO_LARGE = re.compile(r"too (large|long)|exceeds|larger than", re.IGNORECASE)


class OpenAIEmbeddings:
    """`batch` texts at most a call, each text sent as it is (a server that cannot take one
    truncates it or refuses the call)."""

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | KeySource,
        batch: int = 64,
        dimensions: int | None = None,
    ) -> None:
        self.name = f"openai:{model}"
        self.model = model
        self.batch = batch
        self.dimensions = dimensions
        self._http = OpenAIEndpoint(base_url, api_key, what="the embeddings model")

    def embed(self, texts: Sequence[str], timeout: float) -> Embedded:
        payload: dict[str, Any] = {"model": self.model, "input": list(texts)}
        if self.dimensions is not None:
            payload["dimensions"] = self.dimensions
        status, raw, wait = self._http.post("embeddings", payload, timeout)
        if status in (401, 403):
            raise self._http.refused_credentials(status)
        if status in REFUSALS or (status >= 500 and TOO_LARGE.search(_detail(raw))):
            raise EmbeddingRefused(f"HTTP {status}: {_detail(raw)}")
        if status == 429 or (status >= 500 and status != 501):
            raise RetryableError(f"the embeddings model answered HTTP {status}", retry_after=wait)
        if status != 200:
            # No such model or route (404), not served (llama-server without --embeddings
            # answers 501): asking again cannot help.
            raise ProviderUnavailable(
                f"the embeddings model answered HTTP {status}: {_detail(raw)}; check "
                "EVALSVC_EMBEDDINGS and that the server serves embeddings"
            )
        return _embedded(raw, len(texts))


def _detail(raw: bytes) -> str:
    """What an error answer says, its message when it is OpenAI's shape, at most 200
    characters."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        document = None
    error = document.get("error") if isinstance(document, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    text = message if isinstance(message, str) else raw[:200].decode(errors="replace")
    return text[:200]


def _embedded(raw: bytes, count: int) -> Embedded:
    """The vectors of a 200, in the order of the texts sent (each item's `index`, when it has
    one), and the input tokens it reports; InvalidAnswer when it is not such an answer (the
    vectors themselves are checked by the embedder)."""
    document = json_object(raw)
    tokens = None
    usage = document.get("usage")
    if isinstance(usage, dict):
        counted = reported_tokens(usage.get("prompt_tokens"), 0)
        tokens = counted[0] if counted else None
    data = document.get("data")
    if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
        raise InvalidAnswer("the response has no list of embeddings", _both(tokens))
    indexes = [item.get("index") for item in data]
    if all(isinstance(i, int) and not isinstance(i, bool) for i in indexes):
        if sorted(indexes) != list(range(len(data))):
            raise InvalidAnswer("the embeddings' indexes are not 0 to n - 1", _both(tokens))
        data = sorted(data, key=lambda item: int(item["index"]))
    if len(data) != count:
        raise InvalidAnswer(f"{len(data)} vectors for {count} texts", _both(tokens))
    return Embedded([item.get("embedding") for item in data], tokens)


def _both(tokens: int | None) -> tuple[int, int] | None:
    return None if tokens is None else (tokens, 0)
