"""`evalsvc serve`, as `make run` starts it, for the benchmarks that measure the local server:
free ports, a fresh data directory, a known dev key, stopped at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serving(key: str, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """Run the local server with dev key `key` (and `extra_env`); yields its base URL."""
    port = free_port()
    with tempfile.TemporaryDirectory() as data_dir:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "DYNAMODB_"))},
            "PORT": str(port),
            "EVALSVC_DYNAMODB_PORT": str(free_port()),
            "EVALSVC_DATA_DIR": data_dir,
            "EVALSVC_DEV_API_KEY": key,
            "POWERTOOLS_LOG_LEVEL": "ERROR",
            **(extra_env or {}),
        }
        server = subprocess.Popen(
            [sys.executable, "-m", "evalsvc_tools.cli", "serve"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}/v1"
            for _ in range(300):
                try:
                    requests.get(f"{base}/openapi.json", timeout=1)
                    break
                except (requests.ConnectionError, requests.Timeout):
                    time.sleep(0.2)
            yield base
        finally:
            server.terminate()
            server.wait(timeout=120)
