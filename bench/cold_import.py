"""Cold import time of each function's handler module in a fresh interpreter, against the bare
floor: what any FastAPI-on-Lambda function with these tools pays before its own code.

The floor imports boto3 (and makes a DynamoDB client), fastapi, mangum, pydantic, and the
Powertools Logger/Metrics/Tracer (instantiated). A handler import is `app.py` as Lambda runs
it: the layer package, the route, the FastAPI app and the Mangum adapter. The Lambda
environment is imitated (AWS_LAMBDA_FUNCTION_NAME set, tracing on) so Powertools behaves as it
does there. Median and minimum of --runs fresh processes each; the comparison with the floor
uses the minima (noise on a shared machine only ever adds time).

    .venv/bin/python bench/cold_import.py [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FLOOR = """
import time
t = time.perf_counter()
import boto3
boto3.client("dynamodb", region_name="us-east-1")
import fastapi, mangum, pydantic
from aws_lambda_powertools import Logger, Metrics, Tracer
Logger(); Metrics(namespace="x"); Tracer()
print(time.perf_counter() - t)
"""

HANDLER = """
import importlib.util, sys, time
t = time.perf_counter()
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
assert callable(module.handler)
imported = time.perf_counter() - t
from evalsvc.storage import dynamo
dynamo.client()  # made lazily on the first request; counted so the floor compares like with like
print(imported, time.perf_counter() - t)
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


def measure(code: str, *args: str, runs: int) -> list[list[float]]:
    """Per run, the milliseconds the snippet printed (one or more figures)."""
    env = lambda_env()
    subprocess.run([sys.executable, "-c", code, *args], env=env, check=True, capture_output=True)
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", code, *args], env=env, check=True, capture_output=True, text=True
        )
        samples.append([float(x) * 1000 for x in out.stdout.strip().splitlines()[-1].split()])
    return samples


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    options = parser.parse_args()
    runs = options.runs
    results = {"floor": measure(FLOOR, runs=runs)}
    for app in sorted((ROOT / "functions").glob("*/app.py")):
        results[app.parent.name] = measure(HANDLER, str(app), runs=runs)
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
    print(f"python {sys.version.split()[0]}, {runs} fresh processes each, milliseconds\n")
    print("| module | import (median / min) | import + client (median / min) | min vs floor |")
    print("|---|---|---|---|")
    for name, samples in results.items():
        figures = []
        for i in range(len(samples[0])):
            column = [s[i] for s in samples]
            figures.append(f"{statistics.median(column):.0f} / {min(column):.0f}")
        ready = min(s[-1] for s in samples)
        versus = "" if name == "floor" else f"{ready - floor:+.0f} ({ready / floor:.2f}x)"
        imported = figures[0] if name != "floor" else "-"
        print(f"| {name} | {imported} | {figures[-1]} | {versus} |")


if __name__ == "__main__":
    main()
