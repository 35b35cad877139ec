"""POST /compare on two large results: DynamoDB calls against the minimum, time and memory.

    .venv/bin/python bench/compare.py [--pairs 100000] [--shared 0.95] [--reason-chars 160]

Two evaluation results of `--pairs` scored pairs each on three metrics (a judge question with
reasons of about `--reason-chars` characters, two checks), sharing a fraction `--shared` of
their pair ids, are written into the embedded store of `evalsvc serve` (moto with its
speed-ups, over HTTP, in its own process). The compare runs in a third process, as in a Lambda,
so its peak memory is the comparison's alone, and prints:

- its DynamoDB calls by operation, and the minimum: two header reads, as many `Query` pages as
  reading the two results' scored pairs whole takes (DynamoDB sizes a page before projecting
  it, so a projection cannot take fewer), and one `BatchGetItem` per 100 listed pair ids per
  result for their reasons;
- the seconds (moto's, over HTTP on this machine: not DynamoDB's);
- the peak of Python allocations during the compare (tracemalloc) and the growth of the
  process's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any

from harness import CallCounter, shown
from local_store import Server

DEFINITIONS = [
    "Does the answer address the user's question directly?",
    "check:max_words:120",
    "check:readability",
]


def _environment(endpoint: str) -> None:
    import boto3
    from evalsvc_tools.local.server import apply_environment
    from evalsvc_tools.local.store import TABLE_PREFIX
    from evalsvc_tools.local.tables import create_tables

    client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint)
    env = create_tables(client, TABLE_PREFIX)  # the server's own tables: it keeps their order
    apply_environment({**env, "EVALSVC_DYNAMODB_ENDPOINT_URL": endpoint})


def seed(endpoint: str, pairs: int, shared: float, reason_chars: int) -> dict[str, Any]:
    """Two results; the candidate keeps `shared` of the baseline's pair ids and scores a little
    higher on the judge question."""
    from evalsvc.models.evaluations import ScoredPair
    from evalsvc.storage import dynamo
    from evalsvc.storage import results as results_store

    from tests.stored_results import store_result

    _environment(endpoint)
    rng = random.Random(13)
    filler = "The answer names the setting and the steps, but omits what happens after. "
    reason = (filler * (reason_chars // len(filler) + 1))[:reason_chars]

    def scored(ids: list[str], lift: float) -> list[ScoredPair]:
        out = []
        for index, pid in enumerate(ids):
            judge = float(min(5, max(1, round(rng.gauss(3.4 + lift, 1.1)))))
            words = 5.0 if rng.random() < 0.9 else 1.0
            readability = round(min(5.0, max(1.0, rng.gauss(3.2, 0.6))), 2)
            out.append(
                ScoredPair(
                    pair_id=pid,
                    index=index,
                    scores=[judge, words, readability],
                    reasons=[reason, "120 words or fewer", "reading ease 61.2 (grade 8.4)"],
                )
            )
        return out

    baseline_ids = [f"pair-{i:06d}" for i in range(pairs)]
    kept = int(pairs * shared)
    candidate_ids = baseline_ids[:kept] + [f"pair-new-{i:06d}" for i in range(pairs - kept)]
    figures: dict[str, Any] = {}
    for results_id, ids, lift in (
        ("ev_baseline", baseline_ids, 0.0),
        ("ev_candidate", candidate_ids, 0.05),
    ):
        started = time.perf_counter()
        store_result("bench", results_id, DEFINITIONS, scored(ids, lift))
        pk = results_store.result_pk("bench", results_id)
        # The fewest pages a read of the result's scored pairs can take: reading them whole.
        pages = list(
            dynamo.query_pages(
                TableName=os.environ["EVALSVC_RESULTS_TABLE"],
                KeyConditionExpression="pk = :pk AND begins_with(sk, :p)",
                ExpressionAttributeValues={":pk": {"S": pk}, ":p": {"S": "p#"}},
            )
        )
        figures[results_id] = {
            "items": sum(len(page) for page in pages),
            "bytes": sum(dynamo.item_size(item) for page in pages for item in page),
            "pages": len(pages),
            "seconds": round(time.perf_counter() - started, 1),
        }
    return figures


def measure(endpoint: str, limit: int) -> dict[str, Any]:
    from evalsvc.core.deadlines import Deadline
    from evalsvc.logic import comparisons
    from evalsvc.models.api_keys import Identity
    from evalsvc.models.comparisons import CompareIn

    _environment(endpoint)
    identity = Identity(tenant="bench", user="b", user_email="b@bench", key_id="k")
    body = CompareIn(baseline_id="ev_baseline", candidate_id="ev_candidate", limit=limit)
    comparisons.compare(identity, body, Deadline.never())  # warm: imports, connections
    counter = CallCounter()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    started = time.perf_counter()
    comparison = comparisons.compare(identity, body, Deadline.never())
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    calls = counter.take()
    # Again without tracemalloc, for the time alone.
    started = time.perf_counter()
    comparisons.compare(identity, body, Deadline.never())
    untraced = time.perf_counter() - started
    listed = {c.pair_id for c in comparison.regressions + comparison.improvements}
    return {
        "calls": dict(calls),
        "seconds_traced": round(seconds, 2),
        "seconds": round(untraced, 2),
        "peak_python_mb": round(peak / 1e6, 1),
        "rss_growth_mb": round((rss_after - rss_before) / 1024, 1),
        "pairs_matched": comparison.pairs_matched,
        "only_in_baseline": comparison.only_in_baseline,
        "only_in_candidate": comparison.only_in_candidate,
        "listed_ids": len(listed),
        "verdicts": [m.verdict for m in comparison.metrics],
        "mean_diffs": [m.stats.mean_diff for m in comparison.metrics],
    }


def _child(*args: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{args[-2]} failed:\n{out.stderr}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--shared", type=float, default=0.95)
    parser.add_argument("--reason-chars", type=int, default=160)
    parser.add_argument("--limit", type=int, default=20)
    parser.add_argument("role", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role[:1] == ["seed"]:
        print(json.dumps(seed(args.role[1], args.pairs, args.shared, args.reason_chars)))
        return
    if args.role[:1] == ["measure"]:
        print(json.dumps(measure(args.role[1], args.limit)))
        return

    server = Server(Path(tempfile.mkdtemp(prefix="compare-bench-")) / "data")
    server.start()
    endpoint = f"http://127.0.0.1:{server.dynamodb_port}"
    try:
        common = ["--pairs", str(args.pairs), "--shared", str(args.shared)]
        seeded = _child(*common, "--reason-chars", str(args.reason_chars), "seed", endpoint)
        print(f"seeded: {json.dumps(seeded)}")
        found = _child(*common, "--limit", str(args.limit), "measure", endpoint)
    finally:
        server.kill()
        shutil.rmtree(server.data_dir.parent, ignore_errors=True)
    pages = {rid: figures["pages"] for rid, figures in seeded.items()}
    batch_gets = 2 * math.ceil(found["listed_ids"] / 100)
    print(
        f"pairs per result: {args.pairs:,}; shared: {found['pairs_matched']:,}; only in "
        f"baseline {found['only_in_baseline']:,}, only in candidate {found['only_in_candidate']:,}"
    )
    sizes = ", ".join(f"{r} {f['bytes'] / 1e6:.1f} MB" for r, f in seeded.items())
    print(f"scored pairs: {sizes}")
    print(f"calls: {shown(Counter(found['calls']))}")
    per_result = " + ".join(map(str, pages.values()))
    print(
        f"minimum: GetItem 2, Query {sum(pages.values())} ({per_result}), "
        f"BatchGetItem {batch_gets} ({found['listed_ids']} listed pair ids)"
    )
    print(f"seconds: {found['seconds']} (with tracemalloc {found['seconds_traced']})")
    print(
        f"peak Python allocations: {found['peak_python_mb']} MB; peak RSS growth: "
        f"{found['rss_growth_mb']} MB"
    )
    print(f"verdicts: {found['verdicts']}; mean_diff: {found['mean_diffs']}")


if __name__ == "__main__":
    main()
