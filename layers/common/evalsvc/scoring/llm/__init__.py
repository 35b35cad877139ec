"""The one way the service asks an LLM: Bedrock Converse or OpenAI-compatible chat completions,
each asked for structured output (a JSON object matching a schema), with the same settings,
retries and failure rules for every caller (the judge, prompt improvement, question generation,
augmentation).

`EVALSVC_LLM` chooses the provider: `bedrock:<model-id>` or `openai:<model>` (with
`EVALSVC_OPENAI_BASE_URL` and `EVALSVC_OPENAI_API_KEY`; OpenAI, vLLM, Ollama, llama.cpp and
llama-cpp-python all speak it, each taking structured output its own way). Unset, there is no
LLM and callers take their deterministic paths.

    client.py    LLM: asking a provider against a deadline, with retries, metered, every
                 answer checked against its schema; configured_llm, LLMFailed, LLMOutOfTime
    provider.py  what every transport is, gives and raises (Provider, Answer, RetryableError,
                 InvalidAnswer), reading JSON out of model text, the transport EVALSVC_LLM names
    latency.py   the recent time of each provider's calls (LATENCY), what deadlines plan with
    openai.py    the OpenAI-compatible transport (http.client)
    structured.py  the structured-output modes of OpenAI-compatible servers, which refusals
                 are about the request's shape, the mode each endpoint settled on
    bedrock.py   the Bedrock transport (boto3)

This package's names are what callers import; a transport's module is imported only when
EVALSVC_LLM names it.
"""

from evalsvc.scoring.llm.client import (
    LLM,
    MIN_CALL_SECONDS,
    LLMFailed,
    LLMOutOfTime,
    configured_llm,
)
from evalsvc.scoring.llm.latency import LATENCY, Latency
from evalsvc.scoring.llm.provider import (
    MAX_REPORTED_TOKENS,
    Answer,
    InvalidAnswer,
    Provider,
    RetryableError,
    json_objects,
    provider_from_settings,
    reported_tokens,
)

__all__ = [
    "LATENCY",
    "LLM",
    "MAX_REPORTED_TOKENS",
    "MIN_CALL_SECONDS",
    "Answer",
    "InvalidAnswer",
    "LLMFailed",
    "LLMOutOfTime",
    "Latency",
    "Provider",
    "RetryableError",
    "configured_llm",
    "json_objects",
    "provider_from_settings",
    "reported_tokens",
]
