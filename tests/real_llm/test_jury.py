"""E13 with real models: a jury of two judges, each SmolLM2-135M-Instruct behind a different real
server family (llama-cpp-python's, which refuses `json_schema` and takes `json_object`, and
llama.cpp's llama-server, which takes `json_schema`), through the local server.

Every judged pair is asked of both; each judge's score of each pair is an integer 1-5, the
pair's score their mean and its reason one of theirs; each metric has the jury's alpha (a
number, or null when the judges gave one value throughout) and each judge's mean, which agree
with the judges' scores; usage counts each judge's calls at its own price; each server settled
on its own structured-output mode (one refusing json_schema changed nothing for the other);
and the same evaluation again asks neither model anything (each judge's verdicts cached under
its own name). Skipped unless `make test-real-llm` named both servers."""

from __future__ import annotations

import json
import statistics
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import LocalServer
from tests.real_llm.model import LLAMA_SERVER, PYTHON, llama_server, local_service
from tests.real_llm.test_loop import JUDGED, PAIRS, PROMPT, Api, evaluate

pytestmark = pytest.mark.skipif(
    not (PYTHON and LLAMA_SERVER),
    reason="make test-real-llm runs it, with both real servers (llama-cpp-python, llama-server)",
)

# Each judge is the model as its server serves it: the name sent is the alias it answers to.
JUDGES = {"openai:smollm2-python": "llama-cpp-python", "openai:smollm2-server": "llama-server"}
PRICES = {
    "openai:smollm2-python": {"input": 0.1, "output": 0.2},
    "openai:smollm2-server": {"input": 0.3, "output": 0.6},
}
SETTLES = {
    "llama-cpp-python": ("json_object", ["json_schema"]),
    "llama-server": ("json_schema", []),
}


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Both servers, each serving the model under its judge's name: name -> base URL."""
    root = tmp_path_factory.mktemp("jury-models")
    bases: dict[str, str] = {}
    started = []
    try:
        for name, server in JUDGES.items():
            context = llama_server(root / f"{server}.log", server, alias=name.split(":", 1)[1])
            bases[name] = context.__enter__()
            started.append(context)
        yield bases
    finally:
        for context in reversed(started):
            context.__exit__(None, None, None)


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory, servers: dict[str, str]
) -> Iterator[LocalServer]:
    root = tmp_path_factory.mktemp("jury-service")
    first, second = JUDGES
    local = local_service(
        root / "data",
        root / "service.log",
        servers[first],
        extra_env={
            "EVALSVC_LLM": first,
            "EVALSVC_EMBEDDINGS": "",
            "EVALSVC_JUDGES": ",".join(JUDGES),
            "EVALSVC_JUDGE_ENDPOINTS": json.dumps({second: {"base_url": servers[second]}}),
            "EVALSVC_PRICES": json.dumps(PRICES),
        },
    )
    local.start()
    yield local
    local.stop()


def test_a_jury_of_two_real_server_families(service: LocalServer) -> None:
    api = Api(service.base_url)
    dataset = f"jury-{uuid.uuid4().hex[:6]}"
    seed = [{"id": i, "input": q, "output": a} for i, q, a in PAIRS]
    api.call("POST", f"/data/seed/{dataset}", {"data": seed, "system_prompt": PROMPT})
    metrics = api.call(
        "POST", "/specify_questions", {"metrics": JUDGED, "judges": list(JUDGES), "jury": "mean"}
    )
    assert metrics["judges"] == list(JUDGES)

    results_id = evaluate(api, dataset, metrics["metrics_id"])
    result = api.call("GET", f"/evaluation/{results_id}?includeAllScores=true")

    for m, scored in enumerate(result["all_scored_pairs"]):
        assert sorted(p["pair_id"] for p in scored) == [p[0] for p in PAIRS]
        rows = []
        for pair in scored:
            by_judge = pair["judge_scores"]
            assert list(by_judge) == list(JUDGES), pair
            assert all(score in (1, 2, 3, 4, 5) for score in by_judge.values()), pair
            assert pair["score"] == pytest.approx(statistics.fmean(by_judge.values())), pair
            assert isinstance(pair["reason"], str) and pair["reason"].strip(), pair
            rows.append([by_judge[name] for name in JUDGES])
        jury = result["score_juries"][m]
        assert jury["jury"]["judges"] == list(JUDGES) and jury["jury"]["aggregate"] == "mean"
        alpha = jury["jury"]["alpha"]
        assert alpha is None or -1.5 <= alpha <= 1.0, jury
        means = [statistics.fmean(row[j] for row in rows) for j in range(len(JUDGES))]
        assert [p["mean"] for p in jury["per_judge"]] == pytest.approx(means, abs=1e-9)

    usage = result["usage"]
    by_model = {part["model"]: part for part in usage["by_model"]}
    assert set(by_model) == set(JUDGES)
    for name in JUDGES:
        # Each judge asked about every (pair, metric) at least once (retries counted too).
        assert by_model[name]["llm_calls"] >= len(PAIRS) * len(JUDGED), by_model[name]
        assert by_model[name]["cost_usd"] > 0
    assert usage["cost_usd"] == pytest.approx(sum(p["cost_usd"] for p in by_model.values()))

    again = api.call(
        "POST", "/evaluate", {"seed_data_id": dataset, "metrics_id": metrics["metrics_id"]}
    )
    repeat = api.call("GET", f"/evaluation/{again.get('eval_results_id') or again['results_id']}")
    assert repeat["usage"]["llm_calls"] == 0, repeat["usage"]

    fails = [s for s in api.statuses if s[1] >= 500 and "background" not in s[2]]
    assert not fails, fails
    _settled_per_judge(service.log_path)
    print(
        "\njury of two real server families: means "
        + json.dumps(result["score_means"])
        + ", juries "
        + json.dumps(result["score_juries"])
        + ", usage "
        + json.dumps(usage)
    )


def _settled_per_judge(log_path: Path | None) -> None:
    """Each server settled once, on the mode it takes, the other's refusal changing nothing."""
    assert log_path is not None
    settled: list[dict[str, Any]] = [
        json.loads(line)
        for line in log_path.read_text().splitlines()
        if '"structured output settled"' in line
    ]
    found = {(s["mode"], tuple(s["refused_modes"])) for s in settled}
    assert found == {(mode, tuple(refused)) for mode, refused in SETTLES.values()}, settled
    assert len(settled) == len(JUDGES), settled
