"""The Bedrock embeddings transport: Titan Text Embeddings v2 through `bedrock-runtime`
`invoke_model`, one text a call (the embedder's pool makes the calls side by side), with the
judge's clients (bedrock.py: one per read timeout, botocore's own retries off)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from evalsvc.scoring.llm import bedrock
from evalsvc.scoring.llm.embedder import Embedded, EmbeddingRefused
from evalsvc.scoring.llm.provider import (
    InvalidAnswer,
    json_object,
    reported_tokens,
)

# The largest answer read: a vector of 8,192 numbers as JSON is far less.
MAX_ANSWER_BYTES = 4 * 1024 * 1024


class BedrockEmbeddings:
    """`invoke_model` with `{"inputText", "dimensions"?, "normalize": true}`; the vector is
    `embedding`, the tokens `inputTextTokenCount`."""

    batch = 1

    def __init__(
        self, model_id: str, client_for: Callable[[int], Any], dimensions: int | None = None
    ) -> None:
        self.name = f"bedrock:{model_id}"
        self.model_id = model_id
        self.dimensions = dimensions
        # A client whose read timeout is at most the given whole seconds.
        self.client_for = client_for

    @classmethod
    def for_region(
        cls, model_id: str, region: str, dimensions: int | None = None
    ) -> BedrockEmbeddings:
        return cls(
            model_id,
            lambda read_timeout: bedrock._bedrock_client(region, read_timeout),
            dimensions,
        )

    def embed(self, texts: Sequence[str], timeout: float) -> Embedded:
        from botocore.exceptions import BotoCoreError, ClientError

        if len(texts) != 1:
            raise ValueError(f"Bedrock embeds one text a call, not {len(texts)}")
        body: dict[str, Any] = {"inputText": texts[0], "normalize": True}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        client = self.client_for(bedrock.timeout_step(timeout))
        try:
            response = client.invoke_model(
                modelId=self.model_id,
                body=json.dumps(body),
                contentType="application/json",
                accept="application/json",
            )
            raw = response["body"].read(MAX_ANSWER_BYTES + 1)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code == "ValidationException":
                # What the call carries: a text too long (over 50,000 characters, or 8,192
                # tokens), an empty one, dimensions the model does not make.
                said = str(exc.response.get("Error", {}).get("Message", ""))[:200]
                raise EmbeddingRefused(f"Bedrock answered {code}: {said}") from exc
            raise bedrock.failure(exc, "EVALSVC_EMBEDDINGS") from exc
        except BotoCoreError as exc:
            raise bedrock.failure(exc, "EVALSVC_EMBEDDINGS") from exc
        if len(raw) > MAX_ANSWER_BYTES:
            raise InvalidAnswer(f"the answer is larger than {MAX_ANSWER_BYTES} bytes")
        document = json_object(raw)
        counted = reported_tokens(document.get("inputTextTokenCount"), 0)
        tokens = counted[0] if counted else None
        if "embedding" not in document:
            raise InvalidAnswer("the response has no embedding", counted)
        return Embedded([document["embedding"]], tokens)
