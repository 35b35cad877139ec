"""The embedded store of `make run` as it grows: what a new user meets.

    .venv/bin/python bench/local_store.py workload [--pairs 20000]
        write N pairs as one seed dataset, read it back, queue a 2-check evaluation
        (Prefer: respond-async) and wait for it: the time of each step.
    .venv/bin/python bench/local_store.py growth [--levels 0,100000,500000] [--budget 1800]
        a 100-pair write (5 times, new datasets) at each number of stored pairs, then the time
        to stop the server (SIGTERM) and to start it again on the same data.
    .venv/bin/python bench/local_store.py kill
        three 5,000-pair datasets and a 1-pair one, each answered 200, then SIGKILL of the
        process group; after a restart, which of them are still there.

Each run starts `evalsvc serve` (as `make run` does) on free ports with a fresh data directory.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests
from local_server import ROOT, free_port

KEY = "evk_local_store_bench_key_000000000000000000"
HEADERS = {"Authorization": KEY}
METRICS = ["check:max_words:3", "check:contains:please"]
BATCH = 20_000


class Server:
    """`evalsvc serve` in its own process group, on a data directory that outlives it."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.dynamodb_port = free_port()
        self.base = f"http://127.0.0.1:{self.port}/v1"
        self.process: subprocess.Popen[bytes] | None = None
        self.log = data_dir.parent / f"{data_dir.name}.log"

    def start(self) -> float:
        """Start and wait until it answers; the seconds that took."""
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "DYNAMODB_"))},
            "PORT": str(self.port),
            "EVALSVC_DYNAMODB_PORT": str(self.dynamodb_port),
            "EVALSVC_DATA_DIR": str(self.data_dir),
            "EVALSVC_DEV_API_KEY": KEY,
            "POWERTOOLS_LOG_LEVEL": "ERROR",
        }
        started = time.perf_counter()
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "evalsvc_tools.cli", "serve"],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        while True:
            if self.process.poll() is not None:
                raise SystemExit(f"the server exited: see {self.log}")
            try:
                requests.get(f"{self.base}/openapi.json", timeout=1)
                return time.perf_counter() - started
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.05)

    def stop(self) -> float:
        """SIGTERM (what Ctrl-C does), and the seconds until the process is gone."""
        assert self.process is not None
        started = time.perf_counter()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=1800)
        return time.perf_counter() - started

    def kill(self) -> None:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)


def pairs(n: int, prefix: str) -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}{i:06d}", "input": f"q {i}", "output": "please " * (i % 5 + 1)}
        for i in range(n)
    ]


def write(base: str, dataset_id: str, n: int) -> float:
    started = time.perf_counter()
    response = requests.post(
        f"{base}/data/seed/{dataset_id}",
        json={"data": pairs(n, dataset_id)},
        headers=HEADERS,
        timeout=1800,
    )
    response.raise_for_status()
    return time.perf_counter() - started


def workload(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "data")
        server.start()
        try:
            base = server.base
            steps: dict[str, float] = {"write": write(base, "work", args.pairs)}
            started = time.perf_counter()
            body = requests.get(f"{base}/data/seed/work", headers=HEADERS, timeout=1800)
            body.raise_for_status()
            assert len(body.json()["data"]) == args.pairs
            steps["read"] = time.perf_counter() - started
            requests.post(
                f"{base}/specify_questions", json={"metrics": METRICS}, headers=HEADERS, timeout=60
            ).raise_for_status()
            started = time.perf_counter()
            queued = requests.post(
                f"{base}/evaluate",
                json={"seed_data_id": "work"},
                headers={**HEADERS, "Prefer": "respond-async"},
                timeout=1800,
            )
            queued.raise_for_status()
            steps["submit"] = time.perf_counter() - started
            started = time.perf_counter()
            results_id = queued.json()["eval_results_id"]
            while True:
                result = requests.get(
                    f"{base}/evaluation/{results_id}", headers=HEADERS, timeout=1800
                ).json()
                if result["status"] != "running":
                    break
                time.sleep(0.25)
            steps["evaluation"] = time.perf_counter() - started
            assert result["status"] == "complete", result
        finally:
            server.stop()
    for step, seconds in steps.items():
        print(f"{step:<11} {seconds:7.1f} s")
    print(f"{'total':<11} {sum(steps.values()):7.1f} s  ({args.pairs} pairs)")


def growth(args: argparse.Namespace) -> None:
    levels = sorted(int(level) for level in args.levels.split(","))
    deadline = time.perf_counter() + args.budget
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "data")
        server.start()
        stored = 0
        batches = 0
        try:
            for level in levels:
                while stored < level and time.perf_counter() < deadline:
                    n = min(BATCH, level - stored)
                    seconds = write(server.base, f"stored{batches:03d}", n)
                    batches += 1
                    stored += n
                    print(f"  stored {stored:>7} pairs ({n} in {seconds:.1f} s)", flush=True)
                if stored < level:
                    print(f"{level:>7} stored: not reached within --budget {args.budget} s")
                    break
                times = [write(server.base, f"w{level}x{k}", 100) for k in range(5)]
                print(
                    f"{level:>7} stored: 100-pair write median {statistics.median(times):.3f} s, "
                    f"max {max(times):.3f} s",
                    flush=True,
                )
        finally:
            stop = server.stop()
        print(f"stop with {stored} pairs stored: {stop:.1f} s")
        restarted = Server(server.data_dir)
        start = restarted.start()
        try:
            check = requests.get(
                f"{restarted.base}/data/seed/w{levels[0]}x0", headers=HEADERS, timeout=600
            )
            print(
                f"start with {stored} pairs stored: {start:.1f} s (read back: {check.status_code})"
            )
        finally:
            restarted.stop()
        lines = [line for line in restarted.log.read_text().splitlines() if "load" in line]
        for line in lines[-3:]:
            print(f"  log: {line}")


def kill(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "data")
        server.start()
        written = []
        for k in range(3):
            write(server.base, f"big{k}", 5_000)
            written.append(f"big{k}")
        write(server.base, "small", 1)
        written.append("small")
        server.kill()
        restarted = Server(server.data_dir)
        restarted.start()
        try:
            for dataset_id in written:
                status = requests.get(
                    f"{restarted.base}/data/seed/{dataset_id}", headers=HEADERS, timeout=600
                ).status_code
                print(f"{dataset_id:<6} after SIGKILL and restart: {status}")
        finally:
            restarted.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    work = commands.add_parser("workload")
    work.add_argument("--pairs", type=int, default=20_000)
    grow = commands.add_parser("growth")
    grow.add_argument("--levels", default="0,100000,500000")
    grow.add_argument("--budget", type=float, default=1800.0)
    commands.add_parser("kill")
    args = parser.parse_args()
    {"workload": workload, "growth": growth, "kill": kill}[args.command](args)


if __name__ == "__main__":
    main()
