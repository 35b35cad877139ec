"""Judge-human agreement on a metrics set with 10,000 votes over 20 evaluations: the time and
the DynamoDB calls of GET /question/{id}/agreement (pooled) and GET /evaluation/{id}/agreement
(one result), against the minimum. Runs against moto in-process.

    .venv/bin/python bench/agreement.py [--votes 10000] [--results 20] [--store] [--repeat 1]

By default moto in this process as the tests use it (no speed-ups); with --store, the embedded
store of `make run` (moto with its speed-ups, the journal in a temporary directory), called
in-process as the server calls it, with the server's settings (one shard, one write thread).

The minimum for the pooled figures: the metrics set (one GetItem) and the pages of one Query of
the votes' index (DynamoDB sizes index pages by the projected items: keys, score, vote,
source). For one result: its header (GetItem) and the pages of one Query of its votes.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import random
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, fresh_tables, shown

# isort: split

from evalsvc.core.settings import get_settings
from evalsvc.logic import judge_agreement, metric_set_create, question_agreement
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import Critique, ScoredPair
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import dynamo
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.server import apply_environment
from evalsvc_tools.local.store import EmbeddedDynamoDB

from tests.stored_results import store_result

DEFINITIONS = [
    "Does the answer address the question directly?",
    "Is the answer polite?",
    "check:max_words:80",
    "check:readability",
    "Is every claim in the answer supported by the input?",
]
USERS = 5


@contextlib.contextmanager
def embedded_store() -> Iterator[None]:
    """The store `evalsvc serve` runs, as its own process calls it."""
    with tempfile.TemporaryDirectory() as tmp, EmbeddedDynamoDB(Path(tmp), port=0) as store:
        store.attach_in_process()
        local = {"EVALSVC_DATASET_SHARDS": "1", "EVALSVC_WRITE_THREADS": "1"}
        apply_environment({**store.env, **local})
        yield


@contextlib.contextmanager
def moto_tables() -> Iterator[None]:
    with moto_in_process():
        fresh_tables()
        yield


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--votes", type=int, default=10_000)
    parser.add_argument("--results", type=int, default=20)
    parser.add_argument("--store", action="store_true", help="the embedded store of make run")
    parser.add_argument("--repeat", type=int, default=1, help="ask for the pooled figures N times")
    args = parser.parse_args()
    per_result = args.votes // args.results
    rng = random.Random(5)
    identity = Identity(tenant="bench", user="u0", user_email="u0@bench", key_id="b")
    with embedded_store() if args.store else moto_tables():
        metrics_set = metric_set_create.create_metrics_set(identity, DEFINITIONS)
        started = time.perf_counter()
        results = []
        for r in range(args.results):
            results_id = f"ev_bench_{r:02d}"
            pairs = per_result // USERS + 1
            scored = [
                ScoredPair(
                    pair_id=f"p{i:05d}",
                    index=i,
                    scores=[
                        float(rng.randint(1, 5))
                        if not d.startswith("check:readability")
                        else round(rng.uniform(1, 5), 2)
                        for d in DEFINITIONS
                    ],
                    reasons=["a reason of some length for this score"] * len(DEFINITIONS),
                )
                for i in range(pairs)
            ]
            store_result(
                "bench", results_id, DEFINITIONS, scored, metrics_id=metrics_set.metrics_id
            )
            votes = []
            for k in range(per_result):
                pair = scored[k // USERS]
                metric = k % len(DEFINITIONS)
                score = pair.scores[metric]
                vote = 1 if rng.random() < (score - 1) / 4 else rng.choice([-1, -1, 0])
                votes.append(
                    Critique(
                        id=f"cr_{r}_{k}",
                        pair_id=pair.pair_id,
                        metric_idx=metric,
                        comment="",
                        vote=vote,
                        user=f"u{k % USERS}",
                        user_email="",
                        time_ms=0,
                        source="audit" if k % 3 == 0 else "review",
                        score=score,
                    )
                )
            # Cast from 8 threads, as many people voting at once (the store's journal then
            # shares its fsyncs among them); the votes do not depend on their order.
            with ThreadPoolExecutor(8) as pool:
                list(
                    pool.map(
                        lambda critique, r=results_id: critiques_store.upsert(
                            "bench", r, metrics_set.metrics_id, critique
                        ),
                        votes,
                    )
                )
            results.append(results_id)
        print(
            f"seeded {args.results} results, {per_result * args.results:,} votes in "
            f"{time.perf_counter() - started:.1f} s"
        )
        index_bytes = sum(
            dynamo.item_size(
                {
                    k: v
                    for k, v in item.items()
                    if k in ("pk", "sk", "mpk", "msk", "score", "vote", "source")
                }
            )
            for item in dynamo.scan_all(get_settings().critiques_table)
        )
        counter = CallCounter()
        print("| request | votes | seconds | calls | minimum |")
        print("|---|---|---|---|---|")
        for source in ["all", "audit"] * args.repeat:
            counter.take()
            started = time.perf_counter()
            report = question_agreement.for_metrics_set(identity, metrics_set.metrics_id, source)
            seconds = time.perf_counter() - started
            votes = sum(m.figures.votes for m in report.metrics)
            print(
                f"| GET /question/{{id}}/agreement?source={source} | {votes:,} | {seconds:.2f} | "
                f"{shown(counter.take())} | GetItem 1, Query {math.ceil(index_bytes / 1_048_576)} |"
            )
        counter.take()
        started = time.perf_counter()
        report = judge_agreement.for_result(identity, results[0], None)
        seconds = time.perf_counter() - started
        votes = sum(m.figures.votes for m in report.metrics)
        print(
            f"| GET /evaluation/{{id}}/agreement | {votes:,} | {seconds:.2f} | "
            f"{shown(counter.take())} | GetItem 1, Query 1 |"
        )
        votes_read = list(critiques_store.votes_of_metrics_set("bench", metrics_set.metrics_id))
        started = time.perf_counter()
        judge_agreement.per_metric(DEFINITIONS, votes_read, "all")
        print(
            f"(the statistics of the {len(votes_read):,} votes alone: "
            f"{(time.perf_counter() - started) * 1000:.1f} ms; the rest is moto's Query; "
            f"the index holds {index_bytes / 1e6:.2f} MB of projected votes)"
        )


if __name__ == "__main__":
    main()
