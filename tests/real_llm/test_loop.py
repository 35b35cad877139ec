"""The whole loop through the local server, with a real model as every LLM feature's model:
seed → questions → specify → evaluate with two judged metrics → improve_prompt → the model
answers with the improved prompt → evaluate again → compare → augment. No answer is a 5xx, every
score is in 1-5 with a reason, the variants are written.

`make test-real-llm` runs it (llama-cpp-python's server and SmolLM2-135M-Instruct, in
.venv-real-llm); without EVALSVC_REAL_LLM_PYTHON it is skipped. The server takes only
`json_object` with a schema or tools, not `json_schema`: the service has to negotiate."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.real_llm.model import PYTHON, asked_lines, chat, figures, llama_server

pytestmark = pytest.mark.skipif(
    not PYTHON, reason="make test-real-llm runs it, with a real model in .venv-real-llm"
)

PROMPT = (
    "You are a support assistant for a banking app. Always answer politely. "
    "Keep every answer under 60 words."
)
PAIRS = [
    ("a", "How do I reset my password?", "Open Settings, then Security, then Reset password."),
    ("b", "Can I export my statements?", "Yes: open Statements and choose Export as PDF."),
    ("c", "Why was my card declined?", "Figure it out yourself."),
    (
        "d",
        "How do I close my account?",
        "Please contact support from the Help page; we close accounts within two days.",
    ),
]
JUDGED = ["Is the answer polite?", "Does the answer address the question that was asked?"]


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with llama_server(tmp_path_factory.mktemp("model") / "server.log") as base:
        yield base


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, model: str) -> Iterator[LocalServer]:
    root = tmp_path_factory.mktemp("service")
    local = LocalServer(
        root / "data",
        log_path=root / "service.log",
        extra_env={
            "EVALSVC_LLM": "openai:smollm2",
            "OPENAI_BASE_URL": model,
            # One call at a time: the server decodes one request at a time, and a call waiting
            # in its queue would count the wait as the call's time.
            "JUDGE_CONCURRENCY": "1",
            "POWERTOOLS_LOG_LEVEL": "DEBUG",
        },
    )
    local.start()
    yield local
    local.stop()


class Api:
    """The service over HTTP; every answer's status is kept, to find any 5xx."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.session = requests.Session()
        self.session.headers["Authorization"] = DEV_KEY
        self.statuses: list[tuple[str, int, str]] = []

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = self.session.request(method, self.base + path, json=body, timeout=120)
        self.statuses.append((f"{method} {path}", response.status_code, response.text[:500]))
        assert response.status_code < 500, f"{method} {path}: {response.text}"
        assert response.status_code in (200, 201), f"{method} {path}: {response.text}"
        return response.json()


def scored_pairs(api: Api, results_id: str) -> list[list[dict[str, Any]]]:
    result = api.call("GET", f"/evaluation/{results_id}?includeAllScores=true")
    assert result["pair_count"] == len(PAIRS)
    pairs: list[list[dict[str, Any]]] = result["all_scored_pairs"]
    return pairs


def assert_scored(pairs: list[list[dict[str, Any]]]) -> None:
    assert len(pairs) == len(JUDGED)
    for metric in pairs:
        assert sorted(p["pair_id"] for p in metric) == [p[0] for p in PAIRS]
        for scored in metric:
            assert scored["score"] in (1, 2, 3, 4, 5), scored
            assert isinstance(scored["reason"], str) and scored["reason"].strip(), scored


def test_the_whole_loop_with_a_real_model(service: LocalServer, model: str) -> None:
    api = Api(service.base_url)
    dataset = f"loop-{uuid.uuid4().hex[:6]}"
    seed = [{"id": i, "input": q, "output": a} for i, q, a in PAIRS]
    api.call("POST", f"/data/seed/{dataset}", {"data": seed, "system_prompt": PROMPT})

    questions = api.call("POST", "/questions", {"system_prompt": PROMPT})
    assert questions["definitions"] and all(
        isinstance(q, str) and q.strip() for q in questions["definitions"]
    )

    metrics = api.call("POST", "/specify_questions", {"metrics": JUDGED})
    baseline = api.call(
        "POST", "/evaluate", {"seed_data_id": dataset, "metrics_id": metrics["metrics_id"]}
    )
    assert [s["metric"] for s in baseline["scores"]] == JUDGED
    assert_scored(scored_pairs(api, baseline["eval_results_id"]))

    improved = api.call(
        "POST",
        "/improve_prompt",
        {
            "seed_data_id": dataset,
            "prompt_comparison_results": {
                "metrics_id": metrics["metrics_id"],
                "candidates": [{"prompt": PROMPT, "eval_results_id": baseline["eval_results_id"]}],
            },
        },
    )
    assert improved["original_prompt"] == PROMPT and improved["improved_prompt"].strip()

    # The application's model answers the same inputs with the improved prompt: the candidate.
    answers = [
        {"id": i, "input": q, "output": chat(model, improved["improved_prompt"], q) or "(empty)"}
        for i, q, _ in PAIRS
    ]
    api.call(
        "POST",
        f"/data/seed/{dataset}-v2",
        {"data": answers, "system_prompt": improved["improved_prompt"]},
    )
    candidate = api.call(
        "POST", "/evaluate", {"seed_data_id": f"{dataset}-v2", "metrics_id": metrics["metrics_id"]}
    )
    assert_scored(scored_pairs(api, candidate["eval_results_id"]))

    compared = api.call(
        "POST",
        "/compare",
        {"baseline_id": baseline["eval_results_id"], "candidate_id": candidate["eval_results_id"]},
    )
    assert compared["pairs_matched"] == len(PAIRS)
    assert [m["metric"] for m in compared["metrics"]] == JUDGED

    made = api.call("POST", "/augment", {"seed_data_id": dataset, "multiple": 2})
    assert (made["seed_data_size"], made["synthetic_data_size"]) == (len(PAIRS), 2 * len(PAIRS))
    synthetic = api.call("GET", f"/data/synthetic/{made['synthetic_data_id']}")
    assert len(synthetic["data"]) == 2 * len(PAIRS)
    assert all(p["input"].strip() for p in synthetic["data"])

    assert all(status < 500 for _, status, _ in api.statuses), api.statuses
    report(service.log_path)


def report(log_path: Path | None) -> None:
    """What each feature's asks took, printed (pytest -s shows it) and checked for sense."""
    assert log_path is not None
    lines = log_path.read_text().splitlines()
    asked = list(asked_lines(lines))
    by_feature = figures(lines)
    print("\nper feature:", json.dumps({k: v.row() for k, v in by_feature.items()}, indent=1))
    # Every feature asked the model, and the negotiation refused json_schema once, no more.
    assert set(by_feature) >= {"questions", "judge", "improve_prompt", "augment"}, by_feature
    assert sum(line["shape_refusals"] for line in asked) == 1
    settled = [json.loads(x) for x in lines if '"structured output settled"' in x]
    assert [(s["mode"], s["refused_modes"]) for s in settled] == [("json_object", ["json_schema"])]
