"""The whole loop through the local server, with a real model as every LLM feature's model:
seed → questions → specify → evaluate with two judged metrics (and again with each verdict
asked three times, E6) → answers from documents (E10: embed:similarity with the same model's
embeddings, rag:faithfulness claim by claim, a reference check; pairs without a reference or
contexts not applicable) → improve_prompt → the model answers with the improved prompt →
evaluate again → compare → augment. No answer is a 5xx, every score is in 1-5 with a reason,
the variants are written.

`make test-real-llm` runs it against two real servers of SmolLM2-135M-Instruct: llama-cpp-python's,
which takes `json_object` with a schema or tools but answers 500 to `json_schema` (the service
has to negotiate), and llama.cpp's llama-server, which takes `json_schema`. Without
EVALSVC_REAL_LLM_PYTHON (and EVALSVC_REAL_LLAMA_SERVER, for the second) it is skipped."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.real_llm.model import (
    LLAMA_SERVER,
    PYTHON,
    SERVERS,
    asked_lines,
    chat,
    figures,
    follow,
    llama_server,
    local_service,
    still_running,
)

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


# The mode each server settles on, and the modes it refuses on the way.
SETTLES = {
    "llama-cpp-python": ("json_object", ["json_schema"]),
    "llama-server": ("json_schema", []),
}


@pytest.fixture(scope="module", params=SERVERS)
def server(request: pytest.FixtureRequest) -> str:
    if request.param == "llama-server" and not LLAMA_SERVER:
        pytest.skip(
            "EVALSVC_REAL_LLAMA_SERVER names no llama-server (make test-real-llm builds it)"
        )
    return str(request.param)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory, server: str) -> Iterator[str]:
    with llama_server(
        tmp_path_factory.mktemp("model") / "server.log", server, embeddings=True
    ) as base:
        yield base


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, model: str) -> Iterator[LocalServer]:
    root = tmp_path_factory.mktemp("service")
    local = local_service(root / "data", root / "service.log", model)
    local.start()
    yield local
    local.stop()


class Api:
    """The service over HTTP, as a patient client uses it: work the service hands to its queue
    (503 with Retry-After and a Location, when the model is slower than the request's time) is
    followed there, as `evalsvc evaluate` does; any other 5xx fails the test."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.statuses: list[tuple[str, int, str]] = []
        self.handed_over: list[str] = []

    def _send(self, method: str, path: str, body: Any = None) -> requests.Response:
        # A connection per request: the local server closes one left idle for 5 s (uvicorn's
        # keep-alive), and a request sent on it at that moment is reset.
        response = requests.request(
            method, self.base + path, json=body, headers={"Authorization": DEV_KEY}, timeout=120
        )
        self.statuses.append((f"{method} {path}", response.status_code, response.text[:500]))
        return response

    def call(self, method: str, path: str, body: Any = None) -> Any:
        response = self._send(method, path, body)
        location = response.headers.get("Location")
        if response.status_code == 503 and location and "background" in response.text:
            self.handed_over.append(f"{method} {path}")
            return self._follow("/" + location.lstrip("/"))
        assert response.status_code < 500, f"{method} {path}: {response.text}"
        assert response.status_code in (200, 201), f"{method} {path}: {response.text}"
        return response.json()

    def _follow(self, path: str) -> Any:
        response = follow(lambda: self._send("GET", path))
        assert not still_running(response), f"{path} did not complete in 15 minutes"
        assert response.status_code == 200, f"GET {path}: {response.text}"
        body = response.json()
        assert body.get("status", "complete") == "complete", body
        return body


def evaluate(api: Api, dataset: str, metrics_id: str) -> str:
    """The result id of an evaluation, answered at once or followed in the queue."""
    body = api.call("POST", "/evaluate", {"seed_data_id": dataset, "metrics_id": metrics_id})
    return str(body.get("eval_results_id") or body["results_id"])


def scored_pairs(api: Api, results_id: str) -> list[list[dict[str, Any]]]:
    result = api.call("GET", f"/evaluation/{results_id}?includeAllScores=true")
    assert result["pair_count"] == len(PAIRS)
    assert result["metrics_definitions"] == JUDGED
    pairs: list[list[dict[str, Any]]] = result["all_scored_pairs"]
    return pairs


def assert_scored(pairs: list[list[dict[str, Any]]]) -> None:
    assert len(pairs) == len(JUDGED)
    for metric in pairs:
        assert sorted(p["pair_id"] for p in metric) == [p[0] for p in PAIRS]
        for scored in metric:
            assert scored["score"] in (1, 2, 3, 4, 5), scored
            assert isinstance(scored["reason"], str) and scored["reason"].strip(), scored


DOCUMENTS = ["embed:similarity", "rag:faithfulness", "check:token_f1"]
CONTEXT = "To reset a password, open Settings, then Security, then Reset password."


def scored_from_documents(api: Api, dataset: str, server: str) -> None:
    """E10 with the real model: its embeddings score embed:similarity, its claims and verdicts
    rag:faithfulness; pair c has no reference, d no contexts (not applicable there)."""
    data = []
    for i, q, a in PAIRS:
        pair: dict[str, Any] = {"id": i, "input": q, "output": a}
        if i != "c":
            pair["reference"] = a if i == "a" else "Please ask support from the Help page."
        if i != "d":
            pair["contexts"] = [CONTEXT, "Statements can be exported as PDF from Statements."]
        data.append(pair)
    api.call("POST", f"/data/seed/{dataset}-docs", {"data": data, "system_prompt": PROMPT})
    metrics = api.call("POST", "/specify_questions", {"metrics": DOCUMENTS})
    results_id = evaluate(api, f"{dataset}-docs", metrics["metrics_id"])
    result = api.call("GET", f"/evaluation/{results_id}?includeAllScores=true")
    assert result["score_not_applicable"] == [1, 1, 1], result["score_not_applicable"]
    by_metric = result["all_scored_pairs"]
    assert [sorted(p["pair_id"] for p in m) for m in by_metric] == [
        ["a", "b", "d"],
        ["a", "b", "c"],
        ["a", "b", "d"],
    ]
    for metric in by_metric:
        for scored in metric:
            assert 1.0 <= scored["score"] <= 5.0 and scored["reason"].strip(), scored
    similarity = {p["pair_id"]: p for p in by_metric[0]}
    # a's output is its reference: the same text, cosine 1.
    assert similarity["a"]["score"] == 5.0, similarity["a"]
    assert "cosine similarity" in similarity["a"]["reason"]
    assert all("claims" in p["reason"] or "claim" in p["reason"] for p in by_metric[1])
    print(
        f"\n{server}: from documents: means {result['score_means']}, "
        f"usage {result['usage']['llm_calls']} calls; faithfulness reasons: "
        + json.dumps([p["reason"] for p in by_metric[1]])
    )


def judged_three_times(api: Api, dataset: str, metrics_id: str, server: str) -> None:
    """judge_samples 3 (E6), clustered by input: every score the mean of three sampled answers
    from 1 to 5, each question's judge_noise_sd a number, the clustered figures there; the
    same evaluation again asks the model nothing (every sample cached)."""
    asked = {"seed_data_id": dataset, "metrics_id": metrics_id}
    sampled = {**asked, "judge_samples": 3, "cluster_by": "input"}
    first = api.call("POST", "/evaluate", sampled)
    results_id = str(first.get("eval_results_id") or first["results_id"])
    result = api.call("GET", f"/evaluation/{results_id}?includeAllScores=true")
    assert (result["judge_samples"], result["cluster_by"]) == (3, "input")
    for metric in result["all_scored_pairs"]:
        for scored in metric:
            thirds = scored["score"] * 3
            assert 3 <= thirds <= 15 and abs(thirds - round(thirds)) < 1e-9, scored
    noise = result["score_judge_noise_sds"]
    assert len(noise) == len(JUDGED) and all(isinstance(sd, float) and sd >= 0 for sd in noise)
    assert [c["clusters"] for c in result["score_clustered"]] == [len(PAIRS)] * len(JUDGED)
    again = api.call("POST", "/evaluate", sampled)
    repeat_id = str(again.get("eval_results_id") or again["results_id"])
    repeat = api.call("GET", f"/evaluation/{repeat_id}")
    assert repeat["usage"]["llm_calls"] == 0, repeat["usage"]
    assert repeat["score_judge_noise_sds"] == noise
    print(
        f"\n{server}: judge_samples 3: means {result['score_means']}, judge_noise_sd {noise}, "
        f"usage {result['usage']['llm_calls']} calls"
    )


def test_the_whole_loop_with_a_real_model(service: LocalServer, model: str, server: str) -> None:
    api = Api(service.base_url)
    dataset = f"loop-{uuid.uuid4().hex[:6]}"
    seed = [{"id": i, "input": q, "output": a} for i, q, a in PAIRS]
    api.call("POST", f"/data/seed/{dataset}", {"data": seed, "system_prompt": PROMPT})

    questions = api.call("POST", "/questions", {"system_prompt": PROMPT})
    assert questions["definitions"] and all(
        isinstance(q, str) and q.strip() for q in questions["definitions"]
    )

    metrics = api.call("POST", "/specify_questions", {"metrics": JUDGED})
    baseline = evaluate(api, dataset, metrics["metrics_id"])
    assert_scored(scored_pairs(api, baseline))
    judged_three_times(api, dataset, metrics["metrics_id"], server)
    scored_from_documents(api, dataset, server)

    improved = api.call(
        "POST",
        "/improve_prompt",
        {
            "seed_data_id": dataset,
            "prompt_comparison_results": {
                "metrics_id": metrics["metrics_id"],
                "candidates": [{"prompt": PROMPT, "eval_results_id": baseline}],
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
    candidate = evaluate(api, f"{dataset}-v2", metrics["metrics_id"])
    assert_scored(scored_pairs(api, candidate))

    compared = api.call("POST", "/compare", {"baseline_id": baseline, "candidate_id": candidate})
    assert compared["pairs_matched"] == len(PAIRS)
    assert [m["metric"] for m in compared["metrics"]] == JUDGED

    made = api.call("POST", "/augment", {"seed_data_id": dataset, "multiple": 2})
    # Answered at once, or (handed to the queue) the synthetic dataset it was followed to.
    synthetic_id = made.get("synthetic_data_id") or made["id"]
    synthetic = api.call("GET", f"/data/synthetic/{synthetic_id}")
    assert len(synthetic["data"]) == 2 * len(PAIRS)
    assert all(p["input"].strip() for p in synthetic["data"])

    # Every answer below 500 but the hand-overs to the queue (each followed to its end).
    fails = [s for s in api.statuses if s[1] >= 500 and "background" not in s[2]]
    assert not fails, fails
    print(f"\n{server}: handed to the queue: {api.handed_over or 'nothing'}")
    report(service.log_path, server)


def report(log_path: Path | None, server: str) -> None:
    """What each feature's asks took, printed (pytest -s shows it) and checked for sense."""
    assert log_path is not None
    lines = log_path.read_text().splitlines()
    asked = list(asked_lines(lines))
    by_feature = figures(lines)
    rows = {k: v.row() for k, v in by_feature.items()}
    print(f"\n{server}, per feature:", json.dumps(rows, indent=1))
    # Every feature asked the model; the endpoint settled once, on the mode its server takes,
    # and each mode it refuses was sent once, no more.
    assert set(by_feature) >= {"questions", "judge", "improve_prompt", "augment"}, by_feature
    mode, refused = SETTLES[server]
    assert sum(line["shape_refusals"] for line in asked) == len(refused)
    settled = [json.loads(x) for x in lines if '"structured output settled"' in x]
    assert [(s["mode"], s["refused_modes"]) for s in settled] == [(mode, refused)]
