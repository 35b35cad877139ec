"""The local server (`evalsvc serve`) in a subprocess, talked to over HTTP on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from tests.conftest import ROOT
from tests.fake_judge import FakeJudge

DEV_KEY = "evk_e2e_dev_key_0000000000000000000000000000"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalServer:
    data_dir: Path
    judge_url: str | None = None
    port: int = field(default_factory=free_port)
    dynamodb_port: int = field(default_factory=free_port)
    process: subprocess.Popen[str] | None = None
    output: list[str] = field(default_factory=list)
    extra_env: dict[str, str] = field(default_factory=dict)
    # Where its output goes, when it is to be read as it runs (a long or verbose run, whose
    # output would fill the pipe); otherwise a pipe, read when it stops.
    log_path: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("AWS_", "DYNAMODB_", "DATASETS_", "API_KEYS_"))
        }
        env.update(
            {
                "PORT": str(self.port),
                "EVALSVC_DYNAMODB_PORT": str(self.dynamodb_port),
                "EVALSVC_DATA_DIR": str(self.data_dir),
                "EVALSVC_DEV_API_KEY": DEV_KEY,
                "EVALSVC_AUTH_CACHE_SECONDS": "0",
                "POWERTOOLS_LOG_LEVEL": "WARNING",
            }
        )
        if self.judge_url:
            env.update(
                {"EVALSVC_LLM": "openai:fake-judge", "EVALSVC_OPENAI_BASE_URL": self.judge_url}
            )
        env.update(self.extra_env)
        return env

    def start(self) -> None:
        log = self.log_path.open("a") if self.log_path else None
        self.process = subprocess.Popen(
            [sys.executable, "-m", "evalsvc_tools.cli", "serve"],
            cwd=ROOT,
            env=self.env(),
            stdout=log or subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            # Its own process group, as `make run` in a terminal: kill_group() stops it and any
            # child it started (a compaction) at once.
            start_new_session=True,
        )
        if log:
            log.close()  # the server holds its own descriptor
        try:
            self._wait_until_serving()
        except BaseException:
            # A server that never answered is not left running behind the failed test.
            if self.process.poll() is None:
                self.kill_group()
            raise

    def _wait_until_serving(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                out = self.process.stdout.read() if self.process.stdout else ""
                raise RuntimeError(
                    f"server exited: {out or (self.log_path.read_text() if self.log_path else '')}"
                )
            try:
                if requests.get(f"{self.base_url}/openapi.json", timeout=5).status_code == 200:
                    return
            except (requests.ConnectionError, requests.Timeout):
                # Not listening yet, or listening but slow to answer on a loaded machine (its
                # first request imports the routes): ask again until the minute is up.
                time.sleep(0.2)
        raise RuntimeError("server did not start within 60 s")

    def stop(self, sig: int = signal.SIGTERM) -> str:
        assert self.process is not None
        self.process.send_signal(sig)
        out, _ = self.process.communicate(timeout=30)
        out = out if out is not None else self.log_path.read_text() if self.log_path else ""
        self.output.append(out)
        return out

    def kill_group(self) -> str:
        """SIGKILL to the whole process group: a crash, or a power cut for what is in memory."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        out, _ = self.process.communicate(timeout=30)
        out = out if out is not None else self.log_path.read_text() if self.log_path else ""
        self.output.append(out)
        return out

    def cli(self, *args: str, local: bool = True) -> subprocess.CompletedProcess[str]:
        """`evalsvc ARGS` (with --local unless told not to) in this server's environment."""
        return subprocess.run(
            [sys.executable, "-m", "evalsvc_tools.cli", *args, *(["--local"] if local else [])],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )


@pytest.fixture(scope="session")
def judge() -> Iterator[FakeJudge]:
    """An OpenAI-compatible fake judge on 127.0.0.1 that the session's server is pointed at."""
    fake = FakeJudge()
    with fake.running():
        yield fake


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, judge: FakeJudge) -> Iterator[LocalServer]:
    local = LocalServer(tmp_path_factory.mktemp("evalsvc-data"), judge_url=judge.base_url)
    local.start()
    yield local
    local.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[LocalServer]:
    local = LocalServer(tmp_path / "data")
    yield local
    if local.process is not None and local.process.poll() is None:
        local.stop(signal.SIGKILL)
