"""The Bedrock transport: Converse through boto3, whose modules are imported on the first call."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from evalsvc.core.errors import ProviderUnavailable
from evalsvc.scoring.llm.provider import Answer, RetryableError, json_objects, reported_tokens

_BEDROCK_RETRYABLE = frozenset(
    {
        "ThrottlingException",
        "ServiceUnavailableException",
        "InternalServerException",
        "ModelTimeoutException",
        "ModelNotReadyException",
    }
)


def failure(exc: Exception, setting: str) -> Exception:
    """What a failed Bedrock call raises: a throttle, a busy or timed-out model, or a call that
    did not reach Bedrock is retryable (billed when the model may have run); anything else is
    the deployment's to fix, naming `setting` (the model's). `exc` is botocore's ClientError
    or BotoCoreError."""
    from botocore.exceptions import BotoCoreError, ClientError, ReadTimeoutError

    if isinstance(exc, BotoCoreError) or not isinstance(exc, ClientError):
        # A read timeout came after the request was sent: the model may have run.
        billed = isinstance(exc, ReadTimeoutError)
        return RetryableError(f"could not reach Bedrock: {exc.__class__.__name__}", billed=billed)
    code = str(exc.response.get("Error", {}).get("Code", ""))
    if code in _BEDROCK_RETRYABLE:
        return RetryableError(f"Bedrock answered {code}", billed=code == "ModelTimeoutException")
    return ProviderUnavailable(
        f"Bedrock refused the call ({code}); check {setting} and model access"
    )


class BedrockProvider:
    """Bedrock Converse with a forced tool whose input schema is the answer's, temperature 0
    (more after an unusable answer)."""

    def __init__(self, model_id: str, client_for: Callable[[int], Any]) -> None:
        self.name = f"bedrock:{model_id}"
        self.model_id = model_id
        # A client whose read timeout is at most the given whole seconds.
        self.client_for = client_for

    @classmethod
    def for_region(cls, model_id: str, region: str) -> BedrockProvider:
        """The provider of `model_id` in `region`, with this process's clients (one per read
        timeout, kept)."""
        return cls(model_id, lambda read_timeout: _bedrock_client(region, read_timeout))

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
        from botocore.exceptions import BotoCoreError, ClientError

        client = self.client_for(timeout_step(timeout))
        try:
            response = client.converse(
                modelId=self.model_id,
                system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": user}]}],
                inferenceConfig={"temperature": temperature, "maxTokens": max_tokens},
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
        except (ClientError, BotoCoreError) as exc:
            raise failure(exc, "EVALSVC_LLM") from exc
        usage = response.get("usage") or {}
        tokens = reported_tokens(usage.get("inputTokens"), usage.get("outputTokens"))
        blocks = response.get("output", {}).get("message", {}).get("content", [])
        tool_inputs = [b["toolUse"].get("input") for b in blocks if "toolUse" in b]
        if tool_inputs:
            return Answer(tool_inputs, tokens)
        return Answer(json_objects("".join(block.get("text", "") for block in blocks)), tokens)


# Read timeouts Bedrock clients are made with; a call uses the largest that fits its time.
TIMEOUT_STEPS = (1, 2, 3, 5, 8, 13, 21, 34, 60)


def timeout_step(timeout: float) -> int:
    return max((s for s in TIMEOUT_STEPS if s <= timeout), default=TIMEOUT_STEPS[0])


@cache
def _bedrock_client(region: str, read_timeout: int) -> Any:
    import boto3
    from botocore.config import Config

    # Retries are the LLM client's own (client.py), so one policy covers every provider.
    config = Config(
        retries={"mode": "standard", "max_attempts": 1},
        connect_timeout=min(5, read_timeout),
        read_timeout=read_timeout,
    )
    return boto3.client("bedrock-runtime", region_name=region, config=config)
