"""The fake OpenAI-compatible judge (tests/fake_judge.py) in a process of its own, for the
benchmarks that measure judge throughput: its threads must not compete with the workers' for
the benchmark's interpreter. Import after `harness` (which puts the repository on sys.path)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection

from tests.fake_judge import FakeJudge


@dataclass
class JudgeStats:
    base_url: str = ""
    calls: int = 0
    first_request_at: float = 0.0
    last_response_at: float = 0.0
    max_in_flight: int = 0


def _serve_judge(latency: float, pipe: Connection) -> None:
    judge = FakeJudge(latency=latency)
    with judge.running():
        pipe.send(judge.base_url)
        pipe.recv()  # until told to stop
    pipe.send(
        JudgeStats(
            judge.base_url,
            len(judge.requests),
            judge.first_request_at or 0.0,
            judge.last_response_at or 0.0,
            judge.max_in_flight,
        )
    )


@contextmanager
def judge_process(latency: float) -> Iterator[JudgeStats]:
    """The fake judge answering after `latency` seconds, in a process of its own; its figures
    (calls, first request, last response, most in flight) filled in on exit."""
    ours, theirs = multiprocessing.Pipe()
    process = multiprocessing.Process(target=_serve_judge, args=(latency, theirs), daemon=True)
    process.start()
    stats = JudgeStats(base_url=ours.recv())
    try:
        yield stats
    finally:
        ours.send("stop")
        final = ours.recv()
        process.join(timeout=30)
        stats.__dict__.update(final.__dict__)
