"""Per-feature figures of a real model behind the service: for the judge, questions,
improve_prompt and augment, the share of asks whose first answer was usable, the attempts per
usable answer, and the seconds per call on this machine. Read from the service's own
"llm asked" log lines (POWERTOOLS_LOG_LEVEL=DEBUG), so what is counted is what the service did.

    make test-real-llm          # installs .venv-real-llm once
    EVALSVC_REAL_LLM_PYTHON=.venv-real-llm/bin/python .venv/bin/python bench/real_llm.py

The model is SmolLM2-135M-Instruct behind llama-cpp-python's server or llama.cpp's
llama-server (--server; tests/real_llm/model.py), one call at a time (EVALSVC_JUDGE_CONCURRENCY=1:
llama-cpp-python decodes one request at a time, and the figures are per call). --structured
pins a mode (EVALSVC_LLM_STRUCTURED) to measure it on a server that would settle on another.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.conftest import DEV_KEY
from tests.real_llm.model import (
    PYTHON,
    SERVERS,
    figures,
    follow,
    llama_server,
    local_service,
)

PROMPTS = [
    "You are a support assistant for a banking app. Always answer politely. Keep every answer "
    "under 60 words.",
    "You translate English into French. Never add explanations. Keep names as they are.",
    "You are a cooking assistant. Always list the ingredients first. Answer in metric units.",
    "You write SQL for PostgreSQL. Only answer with one query. Never use SELECT *.",
    "You are a tutor for children aged 8 to 10. Use short sentences. Never give the answer "
    "directly; ask a guiding question.",
    "You summarise news articles. Summaries must be three sentences at most and must not "
    "give opinions.",
]
PAIRS = [
    ("How do I reset my password?", "Open Settings, then Security, then Reset password."),
    ("Can I export my statements?", "Yes: open Statements and choose Export as PDF."),
    ("Why was my card declined?", "Figure it out yourself."),
    ("How do I close my account?", "Please contact support from the Help page."),
    ("What is the daily transfer limit?", "It is 5,000 euros a day; you can ask to raise it."),
    ("Is there a fee for paying abroad?", "No idea, read the terms."),
    ("How do I add a payee?", "Go to Payments, choose Add payee and confirm with your code."),
    ("Can I freeze my card?", "Yes. In Cards, switch on Freeze; switch it off to unfreeze."),
]
JUDGED = ["Is the answer polite?", "Does the answer address the question that was asked?"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=len(PROMPTS), help="questions and improve")
    parser.add_argument("--server", choices=SERVERS, default=SERVERS[0])
    parser.add_argument("--logs", type=Path, help="keep the servers' logs in this directory")
    parser.add_argument(
        "--structured",
        default="auto",
        help="EVALSVC_LLM_STRUCTURED: auto (negotiated), or a mode to pin",
    )
    args = parser.parse_args()
    if not PYTHON:
        sys.exit("set EVALSVC_REAL_LLM_PYTHON (make test-real-llm installs .venv-real-llm)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        logs = args.logs or root
        logs.mkdir(parents=True, exist_ok=True)
        with llama_server(logs / "model.log", args.server) as model:
            service = local_service(root / "data", logs / "service.log", model, args.structured)
            service.start()
            try:
                statuses = run(service.base_url, args.rounds)
            finally:
                service.stop()
            assert service.log_path is not None
            lines = service.log_path.read_text().splitlines()
    print(f"requests by status: {json.dumps(statuses)}")
    print(
        f"{'feature':<16}{'asks':>6}{'usable':>8}{'first valid':>13}{'attempts/valid':>16}"
        f"{'out of time':>13}{'refused shapes':>16}{'s/call':>8}"
    )
    for feature, found in figures(lines).items():
        row = found.row()
        print(
            f"{feature:<16}{row['asks']:>6}{row['answered']:>8}"
            f"{_share(row['first_attempt_valid']):>13}{_num(row['attempts_per_valid_answer']):>16}"
            f"{row['out_of_time']:>13}{row['shape_refusals']:>16}{_num(row['seconds_per_call']):>8}"
        )
        for why, count in _common(found.unusable):
            print(f"    {count} x {why}")


def run(base: str, rounds: int) -> dict[str, int]:
    statuses: dict[str, int] = {}

    def call(method: str, path: str, body: Any = None) -> Any:
        started = time.monotonic()
        response = requests.request(
            method, base + path, json=body, headers={"Authorization": DEV_KEY}, timeout=300
        )
        key = f"{method} {path.split('/')[1]} {response.status_code}"
        statuses[key] = statuses.get(key, 0) + 1
        print(f"{method} {path} → {response.status_code} in {time.monotonic() - started:.1f} s")
        if response.status_code == 200:
            return response.json()
        print(f"    {response.text[:300]}")
        if response.status_code == 503 and response.headers.get("Location"):
            return follow_up(response.headers["Location"])
        return None

    def follow_up(location: str) -> Any:
        """Work the request handed to the queue: asked for until it is done, as the CLI does."""
        url = location if location.startswith("http") else f"{base}/{location.lstrip('/')}"
        started = time.monotonic()
        # A fresh connection each time: the local server closes one left idle for 5 s
        # (uvicorn's keep-alive), and a poll on it at that moment is reset.
        response = follow(lambda: requests.get(url, headers={"Authorization": DEV_KEY}, timeout=60))
        body = response.json() if response.status_code == 200 else {}
        waited = time.monotonic() - started
        print(f"    {response.status_code} {body.get('status', '')} after {waited:.0f} s more")
        return body or None

    dataset = f"bench-{uuid.uuid4().hex[:6]}"
    seed = [{"id": f"p{i}", "input": q, "output": a} for i, (q, a) in enumerate(PAIRS)]
    call("POST", f"/data/seed/{dataset}", {"data": seed, "system_prompt": PROMPTS[0]})
    for prompt in (PROMPTS * rounds)[:rounds]:
        call("POST", "/questions", {"system_prompt": prompt})
    metrics = call("POST", "/specify_questions", {"metrics": JUDGED})
    result = call(
        "POST", "/evaluate", {"seed_data_id": dataset, "metrics_id": metrics["metrics_id"]}
    )
    for k in range(rounds):
        means = [1.5 + 0.5 * (k % 3), 2.0 + 0.5 * (k % 4)]
        candidates = [{"prompt": PROMPTS[0], "score_means": means}]
        if result is not None and k % 2 == 0:
            results_id = result.get("eval_results_id") or result["results_id"]
            candidates = [{"prompt": PROMPTS[0], "eval_results_id": results_id}]
        call(
            "POST",
            "/improve_prompt",
            {
                "seed_data_id": dataset,
                "prompt_comparison_results": {
                    "metrics_id": metrics["metrics_id"],
                    "candidates": candidates,
                },
            },
        )
    call("POST", "/augment", {"seed_data_id": dataset, "multiple": 2})
    return statuses


def _share(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f} %"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _common(problems: list[str]) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for problem in problems:
        counts[problem[:120]] = counts.get(problem[:120], 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])[:5]


if __name__ == "__main__":
    main()
