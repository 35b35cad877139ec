"""POST /evaluate/estimate bounds the run: over random datasets (texts up to 4-byte characters,
repeated pairs) and metrics sets (questions and checks), against a judge that counts one token
a byte (the most any tokenizer can) and sometimes answers nonsense first (a retry), the run's
usage never passes the estimate's `*_max`, and the calls the estimate says are cached are."""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import point_service_at
from tests.fake_judge import Answer, FakeJudge, byte_usage, polite_judge
from tests.integration.conftest import Tenant
from tests.integration.test_usage import judge_env

ATTEMPTS = 4
CHECKS = ["check:non_empty", "check:max_words:5", "check:contains:please"]
texts = st.lists(
    st.sampled_from(["a", " ", "é", "€", "𝄞", "\n", '"', "please", "\\", "<"]), max_size=40
).map("".join)


class Flaky:
    """polite_judge, but the first answer to some requests is nonsense (hashed, so an example
    is the same each time it is run)."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Answer:
        user = request["messages"][-1]["content"]
        digest = hashlib.sha256(user.encode("utf-8", "surrogatepass")).digest()
        with self.lock:
            first = user not in self.seen
            self.seen.add(user)
        if first and digest[0] % 3 == 0:
            return 200, "I would rather not say."
        return polite_judge(request)


@pytest.fixture
def worst_judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    fake = FakeJudge(answer=Flaky())
    fake.usage = byte_usage
    with fake.running():
        point_service_at(
            judge_env(
                fake, EVALSVC_JUDGE_MAX_ATTEMPTS=str(ATTEMPTS), EVALSVC_JUDGE_RETRY_BASE_SECONDS="0"
            ),
            monkeypatch,
        )
        yield fake


_ids = itertools.count()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    pairs=st.lists(st.tuples(texts, texts), min_size=1, max_size=6),
    repeats=st.integers(0, 2),
    questions=st.lists(texts.filter(lambda q: q.strip() != ""), min_size=1, max_size=3),
    checks=st.lists(st.sampled_from(CHECKS), max_size=2),
    prompt=texts,
    latest=st.none() | st.integers(1, 8),
)
def test_the_estimate_bounds_the_run(
    acme: Tenant,
    worst_judge: FakeJudge,
    pairs: list[tuple[str, str]],
    repeats: int,
    questions: list[str],
    checks: list[str],
    prompt: str,
    latest: int | None,
) -> None:
    dataset = f"ds{next(_ids)}"
    data = [
        {"id": f"p{k}", "input": i, "output": o} for k, (i, o) in enumerate(pairs + pairs[:repeats])
    ]
    assert acme.post(f"/data/seed/{dataset}", {"data": data, "system_prompt": prompt}).is_success
    created = acme.post("/specify_questions", {"metrics": [*questions, *checks]})
    assert created.status_code == 200, created.text
    body: dict[str, Any] = {"seed_data_id": dataset}
    if latest is not None:
        body["pair_query"] = {"latest_n_pairs": latest}

    estimate = acme.post("/evaluate/estimate", body)
    assert estimate.status_code == 200, estimate.text
    bound = estimate.json()
    run = acme.post("/evaluate", body)

    assert run.status_code == 200, run.text
    usage = run.json()["usage"]
    assert usage["input_tokens"] <= bound["input_tokens_max"]
    assert usage["output_tokens"] <= bound["output_tokens_max"]
    assert usage["cost_usd"] <= bound["cost_usd_max"]
    assert bound["llm_calls"] <= usage["llm_calls"] <= bound["llm_calls"] * ATTEMPTS
    assert usage["cache_hits"] == bound["cached_calls"]
    assert bound["pairs"] == run.json()["pair_count"]
    assert json.dumps(bound)  # every figure is plain JSON
