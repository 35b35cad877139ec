"""A large evaluation on the local server, through the work queue, the way `make run` serves it:
starts `evalsvc serve` (embedded DynamoDB and SQS, worker threads) on free ports with a fresh
data directory, uploads N pairs, asks for an evaluation with `Prefer: respond-async`, and
prints GET /evaluation/{id}'s progress until it completes.

    .venv/bin/python bench/local_run.py [--pairs 20000] [--workers 2]
"""

from __future__ import annotations

import argparse
import time

import requests
from local_server import serving

KEY = "evk_local_run_bench_key_00000000000000000000"
METRICS = ["check:max_words:3", "check:contains:please"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=20_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    headers = {"Authorization": KEY}
    with serving(KEY, {"EVALSVC_LOCAL_WORKERS": str(args.workers)}) as base:
        data = [
            {"id": f"p{i:05d}", "input": f"q {i}", "output": "please " * (i % 5 + 1)}
            for i in range(args.pairs)
        ]
        started = time.perf_counter()
        upload = requests.post(
            f"{base}/data/seed/local-run", json={"data": data}, headers=headers, timeout=600
        )
        upload.raise_for_status()
        print(f"uploaded {args.pairs} pairs in {time.perf_counter() - started:.1f} s")
        requests.post(
            f"{base}/specify_questions", json={"metrics": METRICS}, headers=headers, timeout=60
        ).raise_for_status()
        started = time.perf_counter()
        queued = requests.post(
            f"{base}/evaluate",
            json={"seed_data_id": "local-run"},
            headers={**headers, "Prefer": "respond-async"},
            timeout=600,
        )
        print(f"POST /evaluate -> {queued.status_code} {queued.json()}")
        results_id = queued.json()["eval_results_id"]
        while True:
            body = requests.get(
                f"{base}/evaluation/{results_id}", headers=headers, timeout=600
            ).json()
            elapsed = time.perf_counter() - started
            print(
                f"{elapsed:7.1f} s  {body['status']:<8} {body['pairs_done']:>6} of "
                f"{body['pairs_total']} pairs"
            )
            if body["status"] != "running":
                break
            time.sleep(2)
        print(f"score_means {body['score_means']}, failure {body.get('failure')}")


if __name__ == "__main__":
    main()
