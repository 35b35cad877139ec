"""Structured output from OpenAI-compatible servers, which do not all take the same request:
the modes a server may take (MODES, most exact first), which refusals are about the request's
shape, and the mode each endpoint (base URL and model) settled on in this process (ENDPOINTS).

    json_schema  response_format {"type": "json_schema", "json_schema": {name, strict, schema}}
                 (OpenAI, vLLM, LM Studio, recent Ollama, llama.cpp's own server)
    json_object  response_format {"type": "json_object", "schema": schema}
                 (llama-cpp-python's server, which enforces the schema by grammar)
    tools        one function whose parameters are the schema, forced by tool_choice
    prompt       no response_format: the schema, and an instruction to answer with one JSON
                 object only, after the system prompt

`EVALSVC_LLM_STRUCTURED=auto` (the default) starts at json_schema and moves down one mode on a
refusal of the request's shape; any other value pins that mode.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

MODES = ("json_schema", "json_object", "tools", "prompt")
AUTO = "auto"

# What names the parts of a request a mode adds, in a refusal's body.
_SHAPE_WORDS = (b"response_format", b"json_schema", b"tool_choice", b"tools")


def prompt_instruction(schema: dict[str, Any]) -> str:
    """What the prompt mode appends to the system prompt."""
    return (
        "Answer with one JSON object only, and no other text. It must match this JSON schema:\n"
        + json.dumps(schema)
    )


def is_shape_refusal(status: int, body: bytes) -> bool:
    """A refusal of the request's shape: a 400 or 422, or a 500 whose body names a part of the
    request that structured output adds (servers that validate late answer 500). A 400 or 422
    about the context window (a prompt too long for the model) that names no such part is not
    one: every mode would meet it, and moving down would leave the endpoint in a worse mode."""
    lowered = body.lower()
    names_shape = any(word in lowered for word in _SHAPE_WORDS)
    if status in (400, 422):
        return names_shape or b"context" not in lowered
    return status == 500 and names_shape


@dataclass(slots=True)
class Endpoint:
    """What one endpoint takes: the mode to try (`mode`), whether a call in it was answered
    (`settled`), the modes refused on the way. Until the first refusal, calls go at once; after
    it, one call at a time tries the next mode (`probing`) until one is answered, so each
    refused shape after the first is sent once."""

    mode: str = MODES[0]
    settled: bool = False
    refused: list[str] = field(default_factory=list)
    probing: threading.Lock = field(default_factory=threading.Lock)


class Endpoints:
    """The mode of each endpoint, kept for the life of the process (a Lambda container)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._endpoints: dict[tuple[str, str], Endpoint] = {}

    def get(self, base_url: str, model: str) -> Endpoint:
        with self._lock:
            return self._endpoints.setdefault((base_url, model), Endpoint())

    def refused(self, endpoint: Endpoint, mode: str) -> None:
        """`mode` was refused: the endpoint moves to the mode after it (the prompt mode, the
        last, adds nothing a server could refuse)."""
        with self._lock:
            following = min(MODES.index(mode) + 1, len(MODES) - 1)
            if not endpoint.settled and MODES.index(endpoint.mode) < following:
                endpoint.mode = MODES[following]
                endpoint.refused.append(mode)

    def answered(self, endpoint: Endpoint, mode: str) -> bool:
        """A call in `mode` was answered: the endpoint settles on it. True the first time."""
        with self._lock:
            if endpoint.settled:
                return False
            endpoint.mode = mode
            endpoint.settled = True
            return True

    def forget(self) -> None:
        with self._lock:
            self._endpoints.clear()


ENDPOINTS = Endpoints()
