"""The monthly limit under concurrency: many workers reserving at once against the embedded
DynamoDB server (which applies each conditional write atomically, as DynamoDB does)."""

from __future__ import annotations

import json
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest
from evalsvc.core.errors import OverLimit
from evalsvc.logic import spending
from evalsvc.spending.meter import Bound
from evalsvc.storage import ledger

from tests.conftest import point_service_at

MODEL = "openai:priced"
# $1 per million input tokens: a bound of 100,000 input tokens is $0.10.
PRICES = json.dumps({MODEL: {"input": 1, "output": 1}})
LIMIT = Decimal(1)
BOUND = Bound(calls=1, input_tokens_max=100_000, model=MODEL)
WORKERS = 24
ROUNDS = 6


@pytest.fixture
def priced(served_tables: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    point_service_at({"EVALSVC_PRICES": PRICES}, monkeypatch)


def test_workers_reserving_at_once_never_pass_the_limit(priced: None) -> None:
    spending.set_limit("busy", LIMIT)
    cost_max = BOUND.cost_max()
    assert cost_max == Decimal("0.1")
    admitted: list[Decimal] = []
    refused: list[OverLimit] = []
    lock = threading.Lock()
    in_flight = 0
    most_in_flight = Decimal(0)
    rng = random.Random(7)
    draws = [Decimal(rng.randint(0, 100_000)) for _ in range(WORKERS * ROUNDS)]

    def worker(k: int) -> None:
        nonlocal in_flight, most_in_flight
        for r in range(ROUNDS):
            # What the work will turn out to use: anything up to its bound.
            used = int(draws[k * ROUNDS + r])
            try:
                with spending.session("busy", "test", 60) as spend:
                    spend.guard(BOUND)
                    with lock:
                        in_flight += 1
                        committed = ledger.read_month("busy", spend.month).committed_usd
                        most_in_flight = max(most_in_flight, committed)
                    spend.meter.name_model(MODEL)
                    spend.meter.record(calls=1, input_tokens=used)
                    with lock:
                        in_flight -= 1
                        admitted.append(Decimal(used) / 1_000_000)
            except OverLimit as exc:
                with lock:
                    refused.append(exc)

    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(worker, range(WORKERS)))

    month = ledger.read_month("busy", spending.this_month())
    # Never past the limit: not what was committed at any moment, nor what was spent.
    assert most_in_flight <= LIMIT
    assert month.spent_usd == sum(admitted) <= LIMIT
    assert month.committed_usd == month.spent_usd  # every reservation settled
    assert month.reservations == {}
    assert month.usage.llm_calls == len(admitted)
    # Work was admitted until the room left was less than one call's bound, and then refused.
    assert refused and LIMIT - month.spent_usd < cost_max * 2
    assert len(admitted) + len(refused) == WORKERS * ROUNDS
    permanent = [e for e in refused if not e.transient]
    assert permanent and all("raise the limit" in e.message for e in permanent)
