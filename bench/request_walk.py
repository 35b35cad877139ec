"""How hard one request is to follow: the service files an inline `POST /pairwise` and an inline
`POST /evaluate` (each small enough to be answered within the request, with a judge) walk
through, counted the way a new maintainer reading the code would follow them.

Traced with sys.setprofile and threading.setprofile: counted are the calls made within the
route handler's call (from its start to its return, on the thread FastAPI runs it on) and on
the threads whose work it submits to a thread pool (the judge calls), nothing before or after
it (middleware, authentication, serializing the response). Only functions whose file is under
layers/common/evalsvc count; a call made by a frame of any other code (FastAPI, pydantic,
boto3, the standard library) is the call of the nearest service frame below it on the stack,
and the work a pool thread runs is called by the service frame that submitted it.

- a step: the first time a function of one service file calls a function of another (distinct
  (caller function, callee function) pairs, in the order they first occur; a comprehension or
  generator expression is the function it is written in);
- files: the distinct service files visited, the route's file included;
- a return: a step into a file the walk visited before and had left (the route's file, or one
  an earlier step entered). So returns = steps - (files - 1), and the returns into a file are
  the distinct ways in to it but the one that first entered it (all of them for the route's
  file): figures that do not depend on the order in which the threads run (the order of the
  steps, printed with --verbose, may);
- coarser, file to file: the distinct (caller file, callee file) pairs among the steps, and
  how many of them lead back into a file visited before.

Set-up, untraced, through the whole API in-process (moto, a fake OpenAI-compatible judge on
127.0.0.1): a metrics set with one judged question, three datasets of the same pairs and their
evaluations (the runs to rank), and the datasets the measured evaluations score (texts of
their own, so the judge cache never answers). Each measured request is made once untraced
first (with texts or a question of its own), so that what the first request of a process does
once (imports, clients, settings) is not counted.

    .venv/bin/python bench/request_walk.py [--verbose] [--pairs 4] [--top 5]
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.thread import _WorkItem
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

# The harness sets the offline environment before any service module reads it.
from harness import fresh_tables

# isort: split

import boto3
import evalsvc
from evalsvc.api.app import create_app
from evalsvc.api.routes import all_routers
from evalsvc.api.routes import evaluate as evaluate_route
from evalsvc.api.routes import pairwise as pairwise_route
from evalsvc.logic import api_keys
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.tables import create_queues
from fastapi import FastAPI
from fastapi.testclient import TestClient

from tests.fake_judge import FakeJudge, service_env

SERVICE = Path(evalsvc.__file__).resolve().parent
QUESTION = "Is the answer polite?"
RUNS = 3

# A function: (its file relative to SERVICE, its qualified name).
Function = tuple[str, str]

_SUBMIT = ThreadPoolExecutor.submit.__code__
_RUN_WORK = _WorkItem.run.__code__
# Code objects of comprehensions and generator expressions: the function they are written in.
_INLINE = ("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>")


@dataclass
class Walk:
    """The steps of one request, as the profiler saw them."""

    handler: CodeType
    root: Function | None = None
    steps: dict[tuple[Function, Function], None] = field(default_factory=dict)
    # The threads on which calls were counted, by kind (a pool's threads are one kind).
    threads: dict[str, set[str]] = field(default_factory=dict)
    # id(fn) -> (fn, the service function that submitted it), for work submitted to a pool.
    submitted: dict[int, tuple[object, Function]] = field(default_factory=dict)
    names: dict[CodeType, Function | None] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def name(self, code: CodeType) -> Function | None:
        """The service function `code` is (None: not the service's)."""
        try:
            return self.names[code]
        except KeyError:
            pass
        found: Function | None = None
        path = code.co_filename
        if path.startswith(str(SERVICE) + os.sep):
            qualname = code.co_qualname
            while qualname.endswith(_INLINE) and "." in qualname:
                qualname = qualname.rsplit(".", 1)[0].removesuffix(".<locals>")
            found = (Path(path).relative_to(SERVICE).as_posix(), qualname)
        self.names[code] = found
        return found

    def caller(self, frame: FrameType | None) -> tuple[Function | None, bool]:
        """The nearest service function at or below `frame` on its thread's stack, and whether
        the stack is the request's: the route handler's call, or work the request submitted
        to a pool (whose caller, on a pool thread, is the service function that submitted
        it)."""
        nearest: Function | None = None
        while frame is not None:
            code = frame.f_code
            if nearest is None:
                nearest = self.name(code)
            if code is self.handler:
                return nearest, True
            if code is _RUN_WORK:
                work = self.submitted.get(id(frame.f_locals["self"].fn))
                if work is None:
                    return nearest, False
                return nearest or work[1], True
            frame = frame.f_back
        return nearest, False

    def profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code is _SUBMIT:
            submitter, ours = self.caller(frame.f_back)
            if ours and submitter is not None:
                fn = frame.f_locals["fn"]
                with self.lock:
                    self.submitted[id(fn)] = (fn, submitter)
            return
        callee = self.name(code)
        if callee is None:
            return
        if code is self.handler:
            with self.lock:
                self.root = callee
                self._counted()
            return
        caller, ours = self.caller(frame.f_back)
        if not ours or caller is None:
            return
        with self.lock:
            self._counted()
            if caller[0] != callee[0]:
                self.steps.setdefault((caller, callee), None)

    def _counted(self) -> None:
        name = threading.current_thread().name
        kind = name.rstrip("0123456789_").rstrip("-") or name
        self.threads.setdefault(kind, set()).add(name)

    def figures(self) -> tuple[list[str], list[tuple[Function, Function, bool]], Counter[str]]:
        """The files visited in order, the steps (each with whether it is a return), and the
        returns by file re-entered."""
        assert self.root is not None, "the route handler was never called on a traced thread"
        files = [self.root[0]]
        steps = []
        returns: Counter[str] = Counter()
        for caller, callee in self.steps:
            back = callee[0] in files
            if back:
                returns[callee[0]] += 1
            else:
                files.append(callee[0])
            steps.append((caller, callee, back))
        return files, steps, returns


@contextmanager
def profiled(walk: Walk) -> Iterator[None]:
    """Profile this thread and every thread started while it holds."""
    threading.setprofile(walk.profile)
    sys.setprofile(walk.profile)
    try:
        yield
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def traced(app: FastAPI, handler: Callable[..., Any], send: Callable[[TestClient], Any]) -> Walk:
    """The walk of the request `send` makes through `app`, from the call of `handler` (a
    client of its own, so a new event loop and new worker threads, which are profiled)."""
    walk = Walk(handler.__code__)
    client = TestClient(app)
    with profiled(walk):
        response = send(client)
    assert response.status_code == 200, f"{response.status_code}: {response.text}"
    return walk


def report(title: str, walk: Walk, top: int, verbose: bool) -> None:
    files, steps, returns = walk.figures()
    print(f"{title} (route {files[0]})")
    print(f"  files {len(files)}, steps {len(steps)}, returns {sum(returns.values())}")
    most = sorted(returns.items(), key=lambda item: (-item[1], item[0]))[:top]
    shown = ", ".join(f"{path} x{n}" for path, n in most)
    print(f"  re-entered most: {shown}")
    hops: dict[tuple[str, str], None] = {}
    for caller, callee, _ in steps:
        hops.setdefault((caller[0], callee[0]), None)
    back = len(hops) - (len(files) - 1)
    print(f"  coarser, file to file: {len(hops)} distinct hops, {back} of them back")
    threads = ", ".join(f"{kind} x{len(names)}" for kind, names in sorted(walk.threads.items()))
    print(f"  threads counted: {threads}")
    if verbose:
        for k, (caller, callee, again) in enumerate(steps, 1):
            mark = "  (return)" if again else ""
            print(f"  {k:3d}. {caller[0]}:{caller[1]} -> {callee[0]}:{callee[1]}{mark}")


# ---- set-up, untraced ------------------------------------------------------------------------


def pairs(label: str, n: int, run: int = 0) -> list[dict[str, Any]]:
    """`n` pairs of the same ids and inputs whatever `label`; outputs of their own, which say
    please on pair i when i mod 4 < run."""
    return [
        {
            "id": f"pair-{i:03d}",
            "input": f"Question {i}: how do I change the billing address?",
            "output": (
                f"{'Please open' if i % 4 < run else 'Open'} Settings, then Billing, and "
                f"press Save ({label}, {i})."
            ),
        }
        for i in range(n)
    ]


def ok(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, f"{response.status_code}: {response.text}"
    body: dict[str, Any] = response.json()
    return body


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--verbose", action="store_true", help="print every step, in order")
    parser.add_argument("--pairs", type=int, default=4, help="pairs of each dataset")
    parser.add_argument("--top", type=int, default=5, help="re-entered files shown")
    args = parser.parse_args()
    # The service prints its LLM metrics (CloudWatch's embedded format) on stdout: not here.
    with redirect_stdout(io.StringIO()):
        walks = measure(args.pairs)
    for title, walk in walks:
        report(title, walk, args.top, args.verbose)


def measure(n: int) -> list[tuple[str, Walk]]:
    """The set-up, then each request once untraced and once traced."""
    walks = []
    judge = FakeJudge()
    with moto_in_process(), judge.running():
        # A work queue, as deployed (nothing here is large enough to go on it).
        queues = create_queues(boto3.client("sqs", region_name="us-east-1"), "bench")
        fresh_tables({"EVALSVC_WORK_QUEUE_URL": queues["WorkQueue"], **service_env(judge)})
        key, _ = api_keys.create_key("bench", "bench", "bench@example.test")
        headers = {"Authorization": key}
        api = TestClient(create_app(all_routers()))

        def post(client: TestClient, path: str, body: dict[str, Any]) -> Any:
            return client.post(path, headers=headers, json=body)

        def seeded(label: str, run: int = 0) -> str:
            written = ok(post(api, "/data/seed", {"data": pairs(label, n, run)}))
            return str(written["id"])

        metrics_id = ok(post(api, "/specify_questions", {"metrics": [QUESTION]}))["metrics_id"]

        def evaluate_body(dataset_id: str) -> dict[str, Any]:
            return {"seed_data_id": dataset_id, "metrics_id": metrics_id}

        result_ids = [
            ok(post(api, "/evaluate", evaluate_body(seeded(f"run {run}", run))))["eval_results_id"]
            for run in range(RUNS)
        ]

        def pairwise_body(question: str) -> dict[str, Any]:
            return {"result_ids": result_ids, "question": question}

        app = create_app([pairwise_route.router])
        ok(post(TestClient(app), "/pairwise", pairwise_body("Which answer reads better?")))
        walk = traced(
            app,
            pairwise_route.post_pairwise,
            lambda client: post(client, "/pairwise", pairwise_body("Which answer helps more?")),
        )
        walks.append((f"inline POST /pairwise: {RUNS} runs x {n} pairs, both orders", walk))

        app = create_app([evaluate_route.router])
        ok(post(TestClient(app), "/evaluate", evaluate_body(seeded("warm-up"))))
        measured = seeded("measured")
        walk = traced(
            app,
            evaluate_route.evaluate,
            lambda client: post(client, "/evaluate", evaluate_body(measured)),
        )
        walks.append((f"inline POST /evaluate: {n} pairs x 1 judged question", walk))
    return walks


if __name__ == "__main__":
    main()
