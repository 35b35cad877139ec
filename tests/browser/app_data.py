"""What the review app's tests, screenshots and benchmark run against: the local server
(`evalsvc serve`) with a fake OpenAI-compatible judge, and the datasets, metrics and evaluations
put into it over HTTP."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.fake_judge import FakeJudge, fake_llm


def judge_note(output: str) -> str:
    """The reason the fake judge gives for an output (unique to the output)."""
    return f"Judge note {hashlib.sha256(output.encode()).hexdigest()[:10]}"


def judge_score(output: str) -> int:
    return len(output) % 5 + 1


def note_judge(reason: Callable[[str], str] = judge_note) -> Callable[[dict[str, Any]], Any]:
    """A fake judge whose verdict on an output is judge_score(output), with reason(output)."""

    def answer(request: dict[str, Any]) -> Any:
        user = request["messages"][-1]["content"]
        found = re.search(r"<output>\n(.*?)\n</output>", user, re.DOTALL)
        if found is None:
            return fake_llm(request)
        output = found.group(1)
        return 200, json.dumps({"reason": reason(output), "score": judge_score(output)})

    return answer


class Api:
    """The local server's API, with the dev key."""

    def __init__(self, base_url: str) -> None:
        self.base = base_url

    def __call__(self, method: str, path: str, body: Any = None) -> Any:
        response = requests.request(
            method, self.base + path, json=body, headers={"Authorization": DEV_KEY}, timeout=60
        )
        assert response.ok, (method, path, response.status_code, response.text)
        return response.json()

    def evaluate(self, dataset: str, pairs: Sequence[dict[str, str]], metrics_id: str) -> str:
        self("POST", f"/data/seed/{dataset}", {"data": list(pairs)})
        body = {"seed_data_id": dataset, "metrics_id": metrics_id}
        return str(self("POST", "/evaluate", body)["eval_results_id"])


@dataclass
class Served:
    server: LocalServer
    api: Api

    @property
    def app_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/app/"


@contextmanager
def served(
    data_dir: Path, judge: Callable[[dict[str, Any]], Any] | None = None
) -> Iterator[Served]:
    """The local server, with a fake judge answering `judge` (note_judge() by default)."""
    fake = FakeJudge(judge or note_judge())
    with fake.running():
        server = LocalServer(data_dir, judge_url=fake.base_url)
        server.start()
        try:
            yield Served(server, Api(server.base_url))
        finally:
            server.stop()
