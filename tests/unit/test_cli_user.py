"""The user's commands (`evalsvc push|evaluate|compare|pairwise|report|monitors`): reading and
checking files, rendering, exit codes and error messages, against a scripted HTTP server on
127.0.0.1."""

from __future__ import annotations

import io
import json
import os
import pty
import re
import socket
import subprocess
import sys
import threading
import time
import unicodedata
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from evalsvc.models.common import MAX_BODY_BYTES
from evalsvc.models.datasets import MAX_LABEL_CHARS, MAX_LABELS, MAX_TEXT_CHARS
from evalsvc_tools import client as client_module
from evalsvc_tools import terminal
from evalsvc_tools.cli import main
from evalsvc_tools.client import Client, ClientError, normalise_base_url
from evalsvc_tools.commands import monitor_runs, monitors, polling
from evalsvc_tools.pair_files import BadFile, read_pairs
from evalsvc_tools.render.comparison import render_comparison, render_plan
from evalsvc_tools.render.evaluation import render_evaluation
from evalsvc_tools.render.monitors import render_history, render_monitor_run, render_monitors
from evalsvc_tools.render.pairwise import render_pairwise
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from tests.conftest import ROOT

KEY = "evk_unit_test_key_0000000000000000000000000000"
EMOJI = "\U0001f389"  # 4 bytes in UTF-8, one character

# (status, headers, body): what the scripted server answers; a callable answers per request.
Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Scripted:
    """Answers by (method, path without query): a list is answered in order (the last one
    again once used up)."""

    url: str
    answers: dict[tuple[str, str], list[Answer | Callable[[Seen], Answer]]] = field(
        default_factory=dict
    )
    seen: list[Seen] = field(default_factory=list)

    def on(self, method: str, path: str, *answers: Answer | Callable[[Seen], Answer]) -> None:
        self.answers[(method, path)] = list(answers)

    def answer(self, request: Seen) -> Answer:
        queue = self.answers.get((request.method, request.path.split("?")[0]))
        if not queue:
            return 404, {}, json.dumps({"error": f"no route {request.path}"}).encode()
        found = queue.pop(0) if len(queue) > 1 else queue[0]
        return found(request) if callable(found) else found


def as_json(status: int, body: Any, **headers: str) -> Answer:
    return status, {"Content-Type": "application/json", **headers}, json.dumps(body).encode()


@pytest.fixture
def service() -> Iterator[Scripted]:
    scripted = Scripted(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            request = Seen(
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                self.rfile.read(length),
            )
            scripted.seen.append(request)
            status, headers, body = scripted.answer(request)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = _serve

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    scripted.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield scripted
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALSVC_URL", raising=False)
    monkeypatch.delenv("EVALSVC_API_KEY", raising=False)
    monkeypatch.setenv("EVALSVC_POLL_SECONDS", "0.01")
    monkeypatch.delenv("COLUMNS", raising=False)
    for proxy in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(proxy, raising=False)


def run(service: Scripted, *args: str) -> int:
    return main([*args, "--url", service.url, "--key", KEY])


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def lines(*records: Any) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


# ---- reading and checking files ----------------------------------------------------------------


def test_json_lines_are_read_with_ids_labels_and_blank_lines_skipped(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.jsonl",
        "\ufeff"
        + lines({"id": "q1", "input": "a", "output": "b", "labels": ["x", "y"], "extra": 1})
        + "\n"
        + lines({"input": "c", "output": "", "labels": [], "id": None}),
    )

    assert read_pairs(path) == [
        {"id": "q1", "input": "a", "output": "b", "labels": ["x", "y"]},
        {"input": "c", "output": ""},
    ]


def test_every_bad_json_line_is_reported_by_its_number(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.jsonl",
        lines({"id": "ok", "input": "a", "output": "b"})
        + "{nope\n"
        + "[1, 2]\n"
        + lines(
            {"input": 5, "output": "x"},
            {"input": "x"},
            {"id": "bad id", "input": "x", "output": "y"},
            {"id": "ok", "input": "x", "output": "y"},
            {"input": "x", "output": "y", "labels": "one"},
            {"input": "x", "output": "y", "labels": ["l"] * (MAX_LABELS + 1)},
            {"input": "x", "output": "y", "labels": ["", "z" * (MAX_LABEL_CHARS + 1)]},
            {"input": "x" * (MAX_TEXT_CHARS + 1), "output": "y"},
            {"input": "fine", "output": "fine"},
        ),
    )

    with pytest.raises(BadFile) as caught:
        read_pairs(path)

    problems = caught.value.problems
    name = str(path)
    assert [p.split(": ", 1)[0] for p in problems] == [
        f"{name}:2",
        f"{name}:3",
        f"{name}:4",
        f"{name}:5",
        f"{name}:6",
        f"{name}:7",
        f"{name}:8",
        f"{name}:9",
        f"{name}:10",
        f"{name}:10",
        f"{name}:11",
    ]
    text = "\n".join(problems)
    assert "not valid JSON" in problems[0]
    assert "expected an object" in problems[1]
    assert "input must be a string" in problems[2]
    assert "output is missing" in problems[3]
    assert "id 'bad id' is not valid" in problems[4]
    assert "id 'ok' is also on line 1" in problems[5]
    assert "labels must be a list of strings" in problems[6]
    assert f"{MAX_LABELS + 1} labels, over the limit of {MAX_LABELS}" in problems[7]
    assert "a label is empty" in problems[8]
    assert f"over the limit of {MAX_LABEL_CHARS}" in problems[9]
    assert f"input has {MAX_TEXT_CHARS + 1:,} characters, over the limit of" in text


def test_a_json_array_file_is_read_and_its_items_placed_by_line(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.json",
        '[\n  {"input": "a", "output": "b"},\n\n  {"input": "c",\n   "output": 3}\n]\n',
    )
    with pytest.raises(BadFile) as caught:
        read_pairs(path)
    assert caught.value.problems == [f"{path}:4: output must be a string"]


def test_csv_rows_with_quoted_commas_newlines_and_labels(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.csv",
        "ID,Input,Output,Labels,notes\n"
        'q1,"How, now?","Line one\nline two",a; b ;,ignored\n'
        ',plain,text,"[""x;y"", ""z""]",\n'
        "q3,x,y,,\n",
    )

    assert read_pairs(path) == [
        {"id": "q1", "input": "How, now?", "output": "Line one\nline two", "labels": ["a", "b"]},
        {"input": "plain", "output": "text", "labels": ["x;y", "z"]},
        {"id": "q3", "input": "x", "output": "y"},
    ]


def test_every_bad_csv_row_is_reported_by_the_line_it_starts_on(tmp_path: Path) -> None:
    path = write(
        tmp_path / "pairs.csv",
        "id,input,output,labels\n"
        'q1,"multi\nline",ok,\n'  # lines 2-3
        "q2,too,many,fields,here\n"  # 4
        "q3,only input\n"  # 5
        "q1,again,dup,\n"  # 6
        "-x,a,b,\n"  # 7
        'q8,a,b,"[not json"\n'  # 8
        f"q9,{EMOJI * (MAX_TEXT_CHARS + 1)},b,\n",  # 9
    )

    with pytest.raises(BadFile) as caught:
        read_pairs(path)

    problems = caught.value.problems
    assert [p.split(": ", 1)[0].rsplit(":", 1)[1] for p in problems] == [
        "4",
        "5",
        "6",
        "7",
        "8",
        "9",
    ]
    assert "5 fields, but the header has 4" in problems[0]
    assert "output is missing" in problems[1]
    assert "id 'q1' is also on line 2" in problems[2]
    assert "id '-x' is not valid" in problems[3]
    assert "labels look like a JSON list but are not valid JSON" in problems[4]
    assert f"input has {MAX_TEXT_CHARS + 1:,} characters" in problems[5]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("question,answer\nx,y\n", "pairs.csv:1: the header row has no input or output column"),
        ("input,output,input\nx,y,z\n", "column input appears more than once"),
        ("", "pairs.csv:1: no header row"),
        ("input,output\n", "pairs.csv: no pairs in the file"),
    ],
)
def test_a_csv_header_must_name_input_and_output(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "pairs.csv", text)
    with pytest.raises(BadFile) as caught:
        read_pairs(path)
    assert message in caught.value.problems[0]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_four_byte_characters_count_as_one_up_to_the_limit(tmp_path: Path, suffix: str) -> None:
    at_limit = EMOJI * MAX_TEXT_CHARS
    if suffix == ".csv":
        path = write(tmp_path / f"pairs{suffix}", f"input,output\n{at_limit},{at_limit}\n")
    else:
        path = write(tmp_path / f"pairs{suffix}", lines({"input": at_limit, "output": at_limit}))

    assert read_pairs(path) == [{"input": at_limit, "output": at_limit}]

    if suffix == ".csv":
        write(path, f"input,output\n{at_limit},{at_limit}{EMOJI}\n")
    else:
        write(path, lines({"input": at_limit, "output": at_limit + EMOJI}))
    with pytest.raises(BadFile) as caught:
        read_pairs(path)
    assert caught.value.problems == [
        f"{path}:2: output has 100,001 characters, over the limit of 100,000"
        if suffix == ".csv"
        else f"{path}:1: output has 100,001 characters, over the limit of 100,000"
    ]


def test_escaped_surrogate_pairs_in_json_count_as_one_character(tmp_path: Path) -> None:
    escaped = "\\ud83c\\udf89" * MAX_TEXT_CHARS
    path = write(tmp_path / "pairs.jsonl", f'{{"input": "{escaped}", "output": "x"}}\n')
    assert read_pairs(path) == [{"input": EMOJI * MAX_TEXT_CHARS, "output": "x"}]


def test_text_that_is_not_utf8_is_reported_by_line(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_bytes(b"input,output\nok,ok\nbad,\xff\xfe\n")
    with pytest.raises(BadFile) as caught:
        read_pairs(path)
    assert caught.value.problems == [f"{path}:3: not UTF-8 text (byte 23)"]


# ---- push --------------------------------------------------------------------------------------


def test_push_writes_the_whole_file_in_one_request(
    service: Scripted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/data/seed/faq", as_json(200, {"id": "faq"}))
    path = write(
        tmp_path / "pairs.csv", f"id,input,output,labels\nq1,hi {EMOJI},hello,a;b\n,x,y,\n"
    )

    assert run(service, "push", str(path), "--seed", "faq", "--system-prompt", "Be kind.") == 0

    (request,) = service.seen
    assert request.headers["authorization"] == KEY
    assert request.headers["content-type"] == "application/json"
    assert request.json() == {
        "data": [
            {"id": "q1", "input": f"hi {EMOJI}", "output": "hello", "labels": ["a", "b"]},
            {"input": "x", "output": "y"},
        ],
        "system_prompt": "Be kind.",
    }
    assert EMOJI.encode() in request.body  # sent as UTF-8, not as escapes
    assert "wrote 2 pairs to seed dataset faq" in capsys.readouterr().out


def test_a_bad_file_sends_nothing_and_lists_every_bad_row(
    service: Scripted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "pairs.jsonl", lines({"input": "x"}, {"input": "a", "output": "b"}, 7))

    assert run(service, "push", str(path), "--seed", "faq") == 2

    assert service.seen == []
    err = capsys.readouterr().err
    assert f"{path}:1: output is missing\n{path}:3: expected an object" in err
    assert f"evalsvc: {path}: 2 bad rows (listed above); nothing was sent" in err


def test_a_file_over_the_request_limit_is_refused_before_sending(
    service: Scripted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = MAX_BODY_BYTES // MAX_TEXT_CHARS + 1
    path = write(
        tmp_path / "pairs.jsonl", lines(*[{"input": "x" * MAX_TEXT_CHARS, "output": ""}] * rows)
    )

    assert run(service, "push", str(path), "--seed", "faq") == 2

    assert service.seen == []
    err = capsys.readouterr().err
    assert f"over the {MAX_BODY_BYTES:,} one request to the service may carry" in err
    assert "Nothing was sent." in err


def test_the_command_line_loads_nothing_of_the_servers_http_layer() -> None:
    # Given a fresh interpreter, When it loads the command line as `evalsvc` does
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, evalsvc_tools.cli; "
            "print(*sorted(m for m in sys.modules if m.startswith(('evalsvc.api', 'fastapi'))))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    # Then neither the API's modules (routes, middleware) nor FastAPI are among its modules:
    # the limits the CLI checks before sending live in evalsvc.models
    assert loaded.stdout.strip() == ""


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("pairs.txt", "x", "cannot tell the format from the extension '.txt'"),
        ("missing.jsonl", None, "missing.jsonl: no such file"),
    ],
)
def test_push_says_what_is_wrong_with_the_file_itself(
    service: Scripted,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str | None,
    message: str,
) -> None:
    path = tmp_path / name
    if content is not None:
        write(path, content)
    assert run(service, "push", str(path), "--seed", "faq") == 2
    assert message in capsys.readouterr().err
    assert service.seen == []


@pytest.mark.parametrize("seed", ["latest", "bad id", "-x"])
def test_push_refuses_a_dataset_id_the_service_would(
    service: Scripted, tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: str
) -> None:
    path = write(tmp_path / "pairs.jsonl", lines({"input": "a", "output": "b"}))
    assert run(service, "push", str(path), f"--seed={seed}") == 2
    assert f"seed dataset id {seed!r}" in capsys.readouterr().err
    assert service.seen == []


# ---- settings and errors -----------------------------------------------------------------------


def test_the_url_and_key_come_from_the_environment_or_flags(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/compare", as_json(200, {"metrics": []}))

    assert main(["compare", "a", "b", "--json"]) == 2
    assert "evalsvc: set EVALSVC_URL or pass --url" in capsys.readouterr().err
    monkeypatch.setenv("EVALSVC_URL", service.url + "/")
    assert main(["compare", "a", "b", "--json"]) == 2
    assert "evalsvc: set EVALSVC_API_KEY or pass --key" in capsys.readouterr().err

    monkeypatch.setenv("EVALSVC_API_KEY", "evk_from_the_environment")
    assert main(["compare", "a", "b", "--json"]) == 0
    assert service.seen[-1].headers["authorization"] == "evk_from_the_environment"
    assert main(["compare", "a", "b", "--json", "--key", KEY]) == 0  # the flag wins
    assert service.seen[-1].headers["authorization"] == KEY
    assert [s.path for s in service.seen] == ["/v1/compare", "/v1/compare"]


@pytest.mark.parametrize(
    ("given", "base"),
    [
        ("http://h:3000/v1", "http://h:3000/v1"),
        ("http://h:3000/v1/", "http://h:3000/v1"),
        (
            "https://x.execute-api.eu-west-1.amazonaws.com/v1//",
            "https://x.execute-api.eu-west-1.amazonaws.com/v1",
        ),
        ("http://h:3000", "http://h:3000/v1"),
        (" http://h:3000/ ", "http://h:3000/v1"),
    ],
)
def test_the_base_url_is_taken_with_or_without_a_trailing_slash(given: str, base: str) -> None:
    assert normalise_base_url(given) == base


@pytest.mark.parametrize(
    "url", ["127.0.0.1:3000/v1", "ftp://h/v1", "http:///v1", "http://h/v1?x=1"]
)
def test_a_url_that_is_not_a_base_url_is_refused(url: str) -> None:
    with pytest.raises(ClientError) as caught:
        Client(url, KEY)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            as_json(404, {"error": "no evaluation result with id 'nope'"}),
            "evalsvc: HTTP 404: no evaluation result with id 'nope'",
        ),
        (
            as_json(403, {"message": "Missing Authentication Token"}),
            "evalsvc: HTTP 403: Missing Authentication Token",
        ),
        (
            (502, {"Content-Type": "text/html"}, b"<html>Bad Gateway</html>"),
            "evalsvc: HTTP 502: <html>Bad Gateway</html>",
        ),
        ((500, {}, b""), "evalsvc: HTTP 500: Internal Server Error"),
    ],
)
def test_errors_print_what_the_service_said_with_the_status(
    service: Scripted,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    answer: Answer,
    expected: str,
) -> None:
    service.on("POST", "/v1/compare", answer)
    monkeypatch.setattr(polling.time, "sleep", lambda seconds: None)  # a 502 is retried

    assert run(service, "compare", "a", "b") == 1

    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == expected
    assert KEY not in err


def test_a_redirect_is_reported_not_followed_with_the_key(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = service.url + "/elsewhere"
    service.on("POST", "/v1/compare", (302, {"Location": elsewhere}, b""))
    service.on("GET", "/v1/elsewhere", as_json(200, {}))

    assert run(service, "compare", "a", "b") == 1

    assert [s.path for s in service.seen] == ["/v1/compare"]
    err = capsys.readouterr().err
    assert err.strip() == (
        f"evalsvc: HTTP 302: the service redirects to {elsewhere}: give the API's base URL "
        "there (EVALSVC_URL or --url)"
    )


def test_a_404_from_a_url_without_v1_hints_at_the_base(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    url = service.url.removesuffix("/v1") + "/api"
    assert main(["compare", "a", "b", "--url", url, "--key", KEY]) == 1
    assert "it usually ends in /v1" in capsys.readouterr().err


def test_a_slow_service_is_a_timeout_message(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def slow(_: Seen) -> Answer:
        time.sleep(1.0)
        return as_json(200, {})

    service.on("POST", "/v1/compare", slow)
    monkeypatch.setenv("EVALSVC_TIMEOUT", "0.2")

    assert run(service, "compare", "a", "b") == 1
    assert capsys.readouterr().err.strip() == f"evalsvc: no answer from {service.url} within 0.2 s"


def test_a_key_a_header_cannot_carry_is_refused_without_showing_it(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = "evk_secret\nInjected: yes"
    assert main(["compare", "a", "b", "--url", service.url, "--key", secret]) == 2
    err = capsys.readouterr().err
    assert "the API key holds characters an HTTP header cannot carry" in err
    assert "evk_secret" not in err
    assert service.seen == []


def test_the_client_never_shows_its_key() -> None:
    client = Client("http://127.0.0.1:9/v1", KEY)
    assert KEY not in repr(client) and KEY not in str(vars(client).get("base_url"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_connection_refused_and_a_bad_key_print_one_line_and_no_traceback(
    service: Scripted,
) -> None:
    service.on("POST", "/v1/compare", as_json(401, {"error": "missing or unknown API key"}))
    nobody = f"http://127.0.0.1:{free_port()}/v1"
    env = {"PATH": "/usr/bin:/bin", "EVALSVC_API_KEY": KEY}

    refused = subprocess.run(
        [sys.executable, "-m", "evalsvc_tools.cli", "compare", "a", "b", "--url", nobody],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    unknown = subprocess.run(
        [sys.executable, "-m", "evalsvc_tools.cli", "compare", "a", "b", "--url", service.url],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert (refused.returncode, refused.stdout) == (1, "")
    assert refused.stderr == (
        f"evalsvc: cannot connect to {nobody}: connection refused (is the service running?)\n"
    )
    assert (unknown.returncode, unknown.stdout) == (1, "")
    assert unknown.stderr == "evalsvc: HTTP 401: missing or unknown API key\n"
    assert KEY not in refused.stderr + unknown.stderr


def test_ctrl_c_is_exit_130_with_a_line_saying_so(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(Client, "request", interrupted)
    assert run(service, "compare", "a", "b") == 130
    assert capsys.readouterr().err == "evalsvc: interrupted\n"


def test_ctrl_c_while_following_says_the_evaluation_goes_on(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(polling, "follow", interrupted)
    assert run(service, "evaluate", "--seed", "faq") == 130
    assert "interrupted; evaluation ev_1 goes on in the service" in capsys.readouterr().err


def test_a_missing_rich_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rich.console", None)
    with pytest.raises(ClientError, match=r"pip install 'evalsvc\[cli\]'"):
        terminal.rich_console()


# ---- metrics -----------------------------------------------------------------------------------


def created(metrics_id: str = "m_1") -> Callable[[Seen], Answer]:
    """POST /specify_questions as the service answers it: the definitions it stored."""
    return lambda seen: as_json(
        200, {"metrics_id": metrics_id, "definitions": seen.json()["metrics"]}
    )


def test_metrics_creates_a_set_from_questions_and_checks_in_the_order_given(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/specify_questions", created("m_abc"))

    code = run(
        service,
        "metrics",
        "--question",
        "Is the answer polite?",
        "--check",
        "max_words:20",
        "--check",
        " check:no_pii ",
        "--question",
        "Does it answer the question?",
    )

    assert code == 0
    assert [s.json() for s in service.seen] == [
        {
            "metrics": [
                "Is the answer polite?",
                "check:max_words:20",
                "check:no_pii",
                "Does it answer the question?",
            ]
        }
    ]
    out, err = capsys.readouterr()
    assert out == "m_abc\n"  # alone, for M=$(evalsvc metrics ...)
    assert err.splitlines() == [
        "created metrics set m_abc with 4 metrics:",
        "  0  Is the answer polite?",
        "  1  check:max_words:20",
        "  2  check:no_pii",
        "  3  Does it answer the question?",
    ]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("metrics.txt", "# the support bot\nIs the answer polite?\n\n  check:max_words:20  \n"),
        ("metrics", "Is the answer polite?\r\ncheck:max_words:20\r\n"),
        ("metrics.json", '["Is the answer polite?", "check:max_words:20"]'),
        ("metrics.json", '{"metrics": ["Is the answer polite?", "check:max_words:20"]}'),
        ("metrics.JSON", '\ufeff[\n  "Is the answer polite?",\n  "check:max_words:20"\n]\n'),
    ],
)
def test_metrics_reads_a_text_or_json_file_then_the_flags(
    service: Scripted,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str,
) -> None:
    service.on("POST", "/v1/specify_questions", created())
    path = write(tmp_path / name, content)

    assert run(service, "metrics", "--check", "no_pii", "--file", str(path)) == 0

    assert service.seen[0].json() == {
        "metrics": ["Is the answer polite?", "check:max_words:20", "check:no_pii"]
    }
    assert capsys.readouterr().out == "m_1\n"


def test_metrics_json_prints_the_answer(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/specify_questions", created())

    assert run(service, "metrics", "--check", "non_empty", "--json") == 0

    out, err = capsys.readouterr()
    assert json.loads(out) == {"metrics_id": "m_1", "definitions": ["check:non_empty"]}
    assert err == ""


@pytest.mark.parametrize(
    ("name", "content", "args", "problems"),
    [
        ("m.json", '["ok", ', [], ["m.json:1: not valid JSON (Expecting value, column 8)"]),
        (
            "m.json",
            '{"questions": ["q"]}',
            [],
            [
                'm.json: expected a list of definitions (["Is the answer polite?", '
                '"check:max_words:50"]) or {"metrics": [...]}, not a JSON dict'
            ],
        ),
        (
            "m.json",
            '["ok", 5, "", {"q": 1}]',
            [],
            [
                "m.json: metrics[1]: a definition is a string, not 5",
                'm.json: metrics[3]: a definition is a string, not {"q": 1}',
                "m.json: metrics[2]: empty: write a question, or a check such as max_words:50",
            ],
        ),
        (
            "m.json",
            "[" * 100 + "]" * 100,
            [],
            ["m.json: not valid JSON (it is nested 100 levels deep"],
        ),
        (
            "m.txt",
            "fine\n" + "x" * 2001 + "\n",
            ["--check", "", "--question", " "],
            [
                "m.txt:2: 2,001 characters, over the limit of 2,000",
                "--check 1: empty: write a question, or a check such as max_words:50",
                "--question 1: empty: write a question, or a check such as max_words:50",
            ],
        ),
        ("m.txt", "".join(f"q{k}\n" for k in range(51)), [], ["51 metrics, over the 50"]),
        ("m.txt", "# nothing but a comment\n", [], ["no metrics given: pass --question TEXT"]),
        ("m.txt", None, [], ["m.txt: no such file"]),
        ("m.yaml", "- q\n", [], ["m.yaml: cannot tell the format from the extension '.yaml'"]),
        ("m.txt", b"ok\n\xff\n", [], ["m.txt:2: not UTF-8 text (byte 3)"]),
    ],
)
def test_metrics_lists_every_problem_and_sends_nothing(
    service: Scripted,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str | bytes | None,
    args: list[str],
    problems: list[str],
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        write(path, content)

    assert run(service, "metrics", "--file", str(path), *args) == 2

    assert service.seen == []
    err = capsys.readouterr().err.replace(f"{tmp_path}/", "")
    for problem in problems:
        assert problem in err
    assert "Traceback" not in err


def test_metrics_without_any_definition_is_refused(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(service, "metrics") == 2
    assert service.seen == []
    assert capsys.readouterr().err.splitlines() == [
        "no metrics given: pass --question TEXT or --check NAME (repeat either), or --file",
        "evalsvc: 1 problem with the metrics (listed above); nothing was sent",
    ]


def test_a_definition_the_service_refuses_is_named_where_it_came_from(
    service: Scripted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    said = "metrics[2]: check:max_words needs a whole number, not 'x'"
    service.on("POST", "/v1/specify_questions", as_json(400, {"error": said}))
    path = write(tmp_path / "m.txt", "q1\n\nq2\n")

    assert run(service, "metrics", "--file", str(path), "--check", "max_words:x") == 1
    assert capsys.readouterr().err == (
        "evalsvc: HTTP 400: --check 1: check:max_words needs a whole number, not 'x'\n"
    )

    service.on("POST", "/v1/specify_questions", as_json(400, {"error": "metrics[1]: bad"}))
    assert run(service, "metrics", "--file", str(path)) == 1
    assert capsys.readouterr().err == f"evalsvc: HTTP 400: {path}:3: bad\n"


# ---- evaluate ----------------------------------------------------------------------------------


def queued(results_id: str, done: int, total: int, status: str = "running") -> dict[str, Any]:
    return {
        "eval_results_id": results_id,
        "status": status,
        "pairs_done": done,
        "pairs_total": total,
    }


def result(results_id: str = "ev_1", status: str = "complete", **more: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "status": status,
        "pairs_done": 10,
        "pairs_total": 10,
        "results_id": results_id,
        "created_at": "2026-11-26T00:36:07.123Z",
        "dataset_id": "faq",
        "metrics_id": "m_1",
        "metrics_definitions": [
            "check:regex:[a-z]+ please",
            "Is the answer polite, friendly, accurate and short enough for a support chat "
            "window on a phone?",
        ],
        "pair_count": 10,
        "system_prompt": "",
        "score_means": [4.2, 2.5],
        "score_medians": [5.0, 2.0],
        "score_mins": [1.0, 1.0],
        "score_maxes": [5.0, 5.0],
        "score_std_devs": [1.0, 1.2],
        "score_confidence_intervals": [
            {"ci_low": 3.5, "ci_high": 4.9, "ci_confidence": 0.95},
            {"ci_low": 1.64, "ci_high": 3.36, "ci_confidence": 0.95},
        ],
        "min_scoring_pairs": [
            [{"reason": "r", "pair_id": "q7", "score": 1.0}],
            [{"reason": "r", "pair_id": f"q{k}", "score": 1.0 + k / 10} for k in range(5)],
        ],
        "human_critique": [],
        "usage": {
            "llm_calls": 10,
            "cache_hits": 2,
            "input_tokens": 2000,
            "output_tokens": 150,
            "cost_usd": 0.0012,
            "model": "openai:gpt-4o-mini",
        },
    }
    body.update(more)
    return body


def unlabeled(results_id: str = "ev_1") -> Answer:
    """GET /evaluation/{id}/anchored of a metric without audit labels (E12): the CLI says
    nothing of it."""
    return as_json(
        200,
        {
            "eval_results_id": results_id,
            "metric_idx": 0,
            "n_labeled": 0,
            "n_unlabeled": 10,
            "estimate": None,
            "judge_only": {"estimate": 0.6},
        },
    )


def test_evaluate_queues_follows_progress_and_prints_a_table(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on(
        "POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10), Location="evaluation/ev_1")
    )
    service.on(
        "GET",
        "/v1/evaluation/ev_1",
        as_json(200, result(status="running", pairs_done=3, score_means=[])),
        as_json(503, {"error": "busy"}, **{"Retry-After": "0"}),
        as_json(200, result(status="running", pairs_done=7, score_means=[])),
        as_json(200, result()),
    )
    service.on("GET", "/v1/evaluation/ev_1/anchored", unlabeled())

    code = run(
        service,
        "evaluate",
        "--seed",
        "faq",
        "--metrics",
        "m_1",
        "--label",
        "a",
        "--label",
        "b",
        "--latest-n",
        "50",
    )

    assert code == 0
    post = service.seen[0]
    assert post.headers["prefer"] == "respond-async"
    assert post.json() == {
        "seed_data_id": "faq",
        "metrics_id": "m_1",
        "pair_query": {"pair_labels": ["a", "b"], "latest_n_pairs": 50},
    }
    # Then what people would say of each metric (E12): neither has audit labels, so nothing
    anchored = [f"/v1/evaluation/ev_1/anchored?metric_idx={k}" for k in range(2)]
    assert [s.path for s in service.seen[1:]] == ["/v1/evaluation/ev_1"] * 4 + anchored
    out, err = capsys.readouterr()
    # Off a terminal: plain lines at each tenth, no escape codes.
    assert err.splitlines() == [
        "evaluation ev_1: 0/10 pairs (0%)",
        "evaluation ev_1 of dataset faq uses metrics set m_1 (2 metrics)",  # the first answer's
        "evaluation ev_1: 3/10 pairs (30%)",
        "evaluation ev_1: 7/10 pairs (70%)",
        "evaluation ev_1: 10/10 pairs (100%)",
    ]
    assert "\x1b" not in out + err
    assert "evaluation ev_1: 10 pairs of dataset faq" in out
    assert "LLM: 10 calls, 2 cache hits, 2000 input and 150 output tokens, $0.001200" in out
    assert "check:regex:[a-z]+ please" in out  # markup characters shown as they are
    assert "Is the answer polite, friendly, accurat…" in out  # cut to a readable width
    assert "[3.50, 4.90]" in out and "4.20" in out and "95% interval" in out
    assert "q0 1.0, q1 1.1, q2 1.2 (+2)" in out


def test_evaluate_with_judge_samples_counts_judge_calls_and_shows_the_judge_noise(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a service that counts the judge calls of an evaluation asked 3 times a verdict
    calls = {"judge_samples": 3, "judge_calls_total": 30}
    service.on(
        "POST",
        "/v1/evaluate",
        as_json(202, {**queued("ev_1", 0, 10), "judge_calls_done": 0, **calls}),
    )
    service.on(
        "GET",
        "/v1/evaluation/ev_1",
        as_json(
            200,
            result(status="running", pairs_done=4, judge_calls_done=12, score_means=[], **calls),
        ),
        as_json(
            200,
            result(judge_calls_done=30, score_judge_noise_sds=[None, 0.4714], **calls),
        ),
    )
    service.on("GET", "/v1/evaluation/ev_1/anchored", unlabeled())

    # When the evaluation is run with --judge-samples 3
    code = run(service, "evaluate", "--seed", "faq", "--metrics", "m_1", "--judge-samples", "3")

    # Then the request asks for 3 samples, the progress counts judge calls, and the table
    # shows each question's judge noise (none for the check)
    assert code == 0
    assert service.seen[0].json() == {
        "seed_data_id": "faq",
        "metrics_id": "m_1",
        "judge_samples": 3,
    }
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "evaluation ev_1: 0/30 judge calls (0%)",
        "evaluation ev_1 of dataset faq uses metrics set m_1 (2 metrics)",
        "evaluation ev_1: 12/30 judge calls (40%)",
        "evaluation ev_1: 30/30 judge calls (100%)",
    ]
    assert "judge sd (k=3)" in out and "0.47" in out


def test_evaluate_json_prints_the_result_body(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result()))

    assert run(service, "evaluate", "--synthetic", "latest", "--json") == 0

    assert service.seen[0].json() == {"synthetic_data_id": "latest"}
    assert json.loads(capsys.readouterr().out) == result()


def test_a_failed_evaluation_exits_1_with_its_reason(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    failed = result(status="failed", failure="the judge answered nonsense for pair q3")
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, failed))

    assert run(service, "evaluate", "--seed", "faq") == 1
    err = capsys.readouterr().err
    assert "evalsvc: evaluation ev_1 failed: the judge answered nonsense for pair q3" in err


def test_an_evaluation_answered_at_once_is_read_and_shown(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    v1 = {"eval_results_id": "ev_1", "dataset_id": "faq", "pair_count": 10, "scores": []}
    service.on("POST", "/v1/evaluate", as_json(200, v1))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result()))
    service.on("GET", "/v1/evaluation/ev_1/anchored", unlabeled())

    assert run(service, "evaluate", "--seed", "faq", "--metrics", "m_1") == 0

    assert [s.method for s in service.seen] == ["POST", "GET", "GET", "GET"]
    out, err = capsys.readouterr()
    assert "4.20" in out
    assert err == "evaluation ev_1 of dataset faq uses metrics set m_1 (2 metrics)\n"


def test_a_plain_503_naming_the_result_is_followed(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    still = {"error": "evaluation 'ev_9' is still running"}
    service.on("POST", "/v1/evaluate", as_json(503, still, Location="evaluation/ev_9"))
    service.on("GET", "/v1/evaluation/ev_9", as_json(200, result("ev_9")))

    assert run(service, "evaluate", "--seed", "faq") == 0
    assert "evaluation ev_9" in capsys.readouterr().out


def test_following_gives_up_after_repeated_failures(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on(
        "GET", "/v1/evaluation/ev_1", as_json(503, {"error": "down"}, **{"Retry-After": "0"})
    )

    assert run(service, "evaluate", "--seed", "faq") == 1
    assert "evalsvc: HTTP 503: down" in capsys.readouterr().err
    assert len(service.seen) == 1 + 1 + polling.MAX_POLL_FAILURES


def test_an_error_that_is_not_transient_stops_following_at_once(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(404, {"error": "no evaluation result"}))

    assert run(service, "evaluate", "--seed", "faq") == 1
    assert len(service.seen) == 2


def test_evaluate_needs_one_dataset(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["evaluate", "--seed", "a", "--synthetic", "b"])
    assert caught.value.code == 2
    with pytest.raises(SystemExit):
        main(["evaluate", "--seed", "a", "--latest-n", "0"])


def test_evaluate_without_metrics_warns_naming_the_latest_set_it_took(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on(
        "GET",
        "/v1/evaluation/ev_1",
        as_json(200, result(status="running", pairs_done=5)),
        as_json(200, result()),
    )

    assert run(service, "evaluate", "--seed", "faq", "--json") == 0

    assert "metrics_id" not in service.seen[0].json()
    out, err = capsys.readouterr()
    assert json.loads(out)["metrics_id"] == "m_1"
    warnings = [line for line in err.splitlines() if "metrics" in line]
    assert warnings == [
        "evalsvc: warning: no --metrics given, so evaluation ev_1 of dataset faq uses the "
        "tenant's latest metrics set m_1 (2 metrics); pass --metrics ID to choose the set "
        "(evalsvc metrics creates one)"
    ]


def test_evaluate_with_metrics_names_the_set_without_a_warning(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result()))

    assert run(service, "evaluate", "--seed", "faq", "--metrics", "latest", "--json") == 0

    assert service.seen[0].json()["metrics_id"] == "latest"
    err = capsys.readouterr().err
    assert "evaluation ev_1 of dataset faq uses metrics set m_1 (2 metrics)" in err
    assert "warning" not in err


def test_evaluate_with_no_metrics_set_says_how_to_create_one(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    said = "there is no metrics set yet: create one with POST /specify_questions {...}"
    service.on("POST", "/v1/evaluate", as_json(404, {"error": said}))

    assert run(service, "evaluate", "--seed", "faq") == 1
    assert capsys.readouterr().err == (
        f"evalsvc: HTTP 404: {said}; from the command line: evalsvc metrics --check non_empty "
        "--question 'Is the answer polite?'\n"
    )


class Answers:
    """GET /evaluation/{id} as `follow` reads it: running `running` times (each answer with
    the Retry-After given for it, if any), then complete."""

    def __init__(self, running: int, retry_after: dict[int, float] | None = None) -> None:
        self.running = running
        self.retry_after = retry_after or {}
        self.asked = 0

    def request(self, method: str, path: str, query: Any = None) -> Any:
        self.asked += 1
        status = "running" if self.asked <= self.running else "complete"
        answer = {"status": status, "pairs_done": self.asked, "pairs_total": self.running + 1}
        retry_after = self.retry_after.get(self.asked)

        class Answer:
            def json(self) -> Any:
                return answer

        response = Answer()
        response.retry_after = retry_after  # type: ignore[attr-defined]
        return response


class Quiet:
    def update(self, done: int, total: int) -> None:
        pass

    def close(self) -> None:
        pass


def test_following_asks_again_soon_then_backs_off_to_the_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(polling.time, "sleep", pauses.append)
    answers = Answers(running=6)

    body = polling.follow(answers, "ev_1", Quiet(), 1.0)  # type: ignore[arg-type]

    assert body["status"] == "complete" and answers.asked == 7
    assert pauses == [0.2, 0.4, 0.8, 1.0, 1.0, 1.0]


def test_following_honours_retry_after_and_a_shorter_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(polling.time, "sleep", pauses.append)

    polling.follow(Answers(3, {2: 7.0, 3: 500.0}), "ev_1", Quiet(), 5.0)  # type: ignore[arg-type]
    polling.follow(Answers(2), "ev_1", Quiet(), 0.05)  # type: ignore[arg-type]

    assert pauses == [0.2, 7.0, polling.MAX_RETRY_SECONDS, 0.05, 0.05]


def test_following_gives_each_answer_to_the_caller_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(polling.time, "sleep", lambda seconds: None)
    seen: list[int] = []

    polling.follow(
        Answers(2),  # type: ignore[arg-type]
        "ev_1",
        Quiet(),
        1.0,
        lambda body: seen.append(body["pairs_done"]),
    )

    assert seen == [1, 2, 3]


# ---- rerun -------------------------------------------------------------------------------------

DIGEST = "3f" * 32


def inputs(**more: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "dataset_id": "faq",
        "dataset_version": "v_7d1",
        "pairs_digest": DIGEST,
        "metrics_id": "m_1",
        "definitions_sha256": "9a" * 32,
        "judge_model": "openai:gpt-4o-mini",
        "judge_prompt_version": "judge-v1",
        "judge_samples": 1,
        "service_version": "0.1.0",
        "prices_date": "2026-11-26",
    }
    body.update(more)
    return body


def rerun_service(service: Scripted, *first: Answer, again: dict[str, Any] | None = None) -> None:
    """Evaluation ev_1, whose rerun answers `first` (202 queuing ev_2 by default), and ev_2,
    running once then complete with `again`'s inputs (ev_1's by default)."""
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result("ev_1", inputs=inputs())))
    queuing = as_json(202, queued("ev_2", 0, 10), Location="../../evaluation/ev_2")
    service.on("POST", "/v1/evaluation/ev_1/rerun", *(first or (queuing,)))
    service.on(
        "GET",
        "/v1/evaluation/ev_2",
        as_json(200, result("ev_2", status="running", pairs_done=4, score_means=[])),
        as_json(200, result("ev_2", inputs=again or inputs())),
    )


def test_rerun_follows_the_new_evaluation_and_says_it_scored_the_same_pairs(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    rerun_service(service)

    assert run(service, "rerun", "ev_1", "--max-cost-usd", "0.5") == 0

    # The original read first, then the rerun asked for, queued, and followed
    assert [(s.method, s.path) for s in service.seen] == [
        ("GET", "/v1/evaluation/ev_1"),
        ("POST", "/v1/evaluation/ev_1/rerun"),
        ("GET", "/v1/evaluation/ev_2"),
        ("GET", "/v1/evaluation/ev_2"),
    ]
    post = service.seen[1]
    assert post.json() == {"max_cost_usd": 0.5}
    assert post.headers["prefer"] == "respond-async"
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "evaluation ev_2 evaluates again the 10 pairs evaluation ev_1 scored, of dataset faq",
        "evaluation ev_2: 0/10 pairs (0%)",
        "evaluation ev_2: 4/10 pairs (40%)",
        "evaluation ev_2: 10/10 pairs (100%)",
    ]
    assert "evaluation ev_2: 10 pairs of dataset faq" in out and "4.20" in out
    produced = out[out.index("what produced it") :].splitlines()[:5]
    assert produced == [
        "what produced it: dataset faq, version v_7d1; metrics set m_1",
        f"  pairs_digest {DIGEST}",
        f"  definitions {'9a' * 32}",
        "  judge openai:gpt-4o-mini, prompt judge-v1, 1 sample",
        "  service 0.1.0, prices of 2026-11-26",
    ]
    assert out.rstrip().endswith(
        f"pairs_digest {DIGEST} equals evaluation ev_1's: the same pairs were scored again"
    )


def test_rerun_without_a_cap_sends_an_empty_body_and_reads_an_answer_given_at_once(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    v1 = {"eval_results_id": "ev_2", "dataset_id": "faq", "pair_count": 10, "inputs": inputs()}
    rerun_service(service, as_json(200, v1))
    service.on("GET", "/v1/evaluation/ev_2", as_json(200, result("ev_2", inputs=inputs())))

    assert run(service, "rerun", "ev_1") == 0

    assert service.seen[1].json() == {}
    assert [s.method for s in service.seen] == ["GET", "POST", "GET"]
    assert "equals evaluation ev_1's" in capsys.readouterr().out


def test_a_rerun_that_scored_other_pairs_exits_1_naming_both_digests(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    rerun_service(service, again=inputs(pairs_digest="00" * 32))

    assert run(service, "rerun", "ev_1") == 1

    out, err = capsys.readouterr()
    assert "evaluation ev_2: 10 pairs" in out  # the result is shown all the same
    assert err.splitlines()[-1] == (
        f"evalsvc: the rerun's pairs_digest {'00' * 32} differs from the original's {DIGEST}: "
        "it did not score the pairs evaluation ev_1 scored"
    )


def test_rerun_of_a_result_without_a_digest_says_it_cannot_tell(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    rerun_service(service, again=inputs(pairs_digest=None))

    assert run(service, "rerun", "ev_1", "--json") == 0

    out, err = capsys.readouterr()
    assert json.loads(out)["results_id"] == "ev_2"  # stdout holds the JSON alone
    assert "evalsvc: the rerun's pairs_digest is not recorded: whether the rerun scored" in err


def test_rerun_json_prints_the_new_result_and_the_verdict_on_stderr(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    rerun_service(service)

    assert run(service, "rerun", "ev_1", "--json") == 0

    out, err = capsys.readouterr()
    assert json.loads(out) == result("ev_2", inputs=inputs())
    assert "equals evaluation ev_1's: the same pairs were scored again" in err


def test_rerun_async_prints_the_new_id_and_follows_nothing(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    rerun_service(service)

    assert run(service, "rerun", "ev_1", "--async") == 0

    assert [s.method for s in service.seen] == ["GET", "POST"]
    assert service.seen[1].headers["prefer"] == "respond-async"
    out, err = capsys.readouterr()
    assert out == "ev_2\n"
    assert "follow it with GET /evaluation/ev_2, or evalsvc report ev_2" in err
    assert run(service, "rerun", "ev_1", "--async", "--json") == 0
    assert json.loads(capsys.readouterr().out) == queued("ev_2", 0, 10)


def test_rerun_of_a_sampled_evaluation_counts_its_judge_calls(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = {"judge_samples": 3, "judge_calls_total": 30}
    rerun_service(service, as_json(202, {**queued("ev_2", 0, 10), "judge_calls_done": 0, **calls}))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result("ev_1", **calls)))
    service.on(
        "GET", "/v1/evaluation/ev_2", as_json(200, result("ev_2", judge_calls_done=30, **calls))
    )

    assert run(service, "rerun", "ev_1") == 0

    assert "evaluation ev_2: 30/30 judge calls (100%)" in capsys.readouterr().err


def test_rerun_past_the_versions_retention_prints_the_410(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    expired = (
        "the version 'v_7d1' of seed dataset 'faq' that evaluation 'ev_1' scored was replaced, "
        "kept for its retention, and expired on 2021-03-04: its pairs are no longer kept"
    )
    rerun_service(service, as_json(410, {"error": expired}))

    assert run(service, "rerun", "ev_1") == 1

    assert capsys.readouterr().err == f"evalsvc: HTTP 410: {expired}\n"
    assert [s.method for s in service.seen] == ["GET", "POST"]


def test_rerun_of_an_unknown_evaluation_asks_for_no_rerun(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on(
        "GET", "/v1/evaluation/ev_9", as_json(404, {"error": "no evaluation result with id 'ev_9'"})
    )

    assert run(service, "rerun", "ev_9") == 1

    assert "HTTP 404: no evaluation result with id 'ev_9'" in capsys.readouterr().err
    assert [s.method for s in service.seen] == ["GET"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["bad id"], "'bad id' is not an evaluation result id"),
        (["ev_1", "--max-cost-usd", "0"], "--max-cost-usd is 0: it must be more than 0"),
        (["ev_1", "--max-cost-usd", "2e6"], "--max-cost-usd is 2e+06: it must be more than 0"),
    ],
)
def test_rerun_refuses_bad_arguments_before_sending_anything(
    service: Scripted, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    assert run(service, "rerun", *args) == 2

    assert service.seen == []
    err = capsys.readouterr().err
    assert err.startswith(f"evalsvc: {said}") and err.rstrip().endswith("nothing was sent")


def test_an_evaluation_shows_what_produced_it_or_that_it_was_not_recorded() -> None:
    def shown(body: dict[str, Any]) -> str:
        console = Console(file=io.StringIO(), width=200, color_system=None)
        render_evaluation(body, console)
        return console.file.getvalue()  # type: ignore[attr-defined,no-any-return]

    recorded = shown(result(inputs=inputs(judge_model=None, judge_prompt_version=None)))
    legacy = shown(result(inputs=None))

    assert f"pairs_digest {DIGEST}" in recorded and "\n  no judge\n" in recorded
    assert "what produced it: not recorded (stored before results kept it)" in legacy
    assert "what produced it" not in shown(result())  # a service that does not say


# ---- compare -----------------------------------------------------------------------------------


def comparison(verdict: str = "regressed") -> dict[str, Any]:
    return {
        "baseline_id": "ev_a",
        "candidate_id": "ev_b",
        "alpha": 0.05,
        "correction": "holm",
        "pairs_matched": 10,
        "only_in_baseline": 0,
        "only_in_candidate": 1,
        "metrics": [
            {
                "metric": "check:max_words:8",
                "n": 10,
                "baseline_mean": 5.0,
                "candidate_mean": 3.4,
                "mean_diff": -1.6,
                "ci_low": -2.7,
                "ci_high": -0.5,
                "p_value": 0.0004,
                "p_adjusted": 0.0008,
                "wins": 0,
                "ties": 6,
                "losses": 4,
                "verdict": verdict,
            },
            {
                "metric": "check:contains:please",
                "n": 1,
                "baseline_mean": 1.0,
                "candidate_mean": 5.0,
                "mean_diff": None,
                "ci_low": None,
                "ci_high": None,
                "p_value": None,
                "p_adjusted": None,
                "wins": 1,
                "ties": 0,
                "losses": 0,
                "verdict": "insufficient_data",
            },
        ],
        "regressions": [
            {
                "pair_id": f"q{k}",
                "metric": "check:max_words:8",
                "baseline_score": 5.0,
                "candidate_score": 1.0,
                "diff": -4.0,
                "baseline_reason": "output has 3 words, within 8",
                "candidate_reason": "output has 13 words, over the maximum 8",
            }
            for k in range(12)
        ],
        "improvements": [],
    }


def test_a_comparison_renders_a_table_and_the_regressions() -> None:
    out = io.StringIO()
    render_comparison(comparison(), Console(file=out, width=160))
    text = out.getvalue()

    assert "10 pairs matched (0 only in the baseline, 1 only in the candidate)" in text
    assert "-1.60 [-2.70, -0.50]" in text
    assert "0.001" in text and "0/6/4" in text and "regressed" in text
    assert "- [-, -]" in text and "too few pairs" in text  # nulls shown as "-"
    assert "q0  check:max_words:8  5.00 → 1.00 (-4.00)  output has 13 words" in text
    assert "… and 2 more (--json shows all)" in text


def test_evaluate_sends_cluster_by_and_judge_samples_and_shows_both_intervals_and_noise(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    clustered = result(
        cluster_by="label",
        judge_samples=3,
        score_clustered=[
            {
                "clusters": 4,
                "se_clustered": 0.4,
                "ci_low_clustered": 2.93,
                "ci_high_clustered": 5.47,
            },
            {
                "clusters": 1,
                "se_clustered": None,
                "ci_low_clustered": None,
                "ci_high_clustered": None,
            },
        ],
        score_judge_noise_sds=[None, 0.58],
    )
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, clustered))

    code = run(
        service, "evaluate", "--seed", "faq", "--cluster-by", "label", "--judge-samples", "3"
    )

    assert code == 0
    assert service.seen[0].json() == {
        "seed_data_id": "faq",
        "cluster_by": "label",
        "judge_samples": 3,
    }
    assert "evaluation ev_1: 10 pairs of dataset faq" in capsys.readouterr().out
    # Wide enough for every column's header on one line
    wide = io.StringIO()
    render_evaluation(clustered, Console(file=wide, width=240))
    out = wide.getvalue()
    assert "clustered by label" in out and "judge sd (k=3)" in out
    assert "[2.93, 5.47]" in out and "[3.50, 4.90]" in out  # both intervals
    assert "0.58" in out


@pytest.mark.parametrize("command", [["evaluate", "--seed", "faq"], ["compare", "ev_a", "ev_b"]])
def test_cluster_by_conversation_is_sent_as_given(service: Scripted, command: list[str]) -> None:
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result(cluster_by="conversation")))
    service.on("POST", "/v1/compare", as_json(200, comparison()))

    assert run(service, *command, "--cluster-by", "conversation") == 0
    assert service.seen[0].json()["cluster_by"] == "conversation"


@pytest.mark.parametrize("flags", [["--cluster-by", "topic"], ["--judge-samples", "6"]])
def test_a_bad_cluster_by_or_judge_samples_is_refused_before_sending(
    service: Scripted, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        run(service, "evaluate", "--seed", "faq", *flags)
    assert exited.value.code == 2
    assert service.seen == []
    assert "invalid choice" in capsys.readouterr().err


def test_an_evaluation_renders_null_statistics_as_dashes() -> None:
    out = io.StringIO()
    body = result(score_means=[], score_confidence_intervals=[], min_scoring_pairs=[], usage=None)
    render_evaluation(body, Console(file=out, width=160))
    assert "[-, -]" in out.getvalue()


def test_fail_on_regression_exits_1_naming_the_metric(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/compare", as_json(200, comparison()))

    assert run(service, "compare", "ev_a", "ev_b") == 0
    capsys.readouterr()
    assert run(service, "compare", "ev_a", "ev_b", "--fail-on-regression", "--alpha", "0.01") == 1

    assert service.seen[-1].json() == {"baseline_id": "ev_a", "candidate_id": "ev_b", "alpha": 0.01}
    out, err = capsys.readouterr()
    assert "check:max_words:8" in out
    assert "evalsvc: regressed: check:max_words:8: mean diff -1.60 [-2.70, -0.50]" in err
    assert "evalsvc: the candidate ev_b regressed on 1 of 2 metrics against ev_a" in err


def test_fail_on_regression_passes_without_a_regressed_verdict(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/compare", as_json(200, comparison("no_significant_difference")))

    assert run(service, "compare", "ev_a", "ev_b", "--fail-on-regression", "--json") == 0
    assert json.loads(capsys.readouterr().out) == comparison("no_significant_difference")


def test_a_comparison_shows_each_metrics_mde_and_clustered_interval_when_clustered() -> None:
    clustered = comparison()
    clustered["cluster_by"] = "label"
    clustered["metrics"][0] |= {
        "mde": 1.234,
        "clusters": 4,
        "ci_low_clustered": -3.1,
        "ci_high_clustered": -0.1,
    }
    clustered["metrics"][1] |= {"mde": None, "clusters": 1, "ci_low_clustered": None}
    out, plain = io.StringIO(), io.StringIO()

    render_comparison(clustered, Console(file=out, width=200))
    render_comparison(comparison(), Console(file=plain, width=200))

    text = out.getvalue()
    assert "clustered by label" in text and "clustered interval (clusters)" in text
    assert "[-3.10, -0.10] (4)" in text and "[-, -] (1)" in text
    assert "1.23" in text and "mde: the smallest mean difference" in text
    # an answer without them (a service before E6, or no cluster_by): no clustered column
    assert "clustered" not in plain.getvalue() and "mde" in plain.getvalue()


def test_compare_with_cluster_by_asks_for_it(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/compare", as_json(200, comparison("no_significant_difference")))

    assert run(service, "compare", "ev_a", "ev_b", "--cluster-by", "input") == 0
    assert service.seen[-1].json() == {
        "baseline_id": "ev_a",
        "candidate_id": "ev_b",
        "cluster_by": "input",
    }
    with pytest.raises(SystemExit) as refused:
        main(["compare", "ev_a", "ev_b", "--cluster-by", "topic"])
    assert refused.value.code == 2
    assert "invalid choice: 'topic'" in capsys.readouterr().err


def plan_answer(candidate: str | None = "ev_b") -> dict[str, Any]:
    return {
        "baseline_id": "ev_a",
        "candidate_id": candidate,
        "effect": 0.25,
        "alpha": 0.05,
        "power": 0.8,
        "metrics": [
            {"metric": "check:max_words:8", "n": 40, "sd": 1.2345, "pairs_needed": 1900,
             "paired": candidate is not None},
            {"metric": "check:non_empty", "n": 1, "sd": None, "pairs_needed": None,
             "paired": candidate is not None},
        ],
    }  # fmt: skip


def test_plan_asks_for_the_effect_and_shows_the_pairs_needed(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/plan", as_json(200, plan_answer()), as_json(200, plan_answer(None)))

    assert run(service, "plan", "ev_a", "ev_b", "--effect", "0.25", "--power", "0.9") == 0
    paired = capsys.readouterr().out
    assert run(service, "plan", "ev_a", "--effect", "0.25", "--alpha", "0.01", "--json") == 0
    alone = capsys.readouterr().out

    assert [s.json() for s in service.seen] == [
        {"baseline_id": "ev_a", "effect": 0.25, "candidate_id": "ev_b", "power": 0.9},
        {"baseline_id": "ev_a", "effect": 0.25, "alpha": 0.01},
    ]
    assert "paired: baseline ev_a with candidate ev_b" in paired
    assert "1,900" in paired and "1.234" in paired
    assert "- (too few pairs to estimate the sd)" in paired
    assert json.loads(alone) == plan_answer(None)


def test_a_plan_without_a_candidate_says_its_two_independent_runs() -> None:
    out = io.StringIO()
    render_plan(plan_answer(None), Console(file=out, width=160))
    assert "two independent runs, from baseline ev_a (pairs needed in each run)" in out.getvalue()


def test_plan_needs_a_finite_effect_and_says_the_services_400(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/plan", as_json(400, {"error": "effect: must be greater than 0"}))

    for arguments in (["ev_a"], ["ev_a", "--effect", "inf"], ["ev_a", "--effect", "x"]):
        with pytest.raises(SystemExit) as refused:
            run(service, "plan", *arguments)
        assert refused.value.code == 2
        assert "--effect" in capsys.readouterr().err
    assert service.seen == []
    assert run(service, "plan", "ev_a", "--effect", "0") == 1
    assert "effect: must be greater than 0" in capsys.readouterr().err


def test_a_comparison_out_of_the_services_time_is_asked_again_as_retry_after_says(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a service too busy to compare in time twice, then answering
    busy = {"error": "comparing 'ev_a' with 'ev_b' ran out of this request's time"}
    service.on(
        "POST",
        "/v1/compare",
        as_json(503, busy, **{"Retry-After": "10"}),
        as_json(502, {"message": "Internal server error"}),
        as_json(200, comparison("no_significant_difference")),
    )
    pauses: list[float] = []
    monkeypatch.setattr(polling.time, "sleep", pauses.append)

    # When the CI gate compares
    code = run(service, "compare", "ev_a", "ev_b", "--fail-on-regression")

    # Then it waited as told (and backed off without a Retry-After), and the gate passed
    assert code == 0
    assert pauses == [10.0, 2 * polling.FIRST_RETRY_SECONDS]
    assert len(service.seen) == 3
    assert all(seen.json()["baseline_id"] == "ev_a" for seen in service.seen)
    err = capsys.readouterr().err
    assert "evalsvc: HTTP 503: comparing 'ev_a' with 'ev_b' ran out of this request's time; " in err
    assert "asking again in 10 s (retry 1 of 3)" in err


def test_retrying_gives_up_after_its_attempts_and_never_retries_a_413(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(polling.time, "sleep", lambda seconds: None)
    service.on("POST", "/v1/compare", as_json(503, {"error": "busy"}, **{"Retry-After": "1"}))

    assert run(service, "compare", "ev_a", "ev_b") == 1
    assert len(service.seen) == polling.READ_ATTEMPTS
    assert capsys.readouterr().err.splitlines()[-1] == "evalsvc: HTTP 503: busy"

    service.seen.clear()
    service.on("POST", "/v1/compare", as_json(413, {"error": "cannot be compared"}))
    service.on("GET", "/v1/compare/report", as_json(429, {"error": "over the monthly limit"}))
    assert run(service, "compare", "ev_a", "ev_b") == 1
    assert run(service, "report", "ev_a", "--compare", "ev_b") == 1
    assert len(service.seen) == 2  # too large, or a limit with no Retry-After: asked once


def test_a_report_out_of_the_services_time_is_asked_again(
    service: Scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(polling.time, "sleep", lambda seconds: None)
    service.on(
        "GET",
        "/v1/compare/report",
        as_json(503, {"error": "ran out of time"}, **{"Retry-After": "10"}),
        (200, {"Content-Type": "text/html; charset=utf-8"}, HTML),
    )

    assert run(service, "report", "ev_a", "--compare", "ev_b", "-o", str(tmp_path / "c.html")) == 0
    assert (tmp_path / "c.html").read_bytes() == HTML


# ---- pairwise ----------------------------------------------------------------------------------


def pairwise_body(status: str = "complete", **more: Any) -> dict[str, Any]:
    """GET /pairwise/{id} (E5) of three runs judged in both orders."""
    body: dict[str, Any] = {
        "pairwise_id": "pw_1",
        "status": status,
        "progress": {"done": 120, "total": 120},
        "failure": None,
        "question": "Which answer is more helpful?",
        "result_ids": ["ev_a", "ev_b", "ev_c"],
        "pairs_used": 40,
        "both_orders": True,
        "alpha": 0.05,
        "usage": {
            "llm_calls": 236,
            "cache_hits": 4,
            "input_tokens": 48000,
            "output_tokens": 7200,
            "cost_usd": 0.0115,
            "model": "openai:gpt-4o-mini",
        },
        "position": {
            "judgements": 240,
            "first_chosen": 130,
            "second_chosen": 90,
            "ties": 20,
            "consistency": 0.8167,
        },
        "matchups": [
            {
                "a": "ev_a",
                "b": "ev_b",
                "a_wins": 30,
                "b_wins": 6,
                "ties": 4,
                "win_rate": 0.8333,
                "ci_low": 0.6811,
                "ci_high": 0.9213,
                "p_value": 0.00007,
                "p_adjusted": 0.0002,
                "verdict": "a_better",
            },
            {
                "a": "ev_a",
                "b": "ev_c",
                "a_wins": 18,
                "b_wins": 15,
                "ties": 7,
                "win_rate": 0.5455,
                "ci_low": 0.3799,
                "ci_high": 0.7016,
                "p_value": 0.728,
                "p_adjusted": 0.728,
                "verdict": "no_significant_difference",
            },
            {
                "a": "ev_b",
                "b": "ev_c",
                "a_wins": 0,
                "b_wins": 0,
                "ties": 40,
                "win_rate": None,
                "ci_low": None,
                "ci_high": None,
                "p_value": None,
                "p_adjusted": None,
                "verdict": "no_significant_difference",
            },
        ],
        "leaderboard": [
            {
                "result_id": "ev_a",
                "rank": 1,
                "strength": 0.62,
                "ci_low": 0.18,
                "ci_high": 1.06,
                "wins": 48,
                "losses": 21,
                "ties": 11,
            },
            {
                "result_id": "ev_c",
                "rank": 2,
                "strength": -0.21,
                "ci_low": -0.64,
                "ci_high": 0.22,
                "wins": 15,
                "losses": 18,
                "ties": 47,
            },
            {
                "result_id": "ev_b",
                "rank": 3,
                "strength": -0.41,
                "ci_low": -0.86,
                "ci_high": 0.04,
                "wins": 6,
                "losses": 30,
                "ties": 44,
            },
        ],
        "verdicts": [
            {
                "pair_id": "q1",
                "a": "ev_a",
                "b": "ev_b",
                "winner": "a",
                "first_order": {"winner": "first", "reason": "a is specific"},
                "second_order": {"winner": "second", "reason": "the second is specific"},
            }
        ],
        "next_cursor": None,
    }
    body.update(more)
    return body


PAIRWISE_ARGS = ("pairwise", "ev_a", "ev_b", "ev_c", "--question", "Which answer is more helpful?")


def test_pairwise_answered_at_once_prints_the_leaderboard_matchups_and_position(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/pairwise", as_json(200, pairwise_body()))

    code = run(
        service,
        *PAIRWISE_ARGS,
        "--one-order",
        "--max-pairs",
        "40",
        "--alpha",
        "0.01",
        "--max-cost-usd",
        "0.5",
    )

    # Then one request carried every argument, and the finished body was shown as it came
    assert code == 0
    (post,) = service.seen
    assert (post.method, post.path) == ("POST", "/v1/pairwise")
    assert post.headers["prefer"] == "respond-async"
    assert post.json() == {
        "result_ids": ["ev_a", "ev_b", "ev_c"],
        "question": "Which answer is more helpful?",
        "both_orders": False,
        "max_pairs": 40,
        "alpha": 0.01,
        "max_cost_usd": 0.5,
    }
    out, err = capsys.readouterr()
    assert err == ""
    assert "\x1b" not in out
    assert "pairwise judging pw_1: 3 runs over 40 pairs, both orders; alpha 0.05" in out
    assert "question: Which answer is more helpful?" in out
    assert "LLM: 236 calls, 4 cache hits, 48000 input and 7200 output tokens, $0.011500" in out
    rows = [re.sub(r"[│┃ ]+", " ", line).strip() for line in out.splitlines()]
    assert "rank run strength 95% interval wins losses ties" in "\n".join(rows)
    leaderboard = rows.index("1 ev_a +0.62 [+0.18, +1.06] 48 21 11")
    assert rows[leaderboard + 1 : leaderboard + 3] == [
        "2 ev_c -0.21 [-0.64, +0.22] 15 18 47",
        "3 ev_b -0.41 [-0.86, +0.04] 6 30 44",
    ]
    assert "ev_a ev_b 30 6 4 0.83 [0.68, 0.92] <0.001 a better" in rows
    assert "ev_a ev_c 18 15 7 0.55 [0.38, 0.70] 0.728 not significant" in rows
    assert "ev_b ev_c 0 0 40 - [-, -] - not significant" in rows  # nulls as dashes
    assert (
        "position: 240 judgements, first chosen 130, second chosen 90, ties 20; consistency "
        "81.7% (both orders agreed)" in rows
    )


def test_pairwise_queued_follows_its_progress_then_prints_the_tables(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given work the service queues, read while it runs, once busy, then complete
    service.on(
        "POST",
        "/v1/pairwise",
        as_json(202, {"pairwise_id": "pw_1", "status": "running"}, Location="pairwise/pw_1"),
    )
    service.on(
        "GET",
        "/v1/pairwise/pw_1",
        as_json(200, pairwise_body("running", progress={"done": 3, "total": 40})),
        as_json(503, {"error": "busy"}, **{"Retry-After": "0"}),
        as_json(200, pairwise_body("running", progress={"done": 20, "total": 40})),
        as_json(200, pairwise_body(progress={"done": 40, "total": 40})),
    )

    assert run(service, *PAIRWISE_ARGS) == 0

    # Then it was followed with one verdict a page, its progress said off a terminal as
    # evaluate says it, and the tables drawn from the last answer
    assert service.seen[0].json() == {
        "result_ids": ["ev_a", "ev_b", "ev_c"],
        "question": "Which answer is more helpful?",
    }
    assert [s.path for s in service.seen[1:]] == ["/v1/pairwise/pw_1?limit=1"] * 4
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        "pairwise judging pw_1: 3/40 pairs (7%)",
        "pairwise judging pw_1: 20/40 pairs (50%)",
        "pairwise judging pw_1: 40/40 pairs (100%)",
    ]
    assert "\x1b" not in out + err
    assert "a better" in out and "position: 240 judgements" in out


def test_pairwise_json_prints_the_final_body_with_its_first_page_of_verdicts(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given queued work whose verdicts run to a second page
    final = pairwise_body(next_cursor="c2")
    service.on("POST", "/v1/pairwise", as_json(202, {"pairwise_id": "pw_1", "status": "running"}))
    service.on(
        "GET",
        "/v1/pairwise/pw_1",
        lambda seen: as_json(
            200, final | {"verdicts": final["verdicts"][:1] if "limit=1" in seen.path else []}
        ),
    )

    assert run(service, *PAIRWISE_ARGS, "--json") == 0

    # Then once complete it is read whole, as GET /pairwise/{id} answers, and printed alone
    assert [s.path for s in service.seen[1:]] == [
        "/v1/pairwise/pw_1?limit=1",
        "/v1/pairwise/pw_1",
    ]
    out, err = capsys.readouterr()
    assert json.loads(out) == final | {"verdicts": []}
    assert err == "pairwise judging pw_1: 120/120 pairs (100%)\n"

    # And a body finished inside the request is printed as it came, asked for nothing more
    service.seen.clear()
    service.on("POST", "/v1/pairwise", as_json(200, final))
    assert run(service, *PAIRWISE_ARGS, "--json") == 0
    assert json.loads(capsys.readouterr().out) == final
    assert len(service.seen) == 1


def test_pairwise_answered_with_its_status_only_is_read(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/pairwise", as_json(200, {"pairwise_id": "pw_1", "status": "complete"}))
    service.on("GET", "/v1/pairwise/pw_1", as_json(200, pairwise_body()))

    assert run(service, *PAIRWISE_ARGS) == 0
    assert [(s.method, s.path) for s in service.seen] == [
        ("POST", "/v1/pairwise"),
        ("GET", "/v1/pairwise/pw_1"),
    ]
    assert "1 ev_a" in re.sub(r"[│ ]+", " ", capsys.readouterr().out)


@pytest.mark.parametrize("queued", [True, False])
def test_a_failed_pairwise_judging_exits_1_naming_its_failure(
    service: Scripted, capsys: pytest.CaptureFixture[str], queued: bool
) -> None:
    failed = pairwise_body("failed", failure="the judge answered nonsense for pair q3")
    if queued:
        service.on(
            "POST", "/v1/pairwise", as_json(202, {"pairwise_id": "pw_1", "status": "running"})
        )
        service.on("GET", "/v1/pairwise/pw_1", as_json(200, failed))
    else:
        service.on("POST", "/v1/pairwise", as_json(200, failed))

    assert run(service, *PAIRWISE_ARGS) == 1

    out, err = capsys.readouterr()
    assert out == ""  # no table of a failed judging
    assert err.splitlines()[-1] == (
        "evalsvc: pairwise judging pw_1 failed: the judge answered nonsense for pair q3"
    )


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (400, "the runs 'ev_a', 'ev_b' and 'ev_c' have no pair id in common"),
        (409, "evaluation 'ev_c' is still running: judge it once it is complete"),
        (404, "no evaluation result with id 'ev_c'"),
    ],
)
def test_pairwise_refused_by_the_service_prints_what_it_said(
    service: Scripted, capsys: pytest.CaptureFixture[str], status: int, said: str
) -> None:
    service.on("POST", "/v1/pairwise", as_json(status, {"error": said}))

    assert run(service, *PAIRWISE_ARGS) == 1

    assert len(service.seen) == 1  # it changes things: asked once
    assert capsys.readouterr().err == f"evalsvc: HTTP {status}: {said}\n"


ESTIMATE = {
    "pairs": 40,
    "llm_calls": 240,
    "cached_calls": 4,
    "input_tokens_max": 96000,
    "output_tokens_max": 24000,
    "cost_usd_expected": 0.0115,
    "cost_usd_max": 0.0288,
    "model": "openai:gpt-4o-mini",
}


def test_pairwise_estimate_prints_what_it_would_take_and_judges_nothing(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(polling.time, "sleep", lambda seconds: None)
    service.on(
        "POST",
        "/v1/pairwise/estimate",
        as_json(503, {"error": "busy"}, **{"Retry-After": "1"}),  # stores nothing: asked again
        as_json(200, ESTIMATE),
    )

    assert run(service, *PAIRWISE_ARGS, "--one-order", "--estimate") == 0

    assert [s.path for s in service.seen] == ["/v1/pairwise/estimate"] * 2
    assert service.seen[-1].json()["both_orders"] is False
    out, err = capsys.readouterr()
    assert out == (
        "estimate: 40 pairs, 240 LLM calls (4 of them cached), at most 96000 input and 24000 "
        "output tokens\ncost $0.011500 expected, at most $0.028800 (openai:gpt-4o-mini)\n"
    )
    assert "asking again in 1 s (retry 1 of 3)" in err

    service.seen.clear()
    unpriced = ESTIMATE | {"cost_usd_expected": None, "cost_usd_max": None, "model": "local"}
    service.on("POST", "/v1/pairwise/estimate", as_json(200, unpriced))
    assert run(service, *PAIRWISE_ARGS, "--estimate") == 0
    assert "cost unknown: the model local has no price" in capsys.readouterr().out
    assert run(service, *PAIRWISE_ARGS, "--estimate", "--json") == 0
    assert json.loads(capsys.readouterr().out) == unpriced
    assert {s.path for s in service.seen} == {"/v1/pairwise/estimate"}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["ev_a"], "pairwise judges 2 to 8 runs (evaluation result ids), not 1; nothing was sent"),
        ([f"ev_{k}" for k in range(9)], "pairwise judges 2 to 8 runs"),
        (["ev_a", "ev_b", "ev_a"], "each run is judged once, but 'ev_a' is given more than once"),
        (["ev_a", "bad id"], "run 'bad id' is not an evaluation result id: 1-128 characters"),
        (["ev_a", "ev_b", "--question", " \n"], "--question is empty: give the criterion"),
        (
            ["ev_a", "ev_b", "--question", EMOJI * 2001],
            "--question has 2,001 characters, over the limit of 2,000",
        ),
        (
            ["ev_a", "ev_b", "--alpha", "0"],
            "--alpha is 0: it must be more than 0 and less than 0.5",
        ),
        (["ev_a", "ev_b", "--alpha", "0.5"], "--alpha is 0.5: it must be more than 0"),
        (["ev_a", "ev_b", "--max-cost-usd", "0"], "--max-cost-usd is 0: it must be more than 0"),
        (["ev_a", "ev_b", "--max-cost-usd", "-1", "--estimate"], "--max-cost-usd is -1"),
    ],
)
def test_pairwise_refuses_bad_arguments_before_sending_anything(
    service: Scripted, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    if "--question" not in args:
        args = [*args, "--question", "Which is better?"]

    assert run(service, "pairwise", *args) == 2

    assert service.seen == []
    err = capsys.readouterr().err
    assert err.startswith(f"evalsvc: {said}") and len(err.splitlines()) == 1


def test_pairwise_lists_every_bad_argument_at_once(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(service, "pairwise", "ev_a", "ev_a", "x\x1b[2J", "--question", "", "--alpha", "2")

    assert code == 2
    assert service.seen == []
    assert capsys.readouterr().err.splitlines() == [
        "run 'x\\x1b[2J' is not an evaluation result id: 1-128 characters of letters, digits, "
        "'.', '_', ':' or '-', starting with a letter or digit",
        "each run is judged once, but 'ev_a' is given more than once",
        "--question is empty: give the criterion, e.g. 'Which answer is more helpful?'",
        "--alpha is 2: it must be more than 0 and less than 0.5",
        "evalsvc: 4 problems with the arguments (listed above); nothing was sent",
    ]


def test_pairwise_takes_the_bounds_themselves(service: Scripted) -> None:
    service.on("POST", "/v1/pairwise", as_json(200, pairwise_body()))
    runs = [f"ev_{k}" for k in range(8)]

    code = run(
        service,
        "pairwise",
        *runs,
        "--question",
        EMOJI * 2000,
        "--max-pairs",
        "100000",
        "--alpha",
        "0.49",
    )

    assert code == 0
    assert service.seen[0].json() == {
        "result_ids": runs,
        "question": EMOJI * 2000,
        "max_pairs": 100_000,
        "alpha": 0.49,
    }


@pytest.mark.parametrize(
    "args",
    [
        ["ev_a", "ev_b", "--question", "q", "--max-pairs", "0"],
        ["ev_a", "ev_b", "--question", "q", "--max-pairs", "100001"],
        ["ev_a", "ev_b", "--question", "q", "--alpha", "nan"],
        ["ev_a", "ev_b", "--question", "q", "--max-cost-usd", "inf"],
        ["ev_a", "ev_b"],
        ["--question", "q"],
    ],
)
def test_pairwise_flags_that_cannot_be_read_are_usage_errors(args: list[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["pairwise", *args, "--url", "http://127.0.0.1:9/v1", "--key", KEY])
    assert caught.value.code == 2


def test_ctrl_c_while_following_says_the_pairwise_judging_goes_on(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/pairwise", as_json(202, {"pairwise_id": "pw_1", "status": "running"}))

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(polling, "follow", interrupted)
    assert run(service, *PAIRWISE_ARGS) == 130
    assert capsys.readouterr().err == (
        "evalsvc: interrupted; pairwise judging pw_1 goes on in the service (GET /pairwise/pw_1)\n"
    )


def test_a_queued_answer_without_an_id_is_an_error(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/pairwise", as_json(202, {"status": "running"}))
    assert run(service, *PAIRWISE_ARGS) == 1
    assert (
        capsys.readouterr().err
        == "evalsvc: POST /pairwise answered HTTP 202 without a pairwise_id\n"
    )

    # A Location naming it is enough
    service.on(
        "POST", "/v1/pairwise", as_json(202, {"status": "running"}, Location="pairwise/pw_1")
    )
    service.on("GET", "/v1/pairwise/pw_1", as_json(200, pairwise_body()))
    assert run(service, *PAIRWISE_ARGS) == 0


# ---- report ------------------------------------------------------------------------------------

HTML = "<!DOCTYPE html><title>r</title><p>é</p>".encode()


def test_a_report_is_saved_to_its_default_file(
    service: Scripted,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    html = (200, {"Content-Type": "text/html; charset=utf-8"}, HTML)
    service.on("GET", "/v1/evaluation/ev_1/report", html)
    service.on("GET", "/v1/compare/report", html)
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result()))
    service.on("GET", "/v1/evaluation/ev_1/anchored", unlabeled())
    monkeypatch.chdir(tmp_path)

    assert run(service, "report", "ev_1") == 0
    assert run(service, "report", "ev_1", "--compare", "ev/2") == 0
    assert run(service, "report", "ev_1", "-o", str(tmp_path / "out.html")) == 0

    assert capsys.readouterr().out.splitlines() == [
        "report-ev_1.html",
        "compare-ev_1-ev_2.html",
        str(tmp_path / "out.html"),
    ]
    assert (tmp_path / "report-ev_1.html").read_bytes() == HTML
    assert (tmp_path / "compare-ev_1-ev_2.html").read_bytes() == HTML
    # A result's report is followed by what people would say of its metrics (E12: none has
    # audit labels here); a comparison's is not
    anchored = [f"/v1/evaluation/ev_1/anchored?metric_idx={k}" for k in range(2)]
    result_report = ["/v1/evaluation/ev_1/report", "/v1/evaluation/ev_1", *anchored]
    assert [s.path for s in service.seen] == [
        *result_report,
        "/v1/compare/report?baseline_id=ev_1&candidate_id=ev%2F2",
        *result_report,
    ]
    assert service.seen[0].headers["accept"] == "text/html"
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "compare-ev_1-ev_2.html",
        "out.html",
        "report-ev_1.html",
    ]


def test_a_comparisons_report_asks_for_its_clusters_and_only_a_comparisons(
    service: Scripted, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service.on("GET", "/v1/compare/report", (200, {"Content-Type": "text/html"}, HTML))
    monkeypatch.chdir(tmp_path)

    assert run(service, "report", "ev_1", "--compare", "ev_2", "--cluster-by", "label") == 0
    assert run(service, "report", "ev_1", "--cluster-by", "label") == 2

    assert [s.path for s in service.seen] == [
        "/v1/compare/report?baseline_id=ev_1&candidate_id=ev_2&cluster_by=label"
    ]


def test_a_report_goes_to_stdout_with_a_dash(
    service: Scripted, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    service.on("GET", "/v1/evaluation/ev_1/report", (200, {"Content-Type": "text/html"}, HTML))
    assert run(service, "report", "ev_1", "-o", "-") == 0
    assert capsysbinary.readouterr().out == HTML


def report_on_a_terminal(service: Scripted, *args: str) -> tuple[int, str]:
    """`evalsvc report ... -o -` in a subprocess whose stdout is a terminal: its exit code and
    what reached the terminal (stderr goes there too)."""
    master, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "evalsvc_tools.cli", "report", *args, "-o", "-"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "EVALSVC_URL": service.url, "EVALSVC_API_KEY": KEY},
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
    )
    os.close(terminal)
    received = bytearray()
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the process has gone, and the terminal with it
                break
            if not chunk:
                break
            received += chunk
        code = process.wait(timeout=60)
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    return code, received.decode("utf-8", "replace").replace("\r\n", "\n")


HOSTILE_PAGE = (
    "<!DOCTYPE html><title>r</title><p>\x1b[2J\x1b]0;owned\x07\x1b]8;;https://evil.example"
    "\x1b\\link\u202eé</p>\n"
).encode()


def test_a_report_to_a_terminal_is_refused_unless_forced_then_shown_not_obeyed(
    service: Scripted,
) -> None:
    service.on(
        "GET", "/v1/evaluation/ev_1/report", (200, {"Content-Type": "text/html"}, HOSTILE_PAGE)
    )
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, result(status="running")))

    refused, said = report_on_a_terminal(service, "ev_1")
    assert refused == 2
    assert service.seen == []  # refused before asking
    assert said.startswith("evalsvc: -o - would write the HTML report to this terminal")
    assert "save it (-o FILE), pipe it (| less), or pass --force" in said

    forced, shown = report_on_a_terminal(service, "ev_1", "--force")
    assert forced == 0
    # The page, then the result (running: nothing is said of what people would say)
    assert [s.path for s in service.seen] == ["/v1/evaluation/ev_1/report", "/v1/evaluation/ev_1"]
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert shown == (
        "<!DOCTYPE html><title>r</title><p>\ufffd[2J\ufffd]0;owned\ufffd\ufffd]8;;"
        "https://evil.example\ufffd\\link\ufffdé</p>\n"
    )


def test_a_report_piped_is_written_as_it_is(
    service: Scripted, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    service.on(
        "GET", "/v1/evaluation/ev_1/report", (200, {"Content-Type": "text/html"}, HOSTILE_PAGE)
    )
    assert run(service, "report", "ev_1", "-o", "-", "--force") == 0
    assert capsysbinary.readouterr().out == HOSTILE_PAGE


def test_a_report_that_is_not_html_or_not_found_is_an_error(
    service: Scripted, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("GET", "/v1/evaluation/ev_1/report", as_json(200, {"x": 1}))
    out = tmp_path / "r.html"

    assert run(service, "report", "ev_1", "-o", str(out)) == 1
    assert run(service, "report", "ev_2", "-o", str(out)) == 1

    err = capsys.readouterr().err.splitlines()
    assert (
        err[0] == "evalsvc: GET /evaluation/ev_1/report answered application/json, not an HTML page"
    )
    assert err[1].startswith("evalsvc: HTTP 404: ")
    assert not out.exists()


def test_text_from_the_service_cannot_drive_the_terminal(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202eevil"
    body = comparison()
    body["metrics"][0]["metric"] = hostile
    body["regressions"][0]["candidate_reason"] = hostile
    out = io.StringIO()
    render_comparison(body, Console(file=out, width=160, force_terminal=True))
    assert "\x1b]52" not in out.getvalue() and "\x1b[2J" not in out.getvalue()
    assert "\u202e" not in out.getvalue()

    service.on("POST", "/v1/compare", as_json(404, {"error": f"no result {hostile}"}))
    assert run(service, "compare", "a", "b") == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err and "\x07" not in err
    assert "no result \ufffd]52;c;cm0gLXJmIH4=" in err


@pytest.mark.parametrize(
    "text",
    [
        'input,output\nq1,"unterminated\nq2,a2\nq3,a3\n',
        'input,output\nq0,a0\nq1,"he said "hi" to me\n',
    ],
)
def test_a_stray_quote_in_a_csv_is_an_error_not_a_swallowed_file(tmp_path: Path, text: str) -> None:
    path = write(tmp_path / "pairs.csv", text)

    with pytest.raises(BadFile) as caught:
        read_pairs(path)

    assert any("not valid CSV" in p for p in caught.value.problems)


def test_a_retry_after_of_zero_does_not_spin(monkeypatch: pytest.MonkeyPatch) -> None:
    pauses: list[float] = []
    answers = iter(
        [
            {"status": "running", "pairs_done": 1, "pairs_total": 2},
            {"status": "complete", "pairs_done": 2, "pairs_total": 2},
        ]
    )

    class Answer:
        retry_after = 0.0

        def json(self) -> Any:
            return next(answers)

    class Quiet:
        def update(self, done: int, total: int) -> None:
            pass

        def close(self) -> None:
            pass

    class Service:
        def request(self, method: str, path: str, query: Any = None) -> Answer:
            return Answer()

    monkeypatch.setattr(polling.time, "sleep", pauses.append)
    body = polling.follow(Service(), "ev_1", Quiet(), 1.0)  # type: ignore[arg-type]

    assert body["status"] == "complete"
    assert pauses == [polling.MIN_POLL_SECONDS]


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("deep.jsonl", "[" * 100_000 + "]" * 100_000 + "\n", "nested 100000 levels deep"),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "nested 100000 levels deep"),
        (
            "deep.jsonl",
            '{"input": ' + "[" * 100_000 + "]" * 100_000 + ', "output": "o"}\n',
            "nested 100001 levels deep",
        ),
        ("big.jsonl", '{"input": "i", "output": "o", "n": ' + "9" * 5_000 + "}\n", "digits"),
        ("nan.jsonl", '{"input": "i", "output": NaN}\n', "NaN is not a JSON value"),
        ("deep.csv", 'input,output,labels\ni,o,"' + "[" * 100_000 + '"\n', "levels deep"),
    ],
)
def test_json_nested_too_deep_or_too_long_is_a_bad_row_not_a_traceback(
    service: Scripted,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str,
    says: str,
) -> None:
    path = write(tmp_path / name, content)

    assert run(service, "push", str(path), "--seed", "faq") == 2

    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert service.seen == []


def test_a_service_answer_nested_too_deep_is_an_error_not_a_traceback(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = ("[" * 100_000 + "]" * 100_000).encode()
    service.on("POST", "/v1/compare", (200, {"Content-Type": "application/json"}, deep))

    assert run(service, "compare", "a", "b") == 1

    err = capsys.readouterr().err
    assert "body that is not JSON" in err and "Traceback" not in err


# ---- plain http --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://api.example.com/v1",
        "http://10.0.0.5:3000/v1",
        "http://[2001:db8::1]:3000/v1",
        "http://127.0.0.1.example.com/v1",
        "http://localhost.example.com/v1",
    ],
)
@pytest.mark.parametrize("given_by", ["flag", "environment"])
def test_plain_http_to_another_host_is_refused_before_anything_is_sent(
    service: Scripted,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    url: str,
    given_by: str,
) -> None:
    sent: list[Any] = []
    monkeypatch.setattr(Client, "request", lambda *args, **kwargs: sent.append(args))
    if given_by == "flag":
        code = main(["compare", "a", "b", "--url", url, "--key", KEY])
    else:
        monkeypatch.setenv("EVALSVC_URL", url)
        monkeypatch.setenv("EVALSVC_API_KEY", KEY)
        code = main(["compare", "a", "b"])

    assert code == 2
    assert sent == []
    err = capsys.readouterr().err
    assert err.startswith("evalsvc: ") and len(err.splitlines()) == 1
    assert "plain http to another machine" in err and "the API key would travel in clear" in err
    assert "https://" in err and "--insecure-http" in err
    assert KEY not in err


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:3000/v1",
        "http://127.8.9.10/v1",
        "http://localhost:3000/v1",
        "http://LOCALHOST/v1",
        "http://[::1]:3000/v1",
        "https://api.example.com/v1",
    ],
)
def test_loopback_http_and_https_anywhere_are_taken_without_a_word(url: str) -> None:
    assert Client(url, KEY).warning is None
    assert Client(url, KEY, insecure_http=True).warning is None


def test_insecure_http_sends_the_key_anyway_with_a_warning(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a host that is not this machine, reached here through a proxy on 127.0.0.1 (the
    # scripted service sees the whole URL as the path)
    remote = "http://10.1.2.3:8080/v1"
    proxy = service.url.removesuffix("/v1")
    monkeypatch.setattr(
        client_module,
        "_OPENER",
        urllib.request.build_opener(
            urllib.request.ProxyHandler({"http": proxy}), client_module._NoRedirects()
        ),
    )
    service.on("POST", f"{remote}/compare", as_json(200, comparison("no_significant_difference")))

    # When the user insists on plain http
    code = main(["compare", "a", "b", "--json", "--url", remote, "--key", KEY, "--insecure-http"])

    # Then the request went, and stderr says what that means
    assert code == 0
    assert [(s.path, s.headers["authorization"]) for s in service.seen] == [
        (f"{remote}/compare", KEY)
    ]
    out, err = capsys.readouterr()
    assert json.loads(out)["baseline_id"] == "ev_a"
    assert err == (
        "evalsvc: warning: sending the API key in clear over plain http to 10.1.2.3 "
        "(--insecure-http): anyone on the way can read it\n"
    )


# ---- the terminal filter -----------------------------------------------------------------------

# Characters a terminal obeys, and markup rich would read: ESC (CSI, OSC 52 clipboard, OSC 8
# link, a window title), BEL, C1's one-character CSI and OSC, DEL, bidirectional overrides and
# isolates, a zero-width joiner, the line separator, lone surrogates, a language tag.
HOSTILE_PIECES = [
    "\x1b[2J",
    "\x1b]0;owned\x07",
    "\x1b]8;;https://evil.example\x1b\\",
    "\x1b]52;c;cm0gLXJmIH4=\x07",
    "\x9b31m",
    "\x9d0;t\x9c",
    "\x7f",
    "\x00",
    "\r",
    "\b",
    "\u202e",
    "\u202a",
    "\u2066",
    "\u2069",
    "\u200d",
    "\u2028",
    "\ud800",
    "\udfff",
    "\U000e0041",
    "[link=https://evil.example]x[/link]",
    "[bold]",
    ":smile:",
    "\\",
    '"',
]
HOSTILE = st.lists(
    st.one_of(
        st.sampled_from(HOSTILE_PIECES),
        st.text(st.characters(exclude_categories=()), max_size=8),
    ),
    max_size=6,
).map("".join)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | HOSTILE,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(HOSTILE, inner, max_size=4),
    max_leaves=20,
)


def obeyed(text: str) -> list[str]:
    """The characters of `text` a terminal would obey rather than show (a newline aside)."""
    return [
        ch
        for ch in text
        if ch != "\n" and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")
    ]


@settings(max_examples=300, deadline=None)
@given(value=JSON_VALUES)
def test_json_for_the_terminal_obeys_nothing_and_reads_back_the_same(value: Any) -> None:
    shown = terminal.terminal_json(value)

    assert obeyed(shown) == []
    # What any JSON of the value reads back as (JSON cannot tell a high and a low surrogate
    # apart from the character they pair into: json.dumps' own output reads back so too).
    assert json.loads(shown) == json.loads(json.dumps(value))
    shown.encode("utf-8")  # no lone surrogate left to fail on a UTF-8 terminal


def test_json_for_the_terminal_keeps_text_as_it_is_and_escapes_what_would_be_obeyed() -> None:
    value = {"é 🎉": "x\x1b[2Jy\x9b\u202e\ud800\U000e0041\n"}
    assert terminal.terminal_json(value) == (
        '{\n  "é 🎉": "x\\u001b[2Jy\\u009b\\u202e\\ud800\\udb40\\udc41\\n"\n}'
    )


SGR = re.compile(r"\x1b\[[0-9;]*m")


def hostile_result(text: str) -> dict[str, Any]:
    body = result(
        results_id=text,
        dataset_id=text,
        metrics_id=text,
        created_at=text,
        pair_count=text,
        metrics_definitions=[text, "check:non_empty"],
        min_scoring_pairs=[[{"reason": text, "pair_id": text, "score": 1.0}], []],
    )
    body["usage"]["model"] = text
    return body


def hostile_comparison(text: str) -> dict[str, Any]:
    body = comparison()
    body.update(baseline_id=text, candidate_id=text, correction=text, pairs_matched=text)
    body["metrics"][0].update(metric=text, n=text, wins=text)
    body["metrics"][1]["verdict"] = text
    body["regressions"][0].update(pair_id=text, metric=text, candidate_reason=text)
    return body


def hostile_pairwise(text: str) -> dict[str, Any]:
    body = pairwise_body(pairwise_id=text, question=text, pairs_used=text, alpha=text)
    body["usage"]["model"] = text
    body["position"].update(judgements=text, ties=text)
    body["leaderboard"][0].update(result_id=text, rank=text, wins=text)
    body["matchups"][0].update(a=text, b=text, ties=text, verdict=text)
    return body


@settings(max_examples=150, deadline=None)
@given(text=HOSTILE)
def test_tables_show_the_services_text_and_obey_none_of_it(text: str) -> None:
    for render, body in (
        (render_evaluation, hostile_result(text)),
        (render_comparison, hostile_comparison(text)),
        (render_pairwise, hostile_pairwise(text)),
    ):
        # Off a terminal rich writes no escape code of its own: nothing in the output may be one
        plain = io.StringIO()
        render(body, Console(file=plain, width=200))  # type: ignore[operator]
        assert obeyed(plain.getvalue()) == []
        # On a terminal, only rich's own colours: no other sequence, no link made from markup
        drawn = io.StringIO()
        render(body, Console(file=drawn, width=200, force_terminal=True))  # type: ignore[operator]
        assert obeyed(SGR.sub("", drawn.getvalue())) == []


def test_markup_in_the_services_text_is_shown_as_it_is() -> None:
    text = "[link=https://evil.example]click[/link] [bold]x:smile:"
    for render, body in (
        (render_evaluation, hostile_result(text)),
        (render_comparison, hostile_comparison(text)),
        (render_pairwise, hostile_pairwise(text)),
    ):
        out = io.StringIO()
        render(body, Console(file=out, width=400, force_terminal=True))  # type: ignore[operator]
        assert text in SGR.sub("", out.getvalue())
        assert "\x1b]8" not in out.getvalue()


def test_evaluate_and_compare_json_escape_what_a_terminal_would_obey(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "q\x1b]0;title\x07\x9b2J\u202eevil"
    body = hostile_result("ev_1") | {"min_scoring_pairs": [[{"reason": text, "pair_id": text}]]}
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, body))
    service.on("POST", "/v1/compare", as_json(200, hostile_comparison(text)))

    assert run(service, "evaluate", "--seed", "faq", "--metrics", "m_1", "--json") == 0
    evaluated = capsys.readouterr().out
    assert run(service, "compare", "a", "b", "--json") == 0
    compared = capsys.readouterr().out

    assert obeyed(evaluated) == obeyed(compared) == []
    assert json.loads(evaluated) == body
    assert json.loads(compared) == hostile_comparison(text)
    assert "\\u001b]0;title\\u0007\\u009b2J\\u202eevil" in evaluated


def test_the_progress_lines_and_errors_obey_nothing(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    text = "x\x1b[2J\u202e\x9b"
    failed = hostile_result("ev_1") | {"status": "failed", "failure": text, "dataset_id": text}
    service.on("POST", "/v1/evaluate", as_json(202, queued("ev_1", 0, 10)))
    service.on("GET", "/v1/evaluation/ev_1", as_json(200, failed))

    assert run(service, "evaluate", "--seed", "faq") == 1

    err = capsys.readouterr().err
    assert obeyed(err) == []
    assert "evaluation ev_1 failed: x\ufffd[2J\ufffd\ufffd" in err


def test_pairwise_shows_the_services_text_and_obeys_none_of_it(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a service whose run ids, question, verdicts and failure hold what a terminal obeys
    text = "ev_x\x1b]0;owned\x07\x9b2J\u202eevil"
    hostile = hostile_pairwise(text) | {"pairwise_id": "pw_1"}  # its id names a path: checked
    hostile["verdicts"][0]["first_order"]["reason"] = text
    service.on("POST", "/v1/pairwise", as_json(200, hostile))

    # When its tables are drawn, and its body printed as JSON
    assert run(service, *PAIRWISE_ARGS) == 0
    drawn = capsys.readouterr().out
    assert run(service, *PAIRWISE_ARGS, "--json") == 0
    printed = capsys.readouterr().out

    # Then each is shown, never obeyed
    assert obeyed(drawn) == obeyed(printed) == []
    assert "ev_x\ufffd]0;owned\ufffd\ufffd2J\ufffdevil" in drawn  # the run id, in the leaderboard
    assert json.loads(printed) == hostile
    assert "\\u001b]0;owned\\u0007\\u009b2J\\u202eevil" in printed

    # And a failure the service names reaches stderr the same way
    failed = pairwise_body("failed", failure=f"the judge said {text}")
    service.on("POST", "/v1/pairwise", as_json(200, failed))
    assert run(service, *PAIRWISE_ARGS) == 1
    err = capsys.readouterr().err
    assert obeyed(err) == []
    assert err == (
        "evalsvc: pairwise judging pw_1 failed: the judge said "
        "ev_x\ufffd]0;owned\ufffd\ufffd2J\ufffdevil\n"
    )


# ---- monitors (E8) -------------------------------------------------------------------------------

SECRET = "hook-secret-0123456789abcdef"
MONITOR = "mon_1"
RUN_ID = "mon_1.1795843569038"
RUN_PATH = "/v1/monitors/mon_1/run"
HISTORY_PATH = "/v1/monitors/mon_1/history"


def monitor(**more: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "monitor_id": MONITOR,
        "name": "faq watch",
        "seed_data_id": "faq",
        "metrics_id": "m_1",
        "schedule": "rate(1 day)",
        "pair_query": {"latest_n_pairs": 200, "pair_labels": None, "last_n_seconds": None},
        "baseline": "previous",
        "alpha": 0.05,
        "regression_threshold": 1.0,
        "max_cost_usd": None,
        "webhook_url": "https://hooks.example.com/evalsvc",
        "created_at": "2026-11-28T05:26:06.123Z",
        "next_run_at": "2026-11-29T05:26:06.123Z",
    }
    body.update(more)
    return body


def monitor_run(status: str = "complete", **more: Any) -> dict[str, Any]:
    ended = status in ("complete", "failed")
    body: dict[str, Any] = {
        "run_id": RUN_ID,
        "scheduled_for": "2026-11-28T05:26:09.038Z",
        "status": status,
        "manual": True,
        "result_id": "ev_7",
        "baseline_id": "ev_6",
        "metrics": [
            {
                "metric": "check:max_words:6",
                "mean": 4.2,
                "ci_low": 3.5,
                "ci_high": 4.9,
                "verdict": "no_significant_difference",
            },
            {
                "metric": "Is the answer polite?",
                "mean": 4.6,
                "ci_low": 4.1,
                "ci_high": 5.0,
                "verdict": "improved",
            },
        ]
        if ended
        else [],
        "pairs_matched": 10 if ended else None,
        "cost_usd": 0.0012 if ended else None,
        "failure": None,
        "webhook": None,
    }
    body.update(more)
    return body


def history_page(*runs: dict[str, Any], cursor: str | None = None) -> Answer:
    return as_json(200, {"runs": list(runs), "next_cursor": cursor})


def older_run() -> dict[str, Any]:
    return monitor_run(run_id="mon_1.1795800000000", scheduled_for="2026-11-27T17:20:00.000Z")


STARTED = {"monitor_id": MONITOR, "run_id": RUN_ID, "scheduled_for": "2026-11-28T05:26:09.038Z"}
CREATE_ARGS = [
    "monitors",
    "create",
    "--name",
    "faq watch",
    "--dataset",
    "faq",
    "--metrics",
    "m_1",
    "--schedule",
    "rate(1 day)",
]


def test_monitors_create_sends_every_flag_and_reads_the_secret_from_the_environment(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given the webhook's secret in a variable of the environment
    monkeypatch.setenv("FAQ_HOOK_SECRET", SECRET)
    answer = {"monitor_id": MONITOR, "next_run_at": "2026-11-29T05:26:06.123Z"}
    service.on("POST", "/v1/monitors", as_json(201, answer, Location="monitors/mon_1"))

    # When a monitor is created naming that variable
    code = run(
        service,
        *CREATE_ARGS,
        "--pairs",
        "50",
        "--label",
        "billing",
        "--baseline",
        "ev_6",
        "--alpha",
        "0.01",
        "--threshold",
        "2",
        "--max-cost-usd",
        "0.5",
        "--webhook-url",
        "https://hooks.example.com/evalsvc",
        "--webhook-secret-env",
        "FAQ_HOOK_SECRET",
    )

    # Then the secret is sent in the body, and shown nowhere
    assert code == 0
    assert service.seen[0].json() == {
        "name": "faq watch",
        "seed_data_id": "faq",
        "metrics_id": "m_1",
        "schedule": "rate(1 day)",
        "pair_query": {"pair_labels": ["billing"], "latest_n_pairs": 50},
        "baseline": "ev_6",
        "alpha": 0.01,
        "regression_threshold": 2.0,
        "max_cost_usd": 0.5,
        "webhook_url": "https://hooks.example.com/evalsvc",
        "webhook_secret": SECRET,
    }
    out, err = capsys.readouterr()
    assert out == "mon_1\n"  # the id alone on stdout, for a script
    assert err == (
        "created monitor mon_1 (faq watch): rate(1 day) in UTC, first run at "
        "2026-11-29 05:26:06 UTC\n"
    )
    assert SECRET not in out + err

    # And with --json the answer is printed, the fewest fields sent without the options
    assert run(service, *CREATE_ARGS, "--json") == 0
    assert json.loads(capsys.readouterr().out) == answer
    assert service.seen[1].json() == {
        "name": "faq watch",
        "seed_data_id": "faq",
        "metrics_id": "m_1",
        "schedule": "rate(1 day)",
    }


@pytest.mark.parametrize(
    ("more", "environment", "said"),
    [
        (
            ["--webhook-url", "https://hooks.example.com/x"],
            {},
            "--webhook-url and --webhook-secret-env go together",
        ),
        (
            ["--webhook-secret-env", "FAQ_HOOK_SECRET"],
            {"FAQ_HOOK_SECRET": SECRET},
            "--webhook-url and --webhook-secret-env go together",
        ),
        (
            ["--webhook-url", "https://hooks.example.com/x", "--webhook-secret-env", "UNSET_HOOK"],
            {},
            "--webhook-secret-env names $UNSET_HOOK, which is not set or empty",
        ),
        (
            ["--webhook-url", "https://hooks.example.com/x", "--webhook-secret-env", "SHORT"],
            {"SHORT": "tooshort-secret"},
            "the secret in $SHORT has 15 characters: a webhook secret has 16 to 256",
        ),
        (["--baseline", "not an id"], {}, "--baseline 'not an id' is neither 'previous' nor"),
        (["--max-cost-usd", "0"], {}, "--max-cost-usd is 0: it must be more than 0"),
    ],
)
def test_monitors_create_refuses_bad_arguments_before_sending_anything(
    service: Scripted,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    more: list[str],
    environment: dict[str, str],
    said: str,
) -> None:
    monkeypatch.delenv("UNSET_HOOK", raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)

    assert run(service, *CREATE_ARGS, *more) == 2

    assert service.seen == []
    err = capsys.readouterr().err
    assert err.startswith(f"evalsvc: {said}") and err.rstrip().endswith("nothing was sent")
    assert "tooshort-secret" not in err and SECRET not in err


def test_monitors_create_lists_every_bad_argument_at_once(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["monitors", "create", "--name", "n", "--dataset", "a b", "--metrics", "m/1"]
    assert run(service, *args, "--schedule", "rate(1 day)") == 2

    assert service.seen == []
    assert capsys.readouterr().err.splitlines() == [
        f"--dataset 'a b' is not an id: {monitors.CLIENT_ID_RULE}",
        f"--metrics 'm/1' is not an id: {monitors.CLIENT_ID_RULE}",
        "evalsvc: 2 problems with the arguments (listed above); nothing was sent",
    ]


def test_monitors_create_prints_what_the_service_refused(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    said = "schedule: schedule 'rate(1 minutes)' is not valid: say rate(1 minute)"
    service.on("POST", "/v1/monitors", as_json(400, {"error": said}))

    assert run(service, *CREATE_ARGS[:-1], "rate(1 minutes)") == 1

    assert capsys.readouterr() == ("", f"evalsvc: HTTP 400: {said}\n")


def test_monitors_list_draws_a_table_or_prints_the_json(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    by_label = monitor(
        monitor_id="mon_2",
        name="billing",
        pair_query={"latest_n_pairs": None, "pair_labels": ["billing", "vip"]},
        baseline="ev_6",
        webhook_url=None,
    )
    service.on("GET", "/v1/monitors", as_json(200, {"monitors": [monitor(), by_label]}))

    monkeypatch.setenv("COLUMNS", "200")  # nothing wrapped
    assert run(service, "monitors", "list") == 0
    out = capsys.readouterr().out
    assert run(service, "monitors", "list", "--json") == 0
    printed = capsys.readouterr().out

    # Each monitor on two lines: id, dataset (pairs), schedule, baseline; then name, metrics
    # set, next run, webhook
    cells = [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in out.splitlines()
        if line.startswith("│")
    ]
    assert cells == [
        ["mon_1", "faq (newest 200)", "rate(1 day)", "previous"],
        ["faq watch", "m_1", "2026-11-29 05:26:06", "https://hooks.example.com/evalsvc"],
        ["mon_2", "faq (labels billing, vip)", "rate(1 day)", "ev_6"],
        ["billing", "m_1", "2026-11-29 05:26:06", "none"],
    ]
    assert json.loads(printed) == {"monitors": [monitor(), by_label]}


def test_monitors_list_says_when_there_is_none(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("GET", "/v1/monitors", as_json(200, {"monitors": []}))

    assert run(service, "monitors", "list") == 0

    assert capsys.readouterr().out == "no monitors (evalsvc monitors create makes one)\n"


def test_monitors_run_without_wait_prints_the_run_id_and_follows_nothing(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", RUN_PATH, as_json(202, STARTED, Location="history"))

    assert run(service, "monitors", "run", MONITOR) == 0
    out, err = capsys.readouterr()
    assert run(service, "monitors", "run", MONITOR, "--json") == 0

    assert [(s.method, s.path, s.body) for s in service.seen] == [("POST", RUN_PATH, b"")] * 2
    assert out == f"{RUN_ID}\n"
    assert err == f"monitor run {RUN_ID} started: see it with evalsvc monitors history mon_1\n"
    assert json.loads(capsys.readouterr().out) == STARTED


def test_monitors_run_wait_follows_its_evaluation_then_prints_metrics_cost_and_alert(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a run that is claimed, then evaluates 10 pairs, then ends with its alert pending,
    # then delivered; a scheduled run is newer than it in the history
    newer = monitor_run("claimed", run_id="mon_1.1795843600000", result_id=None)
    newer["scheduled_for"] = "2026-11-28T05:26:40.000Z"
    delivered = {"status": "delivered", "attempts": 1, "http_status": 204}
    service.on("POST", RUN_PATH, as_json(202, STARTED))
    service.on(
        "GET",
        HISTORY_PATH,
        history_page(newer, monitor_run("claimed", result_id=None), older_run()),
        history_page(newer, monitor_run("running"), older_run()),
        history_page(newer, monitor_run("running"), older_run()),
        history_page(monitor_run(webhook={**delivered, "status": "pending", "http_status": None})),
        history_page(monitor_run(webhook=delivered)),
    )
    service.on(
        "GET",
        "/v1/evaluation/ev_7",
        as_json(200, queued("ev_7", 4, 10)),
        as_json(200, queued("ev_7", 10, 10, status="complete")),
    )

    # When it is run and waited for
    assert run(service, "monitors", "run", MONITOR, "--wait") == 0

    # Then the progress is its evaluation's, and it prints each metric and what was alerted
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        f"monitor run {RUN_ID} of monitor mon_1 started, scheduled for 2026-11-28 05:26:09 UTC",
        f"monitor run {RUN_ID}: 4/10 pairs (40%)",
        f"monitor run {RUN_ID}: 10/10 pairs (100%)",
        f"monitor run {RUN_ID}: delivering its alert",
    ]
    read = [s.path for s in service.seen if s.path.startswith(HISTORY_PATH)]
    assert read == [f"{HISTORY_PATH}?limit=10"] * 5
    assert f"monitor run {RUN_ID}: complete (run by hand)" in out
    assert "evaluation ev_7 against baseline ev_6 (10 pairs matched)" in out
    assert re.search(r"check:max_words:6\s+│\s+4\.20 \[3\.50, 4\.90\] │ not significant", out)
    assert re.search(r"Is the answer polite\?\s+│\s+4\.60 \[4\.10, 5\.00\] │ improved", out)
    assert "cost $0.001200; alert delivered (HTTP 204, 1 attempt)" in out


def test_monitors_run_wait_json_prints_the_run_as_the_history_has_it(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", RUN_PATH, as_json(202, STARTED))
    service.on("GET", HISTORY_PATH, history_page(monitor_run()))

    assert run(service, "monitors", "run", MONITOR, "--wait", "--json") == 0

    assert json.loads(capsys.readouterr().out) == monitor_run()


def test_monitors_run_wait_exits_1_on_a_regression_naming_the_metric(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    ended = monitor_run()
    ended["metrics"][0]["verdict"] = "regressed"
    ended["webhook"] = {"status": "failed", "attempts": 3, "http_status": 500}
    service.on("POST", RUN_PATH, as_json(202, STARTED))
    service.on("GET", HISTORY_PATH, history_page(ended))

    assert run(service, "monitors", "run", MONITOR, "--wait") == 1

    out, err = capsys.readouterr()
    assert "regressed" in out and "alert failed (HTTP 500, 3 attempts)" in out
    assert err.splitlines()[-2:] == [
        "evalsvc: regressed: check:max_words:6: mean 4.20 [3.50, 4.90] against baseline ev_6",
        f"evalsvc: monitor run {RUN_ID} regressed on 1 of 2 metrics against baseline ev_6",
    ]


def test_monitors_run_wait_exits_1_when_the_run_failed(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    failure = "the evaluation could not start: no seed dataset with id 'faq'"
    failed = monitor_run("failed", failure=failure, metrics=[], cost_usd=None, baseline_id=None)
    service.on("POST", RUN_PATH, as_json(202, STARTED))
    service.on("GET", HISTORY_PATH, history_page(failed))

    assert run(service, "monitors", "run", MONITOR, "--wait") == 1

    out, err = capsys.readouterr()
    assert f"monitor run {RUN_ID}: failed" in out and f"failure: {failure}" in out
    assert "no baseline (nothing to compare with yet)" in out
    assert err.splitlines()[-1] == f"evalsvc: monitor run {RUN_ID} failed: {failure}"


def test_monitors_run_asks_again_while_the_tenant_runs_too_many_jobs(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    busy = "this tenant runs 4 jobs, as many as it may at once: retry once one has ended"
    service.on(
        "POST",
        RUN_PATH,
        as_json(429, {"error": busy}, **{"Retry-After": "0"}),
        as_json(202, STARTED),
    )

    assert run(service, "monitors", "run", MONITOR) == 0

    out, err = capsys.readouterr()
    assert out == f"{RUN_ID}\n"
    assert err.startswith(f"evalsvc: HTTP 429: {busy}; asking again in 0.2 s (retry 1 of 3)\n")


def test_monitors_run_of_an_unknown_monitor_prints_the_404(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", "/v1/monitors/mon_9/run", as_json(404, {"error": "no monitor with id"}))

    assert run(service, "monitors", "run", "mon_9", "--wait") == 1

    assert capsys.readouterr().err == "evalsvc: HTTP 404: no monitor with id\n"
    assert len(service.seen) == 1


def test_monitors_run_wait_gives_up_when_the_run_is_not_in_the_history(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", RUN_PATH, as_json(202, STARTED))
    service.on("GET", HISTORY_PATH, history_page(older_run(), cursor="1795800000000"))

    assert run(service, "monitors", "run", MONITOR, "--wait") == 1

    assert capsys.readouterr().err.splitlines()[-1] == (
        f"evalsvc: monitor run {RUN_ID} is not in the history of monitor mon_1"
    )
    # An older run on the page: no further page is asked for
    assert all("cursor" not in s.path for s in service.seen)


def test_ctrl_c_while_following_says_the_monitor_run_goes_on(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("POST", RUN_PATH, as_json(202, STARTED))

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(monitor_runs, "follow_run", interrupted)
    assert run(service, "monitors", "run", MONITOR, "--wait") == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"evalsvc: interrupted; monitor run {RUN_ID} goes on in the service "
        "(evalsvc monitors history mon_1)"
    )


def test_monitors_history_draws_a_row_a_run_newest_first(
    service: Scripted, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    failed = monitor_run(
        "failed",
        run_id="mon_1.1795800000000",
        scheduled_for="2026-11-27T17:20:00.000Z",
        manual=False,
        failure="the evaluation failed: the judge was unreachable",
        metrics=[],
        cost_usd=None,
        webhook={"status": "delivered", "attempts": 2, "http_status": 200},
    )
    service.on("GET", HISTORY_PATH, history_page(monitor_run(), failed, cursor="1795800000000"))

    monkeypatch.setenv("COLUMNS", "200")  # a line a metric, none wrapped
    assert run(service, "monitors", "history", MONITOR, "--limit", "2") == 0

    assert service.seen[0].path == f"{HISTORY_PATH}?limit=2"
    out, err = capsys.readouterr()
    lines = out.splitlines()
    first = next(n for n, line in enumerate(lines) if "2026-11-28 05:26:09" in line)
    second = next(n for n, line in enumerate(lines) if "2026-11-27 17:20:00" in line)
    assert first < second  # newest first
    assert "complete (by hand)" in lines[first] and "$0.001200" in lines[first]
    assert "check:max_words:6      4.20 [3.50, 4.90]  not significant" in lines[first]
    assert "Is the answer polite?  4.60 [4.10, 5.00]  improved" in lines[first + 1]
    assert "failed" in lines[second] and "the evaluation failed: the judge was unreachable" in out
    assert "│ delivered 200 " in lines[second] and "│ none " in lines[first]
    assert err == "older runs follow: --limit N (up to 100) or --all shows them\n"


def test_monitors_history_all_reads_every_page_into_one_json_body(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on(
        "GET",
        HISTORY_PATH,
        history_page(monitor_run(), cursor="1795843569038"),
        history_page(older_run()),
    )

    assert run(service, "monitors", "history", MONITOR, "--all", "--json") == 0

    assert [s.path for s in service.seen] == [
        f"{HISTORY_PATH}?limit=100",
        f"{HISTORY_PATH}?limit=100&cursor=1795843569038",
    ]
    assert json.loads(capsys.readouterr().out) == {
        "runs": [monitor_run(), older_run()],
        "next_cursor": None,
    }


def test_monitors_history_all_stops_on_a_cursor_given_twice(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    service.on("GET", HISTORY_PATH, history_page(monitor_run(), cursor="1795843569038"))

    assert run(service, "monitors", "history", MONITOR, "--all") == 1

    assert "gave the same next_cursor twice" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        ["history", MONITOR, "--limit", "0"],
        ["history", MONITOR, "--limit", "101"],
        ["history", MONITOR, "--limit", "5", "--all"],
    ],
)
def test_monitors_history_flags_that_cannot_be_read_are_usage_errors(args: list[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["monitors", *args])
    assert caught.value.code == 2


@pytest.mark.parametrize("command", ["run", "history", "delete"])
def test_monitors_refuse_a_monitor_id_that_is_not_one(
    service: Scripted, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert run(service, "monitors", command, "../evaluation/ev_1") == 2

    assert service.seen == []
    assert capsys.readouterr().err.startswith("evalsvc: '../evaluation/ev_1' is not a monitor id: ")


def test_monitors_delete_says_how_many_runs_it_removed(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    deleted = {"monitor_id": MONITOR, "deleted": True, "runs_removed": 3}
    service.on("DELETE", "/v1/monitors/mon_1", as_json(200, deleted))

    assert run(service, "monitors", "delete", MONITOR) == 0
    assert capsys.readouterr().out == "deleted monitor mon_1 and 3 run records\n"
    assert run(service, "monitors", "delete", MONITOR, "--json") == 0
    assert json.loads(capsys.readouterr().out) == deleted


def hostile_monitor_run(text: str) -> dict[str, Any]:
    body = monitor_run(
        run_id=text,
        scheduled_for=text,
        result_id=text,
        baseline_id=text,
        pairs_matched=text,
        failure=text,
        webhook={"status": text, "attempts": text, "http_status": text},
    )
    body["status"] = text
    body["metrics"][0].update(metric=text, verdict=text)
    return body


def hostile_monitors(text: str) -> dict[str, Any]:
    return {
        "monitors": [
            monitor(
                monitor_id=text,
                name=text,
                seed_data_id=text,
                metrics_id=text,
                schedule=text,
                baseline=text,
                webhook_url=text,
                next_run_at=text,
                pair_query={"latest_n_pairs": text, "pair_labels": [text], "last_n_seconds": text},
            )
        ]
    }


@settings(max_examples=150, deadline=None)
@given(text=HOSTILE)
def test_monitor_tables_show_the_services_text_and_obey_none_of_it(text: str) -> None:
    for render, body in (
        (render_monitors, hostile_monitors(text)),
        (render_monitor_run, hostile_monitor_run(text)),
        (render_history, {"runs": [hostile_monitor_run(text)], "next_cursor": None}),
    ):
        plain = io.StringIO()
        render(body, Console(file=plain, width=200))  # type: ignore[operator]
        assert obeyed(plain.getvalue()) == []
        drawn = io.StringIO()
        render(body, Console(file=drawn, width=200, force_terminal=True))  # type: ignore[operator]
        assert obeyed(SGR.sub("", drawn.getvalue())) == []


def test_markup_in_a_monitors_text_is_shown_as_it_is() -> None:
    text = "[link=https://evil.example]click[/link]"
    for render, body in (
        (render_monitors, hostile_monitors(text)),
        (render_monitor_run, hostile_monitor_run(text)),
        (render_history, {"runs": [hostile_monitor_run(text)], "next_cursor": None}),
    ):
        out = io.StringIO()
        render(body, Console(file=out, width=400, force_terminal=True))  # type: ignore[operator]
        assert text in SGR.sub("", out.getvalue())
        assert "\x1b]8" not in out.getvalue()


def test_a_monitor_runs_failure_and_json_obey_nothing(
    service: Scripted, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a run that failed, its failure and metric holding what a terminal obeys
    text = "x\x1b]0;owned\x07\x9b2J\u202eevil"
    failed = monitor_run("failed", failure=f"the judge said {text}")
    failed["metrics"][0]["metric"] = text
    service.on("POST", RUN_PATH, as_json(202, STARTED))
    service.on("GET", HISTORY_PATH, history_page(failed))

    # When it is followed, shown and printed as JSON
    assert run(service, "monitors", "run", MONITOR, "--wait") == 1
    drawn, err = capsys.readouterr()
    assert run(service, "monitors", "run", MONITOR, "--wait", "--json") == 1
    printed = capsys.readouterr().out

    # Then each is shown, never obeyed
    assert obeyed(drawn) == obeyed(err) == obeyed(printed) == []
    assert err.splitlines()[-1] == (
        f"evalsvc: monitor run {RUN_ID} failed: the judge said x\ufffd]0;owned\ufffd\ufffd2J"
        "\ufffdevil"
    )
    assert json.loads(printed) == failed


def test_an_evaluation_prints_the_pairs_each_metric_did_not_apply_to() -> None:
    out = io.StringIO()
    body = result(
        score_not_applicable=[0, 4],
        score_means=[4.2, None],
        score_confidence_intervals=[
            {"ci_low": 3.5, "ci_high": 4.9, "ci_confidence": 0.95},
            None,
        ],
    )
    render_evaluation(body, Console(file=out, width=240, color_system=None))
    cells = [
        [cell.strip() for cell in line.strip("│").split("│")]
        for line in out.getvalue().splitlines()
        if line.startswith("│")
    ]
    assert "not applicable" in out.getvalue()
    # n is the pairs each metric scored, beside the pairs it left out; no mean where none
    assert [(row[0], row[2], row[5], row[6]) for row in cells] == [
        ("0", "4.20", "10", "0"),
        ("1", "-", "6", "4"),
    ]
