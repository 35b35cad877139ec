"""Prices and usage arithmetic: the built-in table, EVALSVC_PRICES (and the refusal to start
on a malformed one), costs rounded up, bounds of planned calls, and the metering of attempts."""

from __future__ import annotations

import json
import re
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from evalsvc.core.deadlines import Deadline
from evalsvc.core.settings import Settings
from evalsvc.scoring.llm import LLM, Answer, InvalidAnswer, LLMFailed, RetryableError
from evalsvc.spending import prices as pricing
from evalsvc.spending.meter import (
    CALL_OVERHEAD_TOKENS,
    Meter,
    Usage,
    calls_bound,
    metering,
    text_bytes,
)
from evalsvc.spending.prices import (
    BUILT_IN,
    PRICES_AS_OF,
    Price,
    PricesInvalid,
    parse_prices,
    price_of,
)
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import point_service_at


def test_the_built_in_table_is_dated_and_names_the_models_the_readme_names() -> None:
    assert PRICES_AS_OF == "2026-11-26"
    section = (Path(__file__).parents[2] / "docs" / "cost.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:openai|bedrock):[^`\s]+)`", section))
    assert named == set(BUILT_IN)
    assert PRICES_AS_OF in section
    assert all(p.input >= 0 and p.output >= 0 for p in BUILT_IN.values())


def test_evalsvc_prices_adds_and_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    point_service_at(
        {
            "EVALSVC_PRICES": json.dumps(
                {
                    "openai:gpt-4o-mini": {"input": 1, "output": 2},
                    "openai:mine": {"input": 0, "output": 0},
                }
            )
        },
        monkeypatch,
    )

    assert price_of("openai:gpt-4o-mini") == Price(Decimal(1), Decimal(2))
    assert price_of("openai:mine") == Price(Decimal(0), Decimal(0))
    assert price_of("bedrock:amazon.nova-lite-v1:0") == BUILT_IN["bedrock:amazon.nova-lite-v1:0"]
    assert price_of("openai:unknown") is None


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("{", "not JSON"),
        ("[]", "JSON object"),
        ('{"m": 1}', "'m'"),
        ('{"m": {"input": 1}}', "exactly input and output"),
        ('{"m": {"input": 1, "output": 2, "cached": 3}}', "exactly input and output"),
        ('{"m": {"input": "1", "output": 2}}', "['m']['input'] must be a number"),
        ('{"m": {"input": true, "output": 2}}', "['m']['input'] must be a number"),
        ('{"m": {"input": 1, "output": -2}}', "['m']['output'] must be a finite number of 0"),
        ('{"m": {"input": 1, "output": NaN}}', "finite"),
        ('{"m": {"input": 1e300, "output": 2}}', "more than"),
        ('{"": {"input": 1, "output": 2}}', "model name"),
        ("[" * 100_000, "not JSON"),
    ],
)
def test_a_malformed_price_table_is_named(text: str, named: str) -> None:
    with pytest.raises(PricesInvalid) as raised:
        parse_prices(text)
    assert named in str(raised.value)


def test_a_malformed_price_table_stops_a_function_at_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalsvc.api.routes.evaluate import router
    from evalsvc.handlers.http import build_handler

    point_service_at({"EVALSVC_PRICES": '{"openai:x": {"input": -1, "output": 1}}'}, monkeypatch)

    with pytest.raises(PricesInvalid, match=r"EVALSVC_PRICES\['openai:x'\]\['input'\]"):
        build_handler(router)
    point_service_at({"EVALSVC_PRICES": ""}, monkeypatch)
    assert callable(build_handler(router))


def test_the_local_server_refuses_to_start_on_a_malformed_price_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Any
) -> None:
    from evalsvc_tools.cli import main

    point_service_at({"EVALSVC_PRICES": "not json"}, monkeypatch)

    assert main(["serve", "--data-dir", str(tmp_path), "--port", "0"]) == 2
    assert "EVALSVC_PRICES is not JSON" in capsys.readouterr().err
    assert not (tmp_path / "endpoint").exists()  # the store was never started


@given(
    st.decimals(min_value=0, max_value=1000, places=4),
    st.decimals(min_value=0, max_value=1000, places=4),
    st.integers(0, 10**9),
    st.integers(0, 10**9),
)
def test_a_cost_is_exact_to_a_pico_dollar_and_never_rounded_down(
    price_in: Decimal, price_out: Decimal, input_tokens: int, output_tokens: int
) -> None:
    cost = Price(price_in, price_out).cost(input_tokens, output_tokens)
    exact = (price_in * input_tokens + price_out * output_tokens) / 1_000_000
    assert exact <= cost < exact + Decimal("1e-12")
    assert cost == cost.quantize(pricing.COST_QUANTUM)


def test_usage_costs_nothing_without_tokens_and_null_without_a_price() -> None:
    assert Usage(cache_hits=5, model="openai:unknown").cost() == 0
    assert Usage(llm_calls=1, input_tokens=1, model="openai:unknown").cost() is None
    assert Usage(1, 0, 1_000_000, 1_000_000, "openai:gpt-4o-mini").cost() == Decimal("0.75")


@given(st.text(max_size=200))
def test_a_token_bound_covers_every_byte_sent(text: str) -> None:
    bound = calls_bound(3, text_bytes(text) * 3, 100, 2, 50)
    assert bound.input_tokens_max == 2 * (
        3 * len(text.encode("utf-8", "surrogatepass")) + 3 * CALL_OVERHEAD_TOKENS
    )
    assert bound.output_tokens_max == 2 * 3 * 100
    assert bound.output_tokens_expected == 150


# ---- metering every attempt --------------------------------------------------------------------


class _Script:
    name = "fake:model"

    def __init__(self, *steps: Any) -> None:
        self.steps = list(steps)

    def complete(self, *args: Any, **kwargs: Any) -> Answer:
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        return step  # type: ignore[no-any-return]


def _llm(provider: _Script, attempts: int = 4) -> LLM:
    settings = Settings(judge_retry_base_seconds=0.001, judge_max_attempts=attempts)
    return LLM(provider, settings, Deadline.after(30))


def _accept(value: Any) -> Any:
    if value != {"ok": True}:
        raise InvalidAnswer("not ok")
    return value


def test_every_attempt_is_a_call_and_its_tokens_are_the_providers() -> None:
    provider = _Script(
        RetryableError("throttled"),
        InvalidAnswer("no content", tokens=(100, 7)),
        Answer([{"ok": False}], (120, 9)),
        Answer([{"ok": True}], (130, 11)),
    )
    meter = Meter()
    with metering(meter):
        llm = _llm(provider)
    assert llm.ask("s", "u", {}, "n", _accept, max_tokens=64) == {"ok": True}

    assert meter.usage() == Usage(4, 0, 350, 27, "fake:model")


def test_an_answer_without_counts_is_metered_at_its_bound() -> None:
    llm = _llm(_Script(Answer([{"ok": True}], None)))

    llm.ask("system", "user ☃", {"type": "object"}, "name", _accept, max_tokens=64)

    sent = text_bytes("system", "user ☃", json.dumps({"type": "object"}), "name")
    assert llm.meter.usage() == Usage(1, 0, sent + CALL_OVERHEAD_TOKENS, 64, "fake:model")


def test_a_failed_ask_keeps_what_its_attempts_used() -> None:
    llm = _llm(_Script(*[Answer([], (10, 1))] * 2), attempts=2)

    with pytest.raises(LLMFailed):
        llm.ask("s", "u", {}, "n", _accept, max_tokens=64)

    assert llm.meter.usage() == Usage(2, 0, 20, 2, "fake:model")


def test_a_bound_covers_every_attempt() -> None:
    llm = _llm(_Script(), attempts=3)

    bound = llm.bound("s", "uu", {}, "n", 64, expected_output=10)

    sent = text_bytes("s", "uu", "{}", "n")
    assert bound.calls == 1 and bound.model == "fake:model"
    assert bound.input_tokens_max == 3 * (sent + CALL_OVERHEAD_TOKENS)
    assert bound.output_tokens_max == 3 * 64
    assert time.time() > 0


def test_a_call_that_timed_out_after_it_was_sent_is_counted_at_its_bound() -> None:
    provider = _Script(
        RetryableError("throttled"),  # refused: no work was done
        RetryableError("read timeout", billed=True),  # the model may have run
        Answer([{"ok": True}], (10, 2)),
    )
    llm = _llm(provider)

    llm.ask("s", "u", {}, "n", _accept, max_tokens=64)

    bound = text_bytes("s", "u", "{}", "n") + CALL_OVERHEAD_TOKENS
    assert llm.meter.usage() == Usage(3, 0, bound + 10, 64 + 2, "fake:model")
