"""The HTML reports (E4): page sizes and times for large results, and the largest page the field
limits allow.

    .venv/bin/python bench/reports.py [--pairs 10000] [--write DIR] [--embedded]

Two evaluation results of `--pairs` scored pairs each (one judge question with reasons of about
80 characters, two checks) over two seed datasets of support questions and answers (the
candidate's answers four in ten new), with votes and comments, are stored in moto in-process,
or with --embedded in the embedded store of `evalsvc serve` (over HTTP, in its own process, as
`make run` has it). For the evaluation page and the comparison page it prints the DynamoDB calls
of the read, the time to read what the page shows (the store's, not DynamoDB's), the time to
draw the page, and its size, plain and gzipped.

Then the worst case the limits allow, drawn from a report built in memory: 50 metrics with
2,000-character definitions, 250 listed pairs whose 100,000-character texts are 4-byte
characters and quotes, 1,000-character reasons, 5,000 votes with 4,000-character comments.
With `--write DIR`, the pages are saved there (for screenshots).
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

# The harness sets the offline environment before any service module reads it.
from harness import CallCounter, fresh_tables, shown

# isort: split

from evalsvc.api.responses import MAX_RESPONSE_BYTES, _proxy_bytes
from evalsvc.core.deadlines import Deadline
from evalsvc.core.identifiers import now_ms
from evalsvc.core.settings import get_settings
from evalsvc.logic import reports, votes
from evalsvc.logic.judge_agreement import per_metric
from evalsvc.logic.scored_pairs import summarize_result
from evalsvc.models.api_keys import Identity
from evalsvc.models.comparisons import CompareIn
from evalsvc.models.datasets import MAX_TEXT_CHARS, DatasetKind, Pair
from evalsvc.models.evaluations import (
    LOWEST_PER_METRIC,
    MAX_COMMENT_CHARS,
    MAX_REASON_CHARS,
    Critique,
    EvaluationResult,
    ScoredPair,
    VoteIn,
    VoteObservation,
)
from evalsvc.models.metric_sets import MAX_DEFINITION_CHARS, MAX_DEFINITIONS
from evalsvc.models.reports import EvaluationReport, MetricSection, PairText, ShownPair, VoteCounts
from evalsvc.reports.comparison_page import render_comparison
from evalsvc.reports.evaluation_page import render_evaluation
from evalsvc.spending.meter import Usage
from evalsvc.statistics.agreement import Agreement
from evalsvc.statistics.scores import summarize
from evalsvc.storage import datasets as datasets_store
from evalsvc.storage import dynamo
from evalsvc.storage import results as results_store
from evalsvc_tools.local.inprocess import moto_in_process

DEFINITIONS = [
    "Does the answer address the user's question directly and correctly?",
    "check:max_words:120",
    "check:contains:please",
]
QUESTIONS = [
    "How do I reset my password?",
    "Can I change the email address on my account?",
    "Why was my card declined when I tried to upgrade?",
    "How do I export my data as CSV?",
    "Is there a way to pause my subscription for a month?",
    "What does the <beta> badge next to a feature mean?",
]
SENTENCES = [
    "Please open Settings, then Account.",
    "Choose Reset password and follow the link we email you.",
    "The link expires after 30 minutes.",
    "If the card was declined, your bank may have blocked a foreign payment.",
    "You can export any table from its menu with Export → CSV.",
    "Subscriptions can be paused for up to 3 months from the Billing page.",
    "Features marked <beta> may change before they are final.",
    "Contact support@example.com if anything is unclear.",
]
REASONS = {
    1: "The answer does not address the question at all; it talks about {topic} instead.",
    2: "The answer is mostly off-topic and misses the step the user asked about ({topic}).",
    3: "The answer is partly relevant but leaves out how to {topic}.",
    4: "The answer is relevant and correct, with one unnecessary detail about {topic}.",
    5: "The answer addresses the question directly and correctly.",
}
TOPICS = ["billing", "password resets", "exports", "the <beta> badge", "account email"]
IDENTITY = Identity("bench", "ann", "ann@example.com", "k1")


def _answer(rng: random.Random, sentences: int) -> str:
    return " ".join(rng.choice(SENTENCES) for _ in range(sentences))


def _store(
    results_id: str, dataset_id: str, pairs: list[Pair], rng: random.Random, shift: float
) -> None:
    scored = []
    for k, pair in enumerate(pairs):
        judged = min(5, max(1, round(rng.gauss(3.6 + shift, 1.1))))
        scored.append(
            ScoredPair(
                pair_id=pair.id,
                index=k,
                scores=[
                    float(judged),
                    5.0 if len(pair.output.split()) <= 120 else 1.0,
                    5.0 if "please" in pair.output.lower() else 1.0,
                ],
                reasons=[
                    REASONS[judged].format(topic=rng.choice(TOPICS)),
                    "within 120 words" if len(pair.output.split()) <= 120 else "over 120 words",
                    "says please" if "please" in pair.output.lower() else "never says please",
                ],
            )
        )
    result = EvaluationResult(
        tenant="bench",
        results_id=results_id,
        created_ms=now_ms(),
        dataset_id=dataset_id,
        dataset_kind=DatasetKind.SEED,
        metrics_id="m-bench",
        definitions=DEFINITIONS,
        system_prompt="You are a helpful support assistant.",
        pair_count=len(scored),
        summaries=[],
        pairs_done=len(scored),
        usage=Usage(len(scored), 0, 350 * len(scored), 40 * len(scored), "openai:gpt-4o-mini"),
    )
    summarize_result(result, scored)
    results_store.put(result, scored)


def _timed(work: Callable[[], object], repeat: int) -> tuple[object, float]:
    times = []
    value: object = None
    for _ in range(repeat):
        start = time.perf_counter()
        value = work()
        times.append(time.perf_counter() - start)
    return value, statistics.median(times)


def _sizes(body: bytes) -> str:
    packed = gzip.compress(body, compresslevel=5)
    return f"{len(body) / 1e3:,.0f} kB plain, {len(packed) / 1e3:,.0f} kB gzipped"


def stored(pairs: int, write: Path | None) -> None:
    rng = random.Random(7)
    data = [
        Pair(
            id=f"p{k:06d}",
            input=rng.choice(QUESTIONS),
            output=_answer(rng, rng.randint(1, 14)),
        )
        for k in range(pairs)
    ]
    started = time.perf_counter()
    # The candidate's answers: the same questions (pair ids), four in ten answered anew.
    changed = [
        Pair(id=p.id, input=p.input, output=_answer(rng, rng.randint(1, 14)))
        if rng.random() < 0.4
        else p
        for p in data
    ]
    datasets_store.write_dataset("bench", DatasetKind.SEED, "bench", data, "")
    datasets_store.write_dataset("bench", DatasetKind.SEED, "bench-v2", changed, "")
    _store("base", "bench", data, rng, 0.0)
    _store("cand", "bench-v2", changed, rng, -0.15)
    for k in range(40):
        votes.vote(
            IDENTITY,
            "base",
            VoteIn(
                pair_id=data[k * 7 % pairs].id,
                metric_idx=0,
                vote=rng.choice([-1, 1, 1]),
                comment=rng.choice(
                    ["Agree: off-topic.", "The judge is too harsh here.", "<b>Wrong</b> link.", ""]
                ),
            ),
        )
    print(f"stored 2 results of {pairs:,} pairs in {time.perf_counter() - started:.1f} s")

    def deadline() -> Deadline:
        """Each read its own time: a slow machine must not turn one read's wait into the next
        one's time out."""
        return Deadline.after(600)

    counter = CallCounter()
    reports.evaluation_report(IDENTITY, "base", deadline())
    evaluation_calls = shown(counter.take())
    reports.comparison_report(
        IDENTITY, CompareIn(baseline_id="base", candidate_id="cand"), deadline()
    )
    comparison_calls = shown(counter.take())
    print(f"DynamoDB calls: evaluation page {evaluation_calls}; comparison page {comparison_calls}")
    view, read_s = _timed(lambda: reports.evaluation_report(IDENTITY, "base", deadline()), 3)
    page, draw_s = _timed(lambda: render_evaluation(view), 5)  # type: ignore[arg-type]
    assert isinstance(page, bytes)
    print(
        f"evaluation page, {pairs:,} pairs: read {read_s:.2f} s (the store's), "
        f"draw {draw_s * 1e3:.0f} ms, {_sizes(page)}"
    )
    body = CompareIn(baseline_id="base", candidate_id="cand")
    compared, cmp_read_s = _timed(lambda: reports.comparison_report(IDENTITY, body, deadline()), 3)
    cmp_page, cmp_draw_s = _timed(lambda: render_comparison(compared), 5)  # type: ignore[arg-type]
    assert isinstance(cmp_page, bytes)
    print(
        f"comparison page, {pairs:,} pairs each: read {cmp_read_s:.2f} s (the store's), draw "
        f"{cmp_draw_s * 1e3:.0f} ms, {_sizes(cmp_page)}"
    )
    # A result stored before score histograms were kept: counted from its scores only when it
    # has at most LEGACY_HISTOGRAM_PAIRS; otherwise the page says so and reads none.
    dynamo.call(
        "update_item",
        TableName=get_settings().results_table,
        Key={"pk": {"S": results_store.result_pk("bench", "base")}, "sk": {"S": "result"}},
        UpdateExpression="REMOVE histograms",
    )
    counter.take()
    reports.evaluation_report(IDENTITY, "base", deadline())
    print(
        f"DynamoDB calls: evaluation page of a result stored without histograms "
        f"({pairs:,} pairs; counted up to {reports.LEGACY_HISTOGRAM_PAIRS:,}): "
        f"{shown(counter.take())}"
    )
    if write:
        (write / "evaluation.html").write_bytes(page)
        (write / "comparison.html").write_bytes(cmp_page)


def _limits_report(rng: random.Random) -> EvaluationReport:
    nasty = '🧩"<' * (MAX_TEXT_CHARS // 3)
    definitions = [f"{m} " + "🧩" * (MAX_DEFINITION_CHARS - 4) for m in range(MAX_DEFINITIONS)]
    critiques = [
        Critique(
            id=f"c{k}",
            pair_id=f"p{k % 250:03d}",
            metric_idx=k % MAX_DEFINITIONS,
            comment='💬"' * (MAX_COMMENT_CHARS // 2),
            vote=rng.choice([-1, 0, 1]),
            user=f"user{k}",
            user_email=f"user{k}@example.com",
            time_ms=now_ms() - k,
        )
        for k in range(reports.CRITIQUE_READ_ITEMS)
    ]
    votes = [
        VoteObservation(c.metric_idx, c.pair_id, rng.randint(1, 5), c.vote, "review")
        for c in critiques
    ]
    agreement: dict[int, Agreement] = {
        a.metric_idx: a.figures for a in per_metric(definitions, votes, "all")
    }
    sections = []
    for m, definition in enumerate(definitions):
        lowest = [
            ShownPair(
                pair_id=f"p{(m * LOWEST_PER_METRIC + k):03d}",
                score=1.0,
                reason="🧾<" * (MAX_REASON_CHARS // 2),
                text=PairText(nasty, nasty),
                critiques=[c for c in critiques if c.metric_idx == m][:20],
            )
            for k in range(LOWEST_PER_METRIC)
        ]
        sections.append(
            MetricSection(
                idx=m,
                definition=definition,
                summary=summarize([rng.randint(1, 5) for _ in range(50)]),
                histogram=[rng.randint(0, 10_000) for _ in range(5)],
                lowest=lowest,
                votes=VoteCounts(30, 40, 30, 100),
                agreement=agreement.get(m),
            )
        )
    result = EvaluationResult(
        tenant="bench",
        results_id="r" * 64,
        created_ms=now_ms(),
        dataset_id="d" * 64,
        dataset_kind=DatasetKind.SEED,
        metrics_id="m",
        definitions=definitions,
        system_prompt=nasty,
        pair_count=100_000,
        summaries=[s.summary for s in sections if s.summary],
        pairs_done=100_000,
    )
    return EvaluationReport(result, sections, critiques, True)


@contextlib.contextmanager
def _embedded_store() -> Iterator[None]:
    """`evalsvc serve` on free ports with a fresh data directory; the service pointed at its
    DynamoDB endpoint."""
    import boto3
    from evalsvc_tools.local.server import apply_environment
    from evalsvc_tools.local.store import TABLE_PREFIX
    from evalsvc_tools.local.tables import create_tables
    from local_store import Server

    server = Server(Path(tempfile.mkdtemp(prefix="reports-bench-")) / "data")
    server.start()
    endpoint = f"http://127.0.0.1:{server.dynamodb_port}"
    try:
        client = boto3.client("dynamodb", region_name="us-east-1", endpoint_url=endpoint)
        env = create_tables(client, TABLE_PREFIX)
        apply_environment({**env, "EVALSVC_DYNAMODB_ENDPOINT_URL": endpoint})
        yield
    finally:
        server.kill()
        shutil.rmtree(server.data_dir.parent, ignore_errors=True)


def limits() -> None:
    view = _limits_report(random.Random(3))

    def fits(body: bytes) -> bool:
        return _proxy_bytes(body, False) <= MAX_RESPONSE_BYTES

    page, draw_s = _timed(lambda: render_evaluation(view, fits), 3)
    assert isinstance(page, bytes)
    print(
        f"evaluation page at the field limits: draw {draw_s * 1e3:.0f} ms (cutting included), "
        f"{_sizes(page)}, {_proxy_bytes(page, False) / 1e6:.2f} MB in a Lambda response"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--write", type=Path, help="save the pages here")
    parser.add_argument(
        "--embedded",
        action="store_true",
        help="store and read in the embedded store of `evalsvc serve` (over HTTP, in its own "
        "process) rather than moto in-process",
    )
    args = parser.parse_args()
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
    if args.embedded:
        with _embedded_store():
            stored(args.pairs, args.write)
    else:
        with moto_in_process():
            fresh_tables()
            stored(args.pairs, args.write)
    limits()
    print(json.dumps({"pairs": args.pairs}))


if __name__ == "__main__":
    main()
