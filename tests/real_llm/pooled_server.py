"""llama-cpp-python's OpenAI-compatible server, its model's embeddings mean-pooled: run by the
real model's interpreter (.venv-real-llm) with the server's own arguments.

The server has no pooling setting: with `--embedding true` it gives each text the vectors of its
tokens when the model names no pooling of its own, as SmolLM2 (a chat model) does not, and the
service takes those as an unusable answer. This starts the same server with mean pooling, as
llama-server's `--pooling mean` does, so that the same small model serves embeddings."""

from __future__ import annotations

import runpy
from typing import Any

import llama_cpp


class MeanPooled(llama_cpp.Llama):  # type: ignore[misc]
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("pooling_type", llama_cpp.LLAMA_POOLING_TYPE_MEAN)
        super().__init__(*args, **kwargs)


llama_cpp.Llama = MeanPooled
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
