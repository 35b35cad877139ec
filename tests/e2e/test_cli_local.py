"""The user's command line (`evalsvc push|evaluate|compare|report`) end to end: the CLI in a
subprocess against the local server (`evalsvc serve`), over HTTP on 127.0.0.1."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.conftest import ROOT
from tests.e2e.conftest import DEV_KEY, LocalServer, free_port

HEADERS = {"Authorization": DEV_KEY}
BIG = 1000
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def cli_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    local = LocalServer(
        Path(tmp_path_factory.mktemp("cli")),
        extra_env={
            # Small chunks: a 1,000-pair evaluation is several chunks, followed by several polls.
            "EVALSVC_INLINE_MAX_CHECKS": "50",
            "EVALSVC_CHUNK_CHECKS": "200",
        },
    )
    local.start()
    yield local
    local.stop()


def cli_env(server: LocalServer, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update({"EVALSVC_URL": server.base_url + "/", "EVALSVC_API_KEY": DEV_KEY})
    env.update({"EVALSVC_POLL_SECONDS": "0.1", "COLUMNS": "160"})
    env.update(more)
    return env


def evalsvc(server: LocalServer, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalsvc_tools.cli", *args],
        cwd=ROOT,
        env=cli_env(server, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def metrics(server: LocalServer, *definitions: str) -> str:
    response = requests.post(
        f"{server.base_url}/specify_questions",
        json={"metrics": list(definitions)},
        headers=HEADERS,
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return str(response.json()["metrics_id"])


def dataset(server: LocalServer, dataset_id: str) -> requests.Response:
    return requests.get(f"{server.base_url}/data/seed/{dataset_id}", headers=HEADERS, timeout=30)


def evaluate(server: LocalServer, seed: str, metrics_id: str) -> str:
    done = evalsvc(server, "evaluate", "--seed", seed, "--metrics", metrics_id, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "complete"
    return str(result["results_id"])


def test_push_writes_a_jsonl_file_then_a_csv_file_replaces_it(
    cli_server: LocalServer, tmp_path: Path
) -> None:
    rows = [
        {
            "id": "q1",
            "input": "How do I reset my password? 🔑",
            "output": "Settings.",
            "labels": ["account"],
        },
        {"input": "Can I export my data?", "output": "Yes: Settings, Data, Export."},
    ]
    pushed = evalsvc(
        cli_server,
        "push",
        str(jsonl(tmp_path / "faq.jsonl", rows)),
        "--seed",
        "cli-faq",
        "--system-prompt",
        "Be brief.",
    )

    assert pushed.returncode == 0, pushed.stderr
    assert pushed.stdout == "wrote 2 pairs to seed dataset cli-faq (it holds exactly these now)\n"
    body = dataset(cli_server, "cli-faq").json()
    assert body["system_prompt"] == "Be brief."
    assert [(p["input"], p["output"], p["metadata"]["labels"]) for p in body["data"]] == [
        (r["input"], r["output"], r.get("labels", [])) for r in rows
    ]
    assert body["data"][0]["id"] == "q1"

    csv_file = tmp_path / "faq.csv"
    csv_file.write_text('id,input,output,labels\nc1,"Hi, there",Hello,greeting;short\n', "utf-8")
    replaced = evalsvc(cli_server, "push", str(csv_file), "--seed", "cli-faq")

    assert replaced.returncode == 0, replaced.stderr
    (pair,) = dataset(cli_server, "cli-faq").json()["data"]
    assert (pair["id"], pair["input"], pair["metadata"]["labels"]) == (
        "c1",
        "Hi, there",
        ["greeting", "short"],
    )


def test_push_writes_reference_and_contexts_that_the_local_server_reads_back(
    cli_server: LocalServer, tmp_path: Path
) -> None:
    # A CSV whose contexts are a JSON array in their cell, one pair long enough to be stored
    # compressed in parts (300,000 bytes of texts), one with an empty list, one with neither
    long = ["🔑" * 20_000] * 5
    cell = '"[' + ",".join(f'""{c}""' for c in long) + ']"'
    csv_file = tmp_path / "rag.csv"
    csv_file.write_text(
        "id,input,output,reference,contexts\n"
        'r1,"When, exactly?",In 1932.,It opened in 1932.,'
        '"[""Opened in 1932."", ""<b>8</b> years""]"\n'
        f"r2,Long?,Yes.,{'🔑' * 100_000},{cell}\n"
        "r3,None?,None.,,[]\n"
        "r4,Plain?,Plain.,,\n",
        "utf-8",
    )

    pushed = evalsvc(cli_server, "push", str(csv_file), "--seed", "cli-rag")

    assert pushed.returncode == 0, pushed.stderr
    data = dataset(cli_server, "cli-rag").json()["data"]
    assert [(p["id"], p.get("reference"), p.get("contexts")) for p in data] == [
        ("r1", "It opened in 1932.", ["Opened in 1932.", "<b>8</b> years"]),
        ("r2", "🔑" * 100_000, long),
        ("r3", None, []),
        ("r4", None, None),
    ]
    assert "reference" not in data[3] and "contexts" not in data[3]


def test_a_bad_file_writes_nothing_and_names_every_bad_line(
    cli_server: LocalServer, tmp_path: Path
) -> None:
    good = jsonl(tmp_path / "good.jsonl", [{"id": "k", "input": "kept", "output": "kept"}])
    assert evalsvc(cli_server, "push", str(good), "--seed", "cli-kept").returncode == 0
    bad = jsonl(
        tmp_path / "bad.jsonl",
        [
            {"id": "a", "input": "fine", "output": "fine"},
            {"id": "a", "input": "again", "output": "x"},
            {"input": "x" * 100_001, "output": "x"},
        ],
    )

    over_old = evalsvc(cli_server, "push", str(bad), "--seed", "cli-kept")
    over_new = evalsvc(cli_server, "push", str(bad), "--seed", "cli-never")

    assert over_old.returncode == over_new.returncode == 2
    assert over_old.stdout == ""
    assert over_old.stderr.splitlines() == [
        f"{bad}:2: id 'a' is also on line 1",
        f"{bad}:3: input has 100,001 characters, over the limit of 100,000",
        f"evalsvc: {bad}: 2 bad rows (listed above); nothing was sent",
    ]
    assert [p["input"] for p in dataset(cli_server, "cli-kept").json()["data"]] == ["kept"]
    assert dataset(cli_server, "cli-never").status_code == 404


def read_terminal(master: int, process: subprocess.Popen[str], timeout: float) -> bytes:
    """Everything written to the terminal until the process ends (or the deadline passes)."""
    received = bytearray()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer of the terminal has gone
                break
            if not chunk:
                break
            received += chunk
        elif process.poll() is not None:
            break
    return bytes(received)


def test_evaluate_draws_a_progress_bar_on_a_terminal_and_prints_a_table(
    cli_server: LocalServer, tmp_path: Path
) -> None:
    rows = [
        {"id": f"p{k}", "input": f"question {k}", "output": "please wait" if k % 3 else "no"}
        for k in range(BIG)
    ]
    assert (
        evalsvc(
            cli_server, "push", str(jsonl(tmp_path / "big.jsonl", rows)), "--seed", "cli-big"
        ).returncode
        == 0
    )
    metrics_id = metrics(cli_server, "check:contains:please", "check:max_words:1")
    master, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "evalsvc_tools.cli",
            "evaluate",
            "--seed",
            "cli-big",
            "--metrics",
            metrics_id,
        ],
        cwd=ROOT,
        env=cli_env(cli_server, TERM="xterm-256color", EVALSVC_POLL_SECONDS="0.05"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=terminal,
        text=True,
    )
    os.close(terminal)
    try:
        drawn = read_terminal(master, process, timeout=120)
        out = process.stdout.read() if process.stdout else ""
        assert process.wait(timeout=30) == 0, drawn.decode(errors="replace")
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()

    text = drawn.decode("utf-8", "replace")
    assert "\x1b[" in text  # drawn as a live bar, redrawn in place
    plain = ANSI.sub("", text)
    assert "evaluation ev_" in plain and "scoring" in plain
    shown = [
        int(done) for done, total in re.findall(r"(\d+)/(\d+) pairs", plain) if total == str(BIG)
    ]
    assert shown, plain
    assert shown == sorted(shown) and shown[0] < shown[-1] == BIG  # it advanced to the end
    assert "━" in plain  # the bar itself
    # The table goes to stdout, which is not a terminal here: no escape codes in it.
    assert "\x1b" not in out
    assert "check:contains:please" in out and "check:max_words:1" in out
    assert "3.66" in out  # 1 + 4 * 666 / 1000 says please
    assert "of dataset cli-big" in out


def test_evaluate_off_a_terminal_prints_plain_progress_lines(
    cli_server: LocalServer, tmp_path: Path
) -> None:
    rows = [{"id": f"p{k}", "input": "q", "output": "a b c"} for k in range(20)]
    assert (
        evalsvc(
            cli_server, "push", str(jsonl(tmp_path / "s.jsonl", rows)), "--seed", "cli-plain"
        ).returncode
        == 0
    )
    metrics_id = metrics(cli_server, "check:max_words:2")

    done = evalsvc(cli_server, "evaluate", "--seed", "cli-plain", "--metrics", metrics_id)

    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr + done.stdout
    assert re.search(r"evaluation ev_\w+: 20/20 pairs \(100%\)", done.stderr)
    assert "check:max_words:2" in done.stdout and "1.00" in done.stdout


def test_metrics_creates_the_set_evaluate_then_takes_by_default_with_a_warning(
    cli_server: LocalServer, tmp_path: Path
) -> None:
    rows = [{"id": f"p{k}", "input": "q", "output": "a b c" if k % 2 else "a"} for k in range(4)]
    path = jsonl(tmp_path / "m.jsonl", rows)
    assert evalsvc(cli_server, "push", str(path), "--seed", "cli-metrics").returncode == 0
    definitions = tmp_path / "metrics.txt"
    definitions.write_text("# short answers\ncheck:max_words:2\n", "utf-8")

    made = evalsvc(cli_server, "metrics", "--file", str(definitions), "--check", "non_empty")
    bad = evalsvc(cli_server, "metrics", "--check", "max_words:lots")
    done = evalsvc(cli_server, "evaluate", "--seed", "cli-metrics", "--json")

    assert made.returncode == 0, made.stderr
    metrics_id = made.stdout.strip()
    assert re.fullmatch(r"m_\w+", metrics_id)
    assert made.stderr.splitlines()[1:] == ["  0  check:max_words:2", "  1  check:non_empty"]
    listed = requests.get(f"{cli_server.base_url}/list_questions", headers=HEADERS, timeout=30)
    assert listed.json()["metrics"][metrics_id]["definitions"] == [
        "check:max_words:2",
        "check:non_empty",
    ]
    assert bad.returncode == 1
    assert bad.stderr.startswith("evalsvc: HTTP 400: --check 1: ")
    assert done.returncode == 0, done.stderr
    evaluated = json.loads(done.stdout)
    assert evaluated["metrics_id"] == metrics_id
    assert (
        f"evalsvc: warning: no --metrics given, so evaluation {evaluated['results_id']} of "
        f"dataset cli-metrics uses the tenant's latest metrics set {metrics_id} (2 metrics)"
    ) in done.stderr


@pytest.fixture(scope="module")
def three_runs(cli_server: LocalServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """v1: short answers; v2: the same questions, longer answers that say please (max_words
    regresses, please improves); v3: short answers that say please (please improves only)."""
    folder = tmp_path_factory.mktemp("runs")
    questions = [f"question {k}" for k in range(10)]
    versions = {
        "v1": ["Open Settings." for _ in questions],
        "v2": [
            "Please open Settings, then Security, then follow every step shown there."
            if k < 8
            else "Please see Settings."
            for k in range(10)
        ],
        "v3": ["Please see Settings." for _ in questions],
    }
    metrics_id = metrics(cli_server, "check:max_words:6", "check:contains:Please")
    ids = {}
    for name, outputs in versions.items():
        rows = [
            {"id": f"q{k}", "input": q, "output": o}
            for k, (q, o) in enumerate(zip(questions, outputs, strict=True))
        ]
        path = jsonl(folder / f"{name}.jsonl", rows)
        assert evalsvc(cli_server, "push", str(path), "--seed", f"cli-{name}").returncode == 0
        ids[name] = evaluate(cli_server, f"cli-{name}", metrics_id)
    return ids


def test_compare_fails_on_a_real_regression(
    cli_server: LocalServer, three_runs: dict[str, str]
) -> None:
    gate = evalsvc(
        cli_server, "compare", three_runs["v1"], three_runs["v2"], "--fail-on-regression"
    )

    assert gate.returncode == 1
    assert (
        "check:max_words:6" in gate.stdout
        and "regressed" in gate.stdout
        and "improved" in gate.stdout
    )
    assert "q0  check:max_words:6  5.00 → 1.00 (-4.00)" in gate.stdout
    assert "evalsvc: regressed: check:max_words:6: mean diff -3.20" in gate.stderr
    assert f"evalsvc: the candidate {three_runs['v2']} regressed on 1 of 2 metrics" in gate.stderr
    assert "Traceback" not in gate.stderr

    no_gate = evalsvc(cli_server, "compare", three_runs["v1"], three_runs["v2"], "--json")
    assert no_gate.returncode == 0
    verdicts = [m["verdict"] for m in json.loads(no_gate.stdout)["metrics"]]
    assert verdicts == ["regressed", "improved"]


def test_plan_and_a_clustered_compare_through_the_local_server(
    cli_server: LocalServer, three_runs: dict[str, str]
) -> None:
    v1, v2 = three_runs["v1"], three_runs["v2"]
    compared = evalsvc(cli_server, "compare", v1, v2, "--cluster-by", "input", "--json")
    paired = evalsvc(cli_server, "plan", v1, v2, "--effect", "0.5", "--json")
    table = evalsvc(cli_server, "plan", v1, "--effect", "0.5")

    assert compared.returncode == 0, compared.stderr
    metrics = json.loads(compared.stdout)["metrics"]
    assert all(m["mde"] is not None and m["clusters"] == m["n"] for m in metrics)
    assert paired.returncode == 0, paired.stderr
    plans = json.loads(paired.stdout)["metrics"]
    assert [p["sd"] for p in plans] == [m["std_diff"] for m in metrics]
    assert all(p["paired"] and p["pairs_needed"] >= 2 for p in plans)
    assert table.returncode == 0, table.stderr
    assert "two independent runs" in table.stdout and "pairs needed" in table.stdout


def test_compare_passes_the_gate_without_a_regression(
    cli_server: LocalServer, three_runs: dict[str, str]
) -> None:
    improved = evalsvc(
        cli_server, "compare", three_runs["v1"], three_runs["v3"], "--fail-on-regression"
    )
    same = evalsvc(
        cli_server, "compare", three_runs["v3"], three_runs["v3"], "--fail-on-regression"
    )

    assert (improved.returncode, improved.stderr) == (0, "")
    assert "│ improved" in improved.stdout and "│ regressed" not in improved.stdout
    assert "no pair regressed on any metric" in improved.stdout
    assert (same.returncode, same.stderr) == (0, "")
    assert "not significant" in same.stdout


def test_report_saves_the_html_of_a_result_and_of_a_comparison(
    cli_server: LocalServer, three_runs: dict[str, str], tmp_path: Path
) -> None:
    baseline, candidate = three_runs["v1"], three_runs["v2"]

    single = evalsvc(cli_server, "report", baseline, "-o", str(tmp_path / "one.html"))
    paired = subprocess.run(
        [sys.executable, "-m", "evalsvc_tools.cli", "report", baseline, "--compare", candidate],
        cwd=tmp_path,
        env={**cli_env(cli_server), "PYTHONPATH": os.pathsep.join(sys.path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    streamed = evalsvc(cli_server, "report", baseline, "-o", "-")

    assert (single.returncode, single.stdout) == (0, f"{tmp_path / 'one.html'}\n"), single.stderr
    page = (tmp_path / "one.html").read_text("utf-8")
    assert page.lstrip().lower().startswith("<!doctype html") and baseline in page
    assert (paired.returncode, paired.stdout) == (0, f"compare-{baseline}-{candidate}.html\n"), (
        paired.stderr
    )
    compared = (tmp_path / f"compare-{baseline}-{candidate}.html").read_text("utf-8")
    assert "check:max_words:6" in compared
    assert streamed.returncode == 0 and streamed.stdout == page


def test_errors_print_the_service_message_and_no_traceback(cli_server: LocalServer) -> None:
    wrong_key = evalsvc(
        cli_server, "compare", "ev_a", "ev_b", EVALSVC_API_KEY="evk_not_a_key_at_all_000000000000"
    )
    unknown = evalsvc(cli_server, "report", "ev_nope")
    nobody = evalsvc(
        cli_server, "evaluate", "--seed", "x", EVALSVC_URL=f"http://127.0.0.1:{free_port()}/v1"
    )
    no_url = evalsvc(cli_server, "push", "x.jsonl", "--seed", "x", EVALSVC_URL="")
    in_clear = evalsvc(cli_server, "compare", "a", "b", EVALSVC_URL="http://api.example.com/v1")

    assert wrong_key.returncode == 1
    assert wrong_key.stderr.startswith("evalsvc: HTTP 401: ")
    assert "evk_not_a_key" not in wrong_key.stderr
    assert unknown.returncode == 1
    assert unknown.stderr == "evalsvc: HTTP 404: no evaluation result with id 'ev_nope'\n"
    assert nobody.returncode == 1
    assert "connection refused (is the service running?)" in nobody.stderr
    assert (no_url.returncode, no_url.stderr) == (2, "evalsvc: set EVALSVC_URL or pass --url\n")
    assert in_clear.returncode == 2 and "the API key would travel in clear" in in_clear.stderr
    for done in (wrong_key, unknown, nobody, no_url, in_clear):
        assert "Traceback" not in done.stderr
        assert len(done.stderr.splitlines()) == 1
        assert DEV_KEY not in done.stdout + done.stderr
