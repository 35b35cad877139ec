"""What each kind of LLM work holds of a tenant's month while it runs, against what it is
expected to cost, what it could cost at most, and what it cost: `evalsvc serve` with a priced
fake judge on 127.0.0.1 (a fixed latency a call), driven over HTTP; GET /usage sampled every
20 ms while each piece of work runs gives the most it held (`reserved_usd`).

Then the same question the limit asks: how many of N pairwise runs, started together under a
monthly limit of twice one run's bound, are done within a minute.

    .venv/bin/python bench/reservations.py [--latency 0.05] [--concurrency 16] [--runs 8]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.fake_judge import FakeJudge, fake_llm

HEADERS = {"Authorization": DEV_KEY}
PRICES = {"openai:fake-judge": {"input": 2.5, "output": 10}}


class Api:
    def __init__(self, base: str) -> None:
        self.base = base

    def call(self, method: str, path: str, body: Any = None, **headers: str) -> Any:
        answer = requests.request(
            method, self.base + path, json=body, headers={**HEADERS, **headers}, timeout=300
        )
        if answer.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
        return answer.json()

    def until_done(self, path: str) -> Any:
        while True:
            state = self.call("GET", path)
            if state.get("status") != "running":
                return state
            time.sleep(0.1)


class Peak:
    """The most GET /usage says is held, sampled every 20 ms while a block runs."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.most = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            held = self.api.call("GET", "/usage")["reserved_usd"]
            self.most = max(self.most, held)
            time.sleep(0.02)

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def measure(
    api: Api, name: str, estimate: dict[str, Any] | None, run: Callable[[], dict[str, Any]]
) -> None:
    with Peak(api) as peak:
        usage = run()
    cost = usage["cost_usd"] or 0.0
    expected = estimate["cost_usd_expected"] if estimate else None
    bound = estimate["cost_usd_max"] if estimate else None
    print(
        f"| {name} | {usage['llm_calls']} | "
        + (f"${expected:.4f} | ${bound:.4f} | " if estimate else "- | - | ")
        + f"${peak.most:.4f} | ${cost:.4f} | "
        + (f"{peak.most / expected:.2f} | " if expected else "- | ")
        + (f"{bound / expected:.1f} |" if expected and bound else "- |")
    )


def seed(api: Api, name: str, pairs: int, output: str = "Please hold ({k}).") -> None:
    data = [
        {"id": f"p{k:04d}", "input": f"How do I reset it? ({k})", "output": output.format(k=k)}
        for k in range(pairs)
    ]
    api.call("POST", f"/data/seed/{name}", {"data": data, "system_prompt": "Be kind."})


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--runs", type=int, default=8)
    args = parser.parse_args()
    judge = FakeJudge(fake_llm, latency=args.latency)
    env = {
        "EVALSVC_LLM": "openai:fake-judge",
        "EVALSVC_PRICES": json.dumps(PRICES),
        "EVALSVC_JUDGE_CONCURRENCY": str(args.concurrency),
        "EVALSVC_LOCAL_WORKERS": "2",
        "EVALSVC_MAX_RUNNING_JOBS_PER_TENANT": "16",
    }
    with judge.running(), tempfile.TemporaryDirectory() as data:
        server = LocalServer(Path(data), judge_url=judge.base_url, extra_env=env)
        server.start()
        try:
            api = Api(server.base_url)
            kinds(api, args)
            concurrent_pairwise(server, api, args)
        finally:
            server.stop()


def kinds(api: Api, args: argparse.Namespace) -> None:
    print(
        f"fake judge: {args.latency * 1000:.0f} ms a call, EVALSVC_JUDGE_CONCURRENCY "
        f"{args.concurrency}, prices $2.5 / $10 per million tokens in / out\n"
    )
    print(
        "| work | calls | expected | bound (cost_usd_max) | most held | cost | held / "
        "expected | bound / expected |"
    )
    print("|---|---|---|---|---|---|---|---|")
    judged = api.call("POST", "/specify_questions", {"metrics": ["Is it polite?", "Is it clear?"]})
    checks = api.call("POST", "/specify_questions", {"metrics": ["check:non_empty"]})

    seed(api, "one", 1)
    body = {"seed_data_id": "one", "metrics_id": judged["metrics_id"]}
    measure(
        api,
        "POST /evaluate, 1 pair x 2 questions (inline)",
        api.call("POST", "/evaluate/estimate", body),
        lambda: api.call("POST", "/evaluate", body)["usage"],
    )
    seed(api, "fifty", 50)
    body = {"seed_data_id": "fifty", "metrics_id": judged["metrics_id"]}
    measure(
        api,
        "POST /evaluate, 50 pairs x 2 questions (inline)",
        api.call("POST", "/evaluate/estimate", body),
        lambda: api.call("POST", "/evaluate", body)["usage"],
    )
    seed(api, "big", 600)
    body = {"seed_data_id": "big", "metrics_id": judged["metrics_id"]}

    def queued() -> dict[str, Any]:
        ran = api.call("POST", "/evaluate", body, Prefer="respond-async")
        return dict(api.until_done(f"/evaluation/{ran['eval_results_id']}")["usage"])

    measure(
        api,
        "POST /evaluate, 600 pairs x 2 questions (queued)",
        api.call("POST", "/evaluate/estimate", body),
        queued,
    )
    runs = []
    for name, text in (("curt", "Hold it ({k})."), ("polite", "Please hold it ({k}).")):
        seed(api, name, 200, text)
        evaluated = {"seed_data_id": name, "metrics_id": checks["metrics_id"]}
        runs.append(api.call("POST", "/evaluate", evaluated)["eval_results_id"])
    for pairs in (20, 200):
        pairwise = {"result_ids": runs, "question": "Which is more polite?", "max_pairs": pairs}

        def compared(pairwise: dict[str, Any] = pairwise) -> dict[str, Any]:
            ran = api.call("POST", "/pairwise", pairwise, Prefer="respond-async")
            return dict(api.until_done(f"/pairwise/{ran['pairwise_id']}")["usage"])

        measure(
            api,
            f"POST /pairwise, {pairs} pairs x both orders (queued)",
            api.call("POST", "/pairwise/estimate", pairwise),
            compared,
        )
    measure(
        api,
        "POST /questions",
        None,
        lambda: api.call("POST", "/questions", {"system_prompt": "Be kind. Answer briefly."})[
            "usage"
        ],
    )
    seed(api, "eight", 8)
    measure(
        api,
        "POST /augment, 8 seeds x 2",
        None,
        lambda: api.call("POST", "/augment", {"seed_data_id": "eight", "multiple": 2})["usage"],
    )
    evaluated = api.call(
        "POST", "/evaluate", {"seed_data_id": "eight", "metrics_id": judged["metrics_id"]}
    )
    comparison = {
        "metrics_id": judged["metrics_id"],
        "candidates": [{"prompt": "Be kind.", "eval_results_id": evaluated["eval_results_id"]}],
    }
    measure(
        api,
        "POST /improve_prompt",
        None,
        lambda: api.call(
            "POST",
            "/improve_prompt",
            {"seed_data_id": "eight", "prompt_comparison_results": comparison},
        )["usage"],
    )


def concurrent_pairwise(server: LocalServer, api: Api, args: argparse.Namespace) -> None:
    checks = api.call("POST", "/specify_questions", {"metrics": ["check:non_empty"]})
    runs = []
    for name, text in (("a", "Hold it now ({k})."), ("b", "Please, hold it ({k}).")):
        seed(api, name, 100, text)
        evaluated = {"seed_data_id": name, "metrics_id": checks["metrics_id"]}
        runs.append(api.call("POST", "/evaluate", evaluated)["eval_results_id"])
    bodies = [
        {"result_ids": runs, "question": f"Which is more polite? ({k})", "max_pairs": 100}
        for k in range(args.runs)
    ]
    bound = api.call("POST", "/pairwise/estimate", bodies[0])["cost_usd_max"]
    spent = api.call("GET", "/usage")["cost_usd"] or 0.0
    limit = spent + 2 * bound
    limited = server.cli("tenants", "set-limit", "--tenant", "local", "--monthly-usd", f"{limit}")
    assert limited.returncode == 0, limited.stdout + limited.stderr
    print(
        f"\n{args.runs} pairwise runs of 100 pairs started together; each could cost up to "
        f"${bound:.4f}; the month has ${2 * bound:.4f} of room (the limit twice one run's bound)"
    )
    started = time.monotonic()

    def one(body: dict[str, Any]) -> tuple[str, float, float]:
        try:
            ran = api.call("POST", "/pairwise", body)
        except RuntimeError as refused:
            return str(refused)[:60], time.monotonic() - started, 0.0
        if ran.get("status") == "running":
            ran = api.until_done(f"/pairwise/{ran['pairwise_id']}")
        return ran["status"], time.monotonic() - started, ran["usage"]["cost_usd"] or 0.0

    with ThreadPoolExecutor(args.runs) as pool:
        outcomes = list(pool.map(one, bodies))
    done = [o for o in outcomes if o[0] == "complete"]
    last = max(o[1] for o in outcomes)
    print(
        f"complete: {len(done)} of {args.runs}, the last after {last:.1f} s; "
        f"spent ${sum(o[2] for o in done):.4f} of the ${2 * bound:.4f}"
    )
    for status, seconds, _ in outcomes:
        if status != "complete":
            print(f"  not complete: {status} after {seconds:.1f} s")


if __name__ == "__main__":
    main()
