"""Cold import time of each function's handler module in a fresh interpreter, against the bare
floor: what any FastAPI-on-Lambda function with these tools pays before its own code.

The floor imports boto3 (and makes a DynamoDB client), fastapi, mangum, pydantic, and the
Powertools Logger/Metrics/Tracer (instantiated). A handler import is `app.py` as Lambda runs
it: the layer package, the route, the FastAPI app and the Mangum adapter. The Lambda
environment is imitated (AWS_LAMBDA_FUNCTION_NAME set, tracing on) so Powertools behaves as it
does there.

Timed (the default): median and minimum of --runs fresh processes each, in wall time or (--cpu)
in the processes' CPU time, which a busy machine disturbs less. Each handler run follows a floor
run of its own (interleaved), so that a busy spell of this shared machine slows both sides
alike; the table gives the minima against the floor's minimum (noise only ever adds time) and
the median of each run's ratio to the floor run beside it. Counted (--instructions): each runs
once under valgrind's callgrind and its machine instructions are counted: slow (a minute a
process), but the same count on a busy machine as on a quiet one.

    .venv/bin/python bench/cold_import.py [--runs 15] [--cpu | --instructions] [FUNCTION ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FLOOR = """
import time
t = time.CLOCK()
import boto3
boto3.client("dynamodb", region_name="us-east-1")
import fastapi, mangum, pydantic
from aws_lambda_powertools import Logger, Metrics, Tracer
Logger(); Metrics(namespace="x"); Tracer()
print(time.CLOCK() - t)
"""

HANDLER = """
import importlib.util, sys, time
t = time.CLOCK()
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
assert callable(module.handler)
imported = time.CLOCK() - t
from evalsvc.storage import dynamo
dynamo.client()  # made lazily on the first request; counted so the floor compares like with like
print(imported, time.CLOCK() - t)
"""


def lambda_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "AWS_LAMBDA_FUNCTION_NAME": "bench",
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "POWERTOOLS_SERVICE_NAME": "evalsvc",
            "POWERTOOLS_METRICS_NAMESPACE": "EvalService",
            "PYTHONDONTWRITEBYTECODE": "0",
        }
    )
    env.pop("POWERTOOLS_TRACE_DISABLED", None)
    return env


# The clock the snippets read: wall time (perf_counter), or with --cpu the process's CPU time
# (process_time), which other work on a shared machine disturbs far less.
CLOCKS = {"wall": "perf_counter", "cpu": "process_time"}


def _run(code: str, args: tuple[str, ...], env: dict[str, str]) -> list[float]:
    """The milliseconds one fresh interpreter printed (one or more figures)."""
    out = subprocess.run(
        [sys.executable, "-c", code.replace("CLOCK", env["BENCH_CLOCK"]), *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return [float(x) * 1000 for x in out.stdout.strip().splitlines()[-1].split()]


def measure(
    handlers: dict[str, Path], runs: int, clock: str = "wall"
) -> tuple[dict[str, list[list[float]]], dict[str, list[float]]]:
    """Per run, each handler's figures and, just before each, the floor's: a handler and the
    floor it is compared with run side by side, so a busy spell slows both. Returns the samples
    (the floor's pooled under "floor") and, per handler, the ratio of each of its runs to the
    floor run beside it."""
    env = {**lambda_env(), "BENCH_CLOCK": CLOCKS[clock]}
    # One untimed run of each first: .pyc files written, the disk cache warm.
    _run(FLOOR, (), env)
    for app in handlers.values():
        _run(HANDLER, (str(app),), env)
    samples: dict[str, list[list[float]]] = {"floor": []}
    ratios: dict[str, list[float]] = {}
    for _ in range(runs):
        for name, app in handlers.items():
            floor = _run(FLOOR, (), env)
            handler = _run(HANDLER, (str(app),), env)
            samples["floor"].append(floor)
            samples.setdefault(name, []).append(handler)
            ratios.setdefault(name, []).append(handler[-1] / floor[-1])
    return samples, ratios


def instructions(code: str, args: tuple[str, ...], env: dict[str, str]) -> int:
    """The machine instructions one fresh interpreter runs for `code`, counted by valgrind's
    callgrind: the same count every time, whatever else the machine is doing."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (apt-get install valgrind)")
    out = subprocess.run(
        [
            valgrind,
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            code.replace("CLOCK", "perf_counter"),
            *args,
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise SystemExit(f"callgrind gave no count: {out.stderr[-500:]}")
    return int(found.group(1))


def count_instructions(handlers: dict[str, Path]) -> None:
    """Each handler's and the floor's instructions, less those of starting a bare interpreter,
    in millions, and each handler's ratio to the floor's."""
    env = lambda_env()
    # One plain run of each first: .pyc files written (compiling would be counted otherwise).
    _run(FLOOR, (), {**env, "BENCH_CLOCK": CLOCKS["wall"]})
    for app in handlers.values():
        _run(HANDLER, (str(app),), {**env, "BENCH_CLOCK": CLOCKS["wall"]})
    start = instructions("pass", (), env)
    floor = instructions(FLOOR, (), env) - start
    print(
        f"python {sys.version.split()[0]}, instructions counted by callgrind (millions, less the "
        f"{start / 1e6:.0f} M of starting the interpreter)\n"
    )
    print("| module | instructions (M) | vs floor |")
    print("|---|---|---|")
    print(f"| floor | {floor / 1e6:,.0f} |  |")
    for name, app in handlers.items():
        ran = instructions(HANDLER, (str(app),), env) - start
        print(f"| {name} | {ran / 1e6:,.0f} | {(ran - floor) / 1e6:+,.0f} M ({ran / floor:.3f}x) |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument(
        "--cpu", action="store_true", help="CPU time of each process rather than wall time"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under valgrind (once each: the count does not vary)",
    )
    parser.add_argument(
        "functions", nargs="*", help="the functions to measure (default: every one)"
    )
    options = parser.parse_args()

    runs = options.runs
    apps = {app.parent.name: app for app in sorted((ROOT / "functions").glob("*/app.py"))}
    unknown = sorted(set(options.functions) - set(apps))
    if unknown:
        parser.error(f"no such function: {', '.join(unknown)}")
    chosen = {name: apps[name] for name in options.functions} if options.functions else apps
    if options.instructions:
        count_instructions(chosen)
        return
    results, ratios = measure(chosen, runs, "cpu" if options.cpu else "wall")
    # The minimum is the steadiest figure on a shared machine: noise only ever adds time.
    floor = min(s[-1] for s in results["floor"])
    if options.json:
        print(
            json.dumps(
                {
                    k: [statistics.median(s[i] for s in v) for i in range(len(v[0]))]
                    for k, v in results.items()
                }
            )
        )
        return
    clock = "CPU" if options.cpu else "wall"
    print(
        f"python {sys.version.split()[0]}, {runs} fresh processes each, each beside a fresh "
        f"floor; milliseconds of {clock} time\n"
    )
    print(
        "| module | import (median / min) | import + client (median / min) | min vs floor "
        "| paired ratio (median) |"
    )
    print("|---|---|---|---|---|")
    for name, samples in results.items():
        figures = []
        for i in range(len(samples[0])):
            column = [s[i] for s in samples]
            figures.append(f"{statistics.median(column):.0f} / {min(column):.0f}")
        ready = min(s[-1] for s in samples)
        versus = "" if name == "floor" else f"{ready - floor:+.0f} ({ready / floor:.2f}x)"
        paired = "" if name == "floor" else f"{statistics.median(ratios[name]):.2f}x"
        imported = figures[0] if name != "floor" else "-"
        print(f"| {name} | {imported} | {figures[-1]} | {versus} | {paired} |")


if __name__ == "__main__":
    main()
