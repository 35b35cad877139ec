"""Juries (E13) from the command line end to end: `evalsvc serve` in a subprocess with three
fake OpenAI-compatible jurors, each its own server and price; `evalsvc metrics --judges --jury`
creates a set the service stores with its jury, a jury the service refuses is its 400 on
stderr, and `evalsvc evaluate` prints each jury's line and each juror's calls and cost below the
table, the figures those of GET /evaluation."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.e2e.test_cli_local import evalsvc
from tests.integration.test_jury import JURORS, NAMES, OUTPUTS, PRICES
from tests.jurors import jury_env, running_jurors

HEADERS = {"Authorization": DEV_KEY}


@pytest.fixture(scope="module")
def jury_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with running_jurors(JURORS) as fakes:
        local = LocalServer(
            Path(tmp_path_factory.mktemp("jury")),
            judge_url=fakes[NAMES[0]].base_url,
            extra_env=jury_env(fakes, PRICES),
        )
        local.start()
        try:
            yield local
        finally:
            local.stop()


def test_a_jury_made_and_shown_from_the_command_line(jury_server: LocalServer) -> None:
    base = jury_server.base_url
    data = [{"id": f"p{k}", "input": f"q{k}", "output": out} for k, out in enumerate(OUTPUTS)]
    assert requests.post(
        f"{base}/data/seed/jury", json={"data": data}, headers=HEADERS, timeout=30
    ).ok

    made = evalsvc(
        jury_server,
        "metrics",
        "--question",
        "Does the output say please?",
        "--check",
        "non_empty",
        "--judges",
        ",".join(NAMES[:2]),
        "--judges",
        NAMES[2],
        "--jury",
        "median",
    )
    assert made.returncode == 0, made.stderr
    metrics_id = made.stdout.strip()
    assert made.stderr.splitlines()[-1] == (
        f"its questions are judged by a jury of 3 (median): {', '.join(NAMES)}"
    )
    shown = requests.get(f"{base}/question/{metrics_id}", headers=HEADERS, timeout=30).json()
    assert shown["judges"] == list(NAMES) and shown["jury"] == "median"

    done = evalsvc(jury_server, "evaluate", "--seed", "jury", "--metrics", metrics_id)
    assert done.returncode == 0, done.stderr
    found = re.search(r"evaluation (ev_\w+)", done.stderr)
    assert found is not None, done.stderr
    result = requests.get(f"{base}/evaluation/{found[1]}", headers=HEADERS, timeout=30).json()
    jury = result["score_juries"][0]
    means = ", ".join(f"{j['judge']} {j['mean']:.2f}" for j in jury["per_judge"])
    lines = done.stdout.rstrip("\n").splitlines()
    assert f"metric 0: jury of 3 (median): alpha {jury['jury']['alpha']:.2f}; {means}" in lines
    assert not any(line.startswith("metric 1: jury") for line in lines)
    by_model = {part["model"]: part for part in result["usage"]["by_model"]}
    assert set(by_model) == set(NAMES)
    start = lines.index("by model:")
    assert lines[start + 1 : start + 4] == [
        f"  {part['model']}: {part['llm_calls']} calls, {part['cache_hits']} cache hits, "
        f"${part['cost_usd']:.6f}"
        for part in result["usage"]["by_model"]
    ]


@pytest.mark.parametrize(
    ("judges", "status", "said"),
    [
        ("openai:juror-a,openai:unknown", 400, "openai:unknown"),
        ("openai:juror-a", 400, "judges"),
        # Past the most a request may carry, the service answers 413 (its shape's limit).
        (",".join([*NAMES, *NAMES]), 413, "judges"),
    ],
)
def test_a_jury_the_service_refuses_is_its_error(
    jury_server: LocalServer, judges: str, status: int, said: str
) -> None:
    refused = evalsvc(jury_server, "metrics", "--question", "q", "--judges", judges)

    assert refused.returncode == 1
    assert refused.stdout == ""
    (line,) = refused.stderr.splitlines()
    assert line.startswith(f"evalsvc: HTTP {status}: ") and said in line, line
