"""The finish of a queued evaluation with cluster_by (E6): what clustering adds to each chunk's
totals, and what the finish takes to add them up, in time and memory, as the pairs grow.

Each chunk's worker leaves its totals (logic.scored_pairs.totals: score counts, lowest pairs,
and with cluster_by the size and score sums of each cluster it met); they are stored as JSON
(storage.jobs) and the finish reads them back one at a time (storage.jobs.tallies is a
generator) into logic.scored_pairs.summarize_totals. This benchmark runs exactly that code on
synthetic scored pairs: the workers' totals, their JSON as stored, and the finish over the
parsed JSON, read one chunk at a time as the engine reads them, timed, then run again under
tracemalloc for its peak. For contrast, the peak when every chunk's totals are held at once
(as the engine held them before it streamed tallies).

    .venv/bin/python bench/clustered_finish.py [--labels 10000] [--metrics 2] [--chunk 5000]
        [--pairs 12500 --pairs 25000 --pairs 50000 --pairs 100000] [--repeat 5]

Chunks of 5,000 pairs are what two check metrics take (EVALSVC_CHUNK_CHECKS 10,000); a judged
metric's chunks are 500 pairs (EVALSVC_CHUNK_JUDGE_CALLS 500): --chunk 500.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import time
import tracemalloc
from collections.abc import Iterator
from typing import Any

# The harness sets the offline environment before any service module reads it.
import harness  # noqa: F401

# isort: split

from evalsvc.logic.scored_pairs import summarize_totals, totals
from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import EvaluationResult, ScoredPair
from evalsvc.statistics.error_bars import cluster_digest


def result(metrics: int, cluster_by: str | None) -> EvaluationResult:
    return EvaluationResult(
        tenant="bench",
        results_id="ev_bench",
        created_ms=0,
        dataset_id="ds",
        dataset_kind=DatasetKind.SEED,
        metrics_id="m",
        definitions=[f"check:max_words:{k + 3}" for k in range(metrics)],
        system_prompt="",
        pair_count=0,
        summaries=[],
        cluster_by=cluster_by,
    )


def chunk_pairs(
    rng: random.Random, start: int, count: int, labels: int, names: list[str], metrics: int
) -> list[ScoredPair]:
    """`count` scored pairs from position `start`, each in one of `labels` topics (drawn at
    random: a topic's pairs spread over every chunk), scores 1-5 that lean with the topic."""
    out = []
    for i in range(start, start + count):
        topic = rng.randrange(labels)
        lean = topic % 5
        scores = [float(min(5, max(1, lean + rng.randint(0, 2)))) for _ in range(metrics)]
        out.append(
            ScoredPair(
                pair_id=f"p{i:07d}",
                index=i,
                scores=scores,
                reasons=["r"] * metrics,
                label_cluster=names[topic],
                input_cluster=names[topic],
            )
        )
    return out


def _json(value: object) -> str:  # as storage.jobs keeps a chunk's totals
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def run(
    pairs: int, labels: int, metrics: int, chunk: int, cluster_by: str | None, repeat: int
) -> None:
    rng = random.Random(pairs * 31 + labels)
    names = [cluster_digest(f"topic {k}") for k in range(labels)]
    stored: list[str] = []
    worker_seconds = 0.0
    for start in range(0, pairs, chunk):
        scored = chunk_pairs(rng, start, min(chunk, pairs - start), labels, names, metrics)
        began = time.perf_counter()
        stored.append(_json(totals(scored, metrics, cluster_by)))
        worker_seconds += time.perf_counter() - began
    sizes = [len(text.encode()) for text in stored]

    def streamed() -> Iterator[dict[str, Any]]:
        for text in stored:
            yield json.loads(text)

    # Timed without tracemalloc (which slows every allocation): the median of `repeat` runs;
    # then once more under it.
    times = []
    for _ in range(repeat):
        gc.collect()
        began = time.perf_counter()
        finished = result(metrics, cluster_by)
        summarize_totals(finished, streamed())
        times.append(time.perf_counter() - began)
    finish_seconds = statistics.median(times)
    gc.collect()
    tracemalloc.start()
    summarize_totals(result(metrics, cluster_by), streamed())
    _, stream_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    gc.collect()
    tracemalloc.start()
    held = [json.loads(text) for text in stored]
    summarize_totals(result(metrics, cluster_by), held)
    _, held_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del held

    clusters = finished.clustered[0].clusters if finished.clustered else "-"
    print(
        f"| {pairs:,} | {labels:,} | {cluster_by or 'none'} | {len(stored)} x {chunk:,} | "
        f"{clusters if isinstance(clusters, str) else f'{clusters:,}'} | "
        f"{sum(sizes) / len(sizes) / 1024:.1f} KiB (max {max(sizes) / 1024:.1f}) | "
        f"{worker_seconds * 1000 / len(stored):.1f} ms | {finish_seconds:.3f} s | "
        f"{finish_seconds * 1e6 / pairs:.2f} µs | {stream_peak / 2**20:.1f} MiB | "
        f"{held_peak / 2**20:.1f} MiB |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, action="append")
    parser.add_argument("--labels", type=int, default=10_000)
    parser.add_argument("--metrics", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=5, help="finish times: the median of")
    args = parser.parse_args()
    sizes = args.pairs or [12_500, 25_000, 50_000, 100_000]
    print(
        "| pairs | labels | cluster_by | chunks | clusters | a chunk's totals (JSON) | "
        "totals per chunk | finish | finish per pair | finish peak (streamed) | "
        "peak if held at once |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n in sizes:
        run(n, args.labels, args.metrics, args.chunk, None, args.repeat)
        run(n, args.labels, args.metrics, args.chunk, "label", args.repeat)
    # Memory follows the clusters, not the pairs: every pair a topic of its own.
    run(max(sizes), max(sizes), args.metrics, args.chunk, "label", args.repeat)


if __name__ == "__main__":
    main()
