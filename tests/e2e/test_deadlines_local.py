"""Against the local server, as a user meets it: an evaluation whose judge is too slow for the
29 s that API Gateway allows answers in time and completes on the work queue, every verdict
asked once; and a model that gives two variants per answer still yields `multiple` per seed."""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import DEV_KEY, LocalServer
from tests.fake_judge import Answer, FakeJudge, polite_judge

HEADERS = {"Authorization": DEV_KEY}
JUDGE_SECONDS = 5.0
QUESTIONS = ["Does the output say please?", "Is the output polite?"]


class SlowJudgeTwoVariants:
    """Verdicts after JUDGE_SECONDS each; variants two at a time, never the same twice."""

    def __init__(self) -> None:
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Answer:
        if request["response_format"]["json_schema"]["name"] == "record_variants":
            user = request["messages"][-1]["content"]
            seed = re.search(r"<example_input>\n(.*?)\n</example_input>", user, re.DOTALL)
            with self._lock:
                numbers = [next(self._numbers), next(self._numbers)]
            variants = [
                {"input": f"{seed.group(1) if seed else '?'} #{n}", "output": f"Please see {n}."}
                for n in numbers
            ]
            return 200, json.dumps({"variants": variants})
        time.sleep(JUDGE_SECONDS)
        return polite_judge(request)


@pytest.fixture(scope="module")
def slow_judge() -> Iterator[FakeJudge]:
    fake = FakeJudge(answer=SlowJudgeTwoVariants())
    with fake.running():
        yield fake


@pytest.fixture(scope="module")
def deadline_server(
    tmp_path_factory: pytest.TempPathFactory, slow_judge: FakeJudge
) -> Iterator[LocalServer]:
    local = LocalServer(Path(tmp_path_factory.mktemp("deadlines")), judge_url=slow_judge.base_url)
    local.start()
    yield local
    local.stop()


def post(server: LocalServer, path: str, body: object) -> requests.Response:
    return requests.post(f"{server.base_url}{path}", json=body, headers=HEADERS, timeout=120)


def test_a_plain_evaluate_answers_before_the_gateway_and_completes_on_the_queue(
    deadline_server: LocalServer, slow_judge: FakeJudge
) -> None:
    # Given 50 pairs x 2 questions: 100 judge calls of 5 s, 16 at a time, about 35 s of
    # judging, where API Gateway allows 29 s
    data = [{"id": f"p{i:02d}", "input": f"q{i}", "output": f"please {i}"} for i in range(50)]
    assert post(deadline_server, "/data/seed/slow", {"data": data}).status_code == 200
    assert post(deadline_server, "/specify_questions", {"metrics": QUESTIONS}).status_code == 200

    # When it is evaluated with a plain POST (what plum-sdk sends)
    started = time.monotonic()
    response = post(deadline_server, "/evaluate", {"seed_data_id": "slow"})
    took = time.monotonic() - started

    # Then it answered in time, naming the result that goes on in the background
    assert took < 29, took
    assert response.status_code == 503, response.text
    location = response.headers["Location"]
    assert location.startswith("evaluation/ev_")
    assert "goes on in the background" in response.json()["error"]
    asked_in_request = len(slow_judge.verdicts_asked())
    assert 0 < asked_in_request < 100
    # And the work queue completes it
    url = f"{deadline_server.base_url}/{location}"
    deadline = time.monotonic() + 120
    while True:
        result = requests.get(url, headers=HEADERS, timeout=30).json()
        if result["status"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert result["status"] == "complete", result
    assert result["pair_count"] == 50 and result["score_means"] == [5.0, 5.0]
    # With every verdict asked exactly once: none paid for twice
    asked = Counter(slow_judge.verdicts_asked())
    assert len(asked) == 100 and set(asked.values()) == {1}


def test_a_model_that_gives_two_variants_per_answer_still_yields_multiple_per_seed(
    deadline_server: LocalServer, slow_judge: FakeJudge
) -> None:
    data = [{"id": f"s{i}", "input": f"seed question {i}", "output": "ok"} for i in range(3)]
    assert post(deadline_server, "/data/seed/seeds", {"data": data}).status_code == 200
    before = len(slow_judge.requests)

    response = post(deadline_server, "/augment", {"seed_data_id": "seeds", "multiple": 12})

    assert response.status_code == 200, response.text
    assert response.json()["synthetic_data_size"] == 36
    made = requests.get(
        f"{deadline_server.base_url}/data/synthetic/{response.json()['synthetic_data_id']}",
        headers=HEADERS,
        timeout=30,
    ).json()["data"]
    for i in range(3):
        inputs = [p["input"] for p in made if p["id"].startswith(f"s{i}.v")]
        assert len(inputs) == len(set(inputs)) == 12
    # Six answers of two for each of the three seeds
    assert len(slow_judge.requests) - before == 18
