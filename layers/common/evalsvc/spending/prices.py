"""What LLM tokens cost: the one price table (USD per million input and output tokens), by the
model as `EVALSVC_LLM` (or, for an embeddings model, `EVALSVC_EMBEDDINGS`) names it, and the
arithmetic of cost.

The built-in table holds list prices of the models the README names (on-demand, Bedrock in
us-east-1), as of PRICES_AS_OF; docs/design.md ("What a run costs") gives the sources. Prices
change: `EVALSVC_PRICES` (JSON `{"openai:gpt-4o-mini": {"input": 0.15, "output": 0.6}}`, the
template parameter `LLMPrices` when deployed) adds to the table and overrides its entries. A
model in neither has no price: its cost is null, never a guess.

Costs are exact decimals (DynamoDB numbers hold 38 digits), rounded up to COST_QUANTUM: a bound
stays a bound, and sums of costs stay exact.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from functools import cache
from typing import Any

from evalsvc.core.settings import get_settings

PRICES_AS_OF = "2026-11-26"

# The smallest amount a cost is counted in (a trillionth of a dollar).
COST_QUANTUM = Decimal("1e-12")
# The largest price accepted, per million tokens: far above any model's.
MAX_PRICE = Decimal(100_000)
MILLION = Decimal(1_000_000)


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: Decimal
    output: Decimal

    def cost(self, input_tokens: int, output_tokens: int) -> Decimal:
        """What the tokens cost, rounded up to COST_QUANTUM."""
        exact = (self.input * input_tokens + self.output * output_tokens) / MILLION
        return exact.quantize(COST_QUANTUM, rounding=ROUND_CEILING)


def _price(input_per_million: str, output_per_million: str) -> Price:
    return Price(Decimal(input_per_million), Decimal(output_per_million))


# List prices, USD per million tokens (input, output).
BUILT_IN: dict[str, Price] = {
    # OpenAI
    "openai:gpt-4o-mini": _price("0.15", "0.60"),
    "openai:gpt-4o": _price("2.50", "10.00"),
    "openai:gpt-4.1-nano": _price("0.10", "0.40"),
    "openai:gpt-4.1-mini": _price("0.40", "1.60"),
    "openai:gpt-4.1": _price("2.00", "8.00"),
    # Amazon Bedrock, on-demand
    "bedrock:amazon.nova-micro-v1:0": _price("0.035", "0.14"),
    "bedrock:amazon.nova-lite-v1:0": _price("0.06", "0.24"),
    "bedrock:amazon.nova-pro-v1:0": _price("0.80", "3.20"),
    "bedrock:anthropic.claude-3-haiku-20240307-v1:0": _price("0.25", "1.25"),
    "bedrock:anthropic.claude-3-5-haiku-20241022-v1:0": _price("0.80", "4.00"),
    "bedrock:us.anthropic.claude-3-5-haiku-20241022-v1:0": _price("0.80", "4.00"),
    "bedrock:meta.llama3-1-8b-instruct-v1:0": _price("0.22", "0.22"),
    "bedrock:meta.llama3-1-70b-instruct-v1:0": _price("0.72", "0.72"),
    # Embeddings models (EVALSVC_EMBEDDINGS): input tokens only
    "openai:text-embedding-3-small": _price("0.02", "0"),
    "openai:text-embedding-3-large": _price("0.13", "0"),
    "bedrock:amazon.titan-embed-text-v2:0": _price("0.02", "0"),
}


class PricesInvalid(ValueError):
    """EVALSVC_PRICES cannot be read; the message names the problem."""


def _per_million(model: str, side: str, value: Any) -> Decimal:
    where = f"EVALSVC_PRICES[{model!r}][{side!r}]"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PricesInvalid(f"{where} must be a number (USD per million tokens), not {value!r}")
    if not math.isfinite(value) or value < 0:
        raise PricesInvalid(f"{where} must be a finite number of 0 or more, not {value!r}")
    price = Decimal(str(value))
    if price > MAX_PRICE:
        raise PricesInvalid(f"{where} is {value}: more than {MAX_PRICE} per million tokens")
    return price


def parse_prices(text: str) -> dict[str, Price]:
    """The prices EVALSVC_PRICES gives (empty: none); PricesInvalid naming the problem."""
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise PricesInvalid(f"EVALSVC_PRICES is not JSON: {exc}") from None
    if not isinstance(document, dict):
        raise PricesInvalid(
            'EVALSVC_PRICES must be a JSON object like {"openai:gpt-4o-mini": '
            '{"input": 0.15, "output": 0.6}}'
        )
    prices = {}
    for model, entry in document.items():
        if not model.strip() or len(model) > 256:
            raise PricesInvalid(f"EVALSVC_PRICES has a model name {model!r}: use EVALSVC_LLM's")
        if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
            raise PricesInvalid(
                f"EVALSVC_PRICES[{model!r}] must be an object with exactly input and output "
                "(USD per million tokens)"
            )
        prices[model] = Price(
            _per_million(model, "input", entry["input"]),
            _per_million(model, "output", entry["output"]),
        )
    return prices


@cache
def _table(prices: str) -> dict[str, Price]:
    return {**BUILT_IN, **parse_prices(prices)}


def check_prices() -> None:
    """Read the price table now: PricesInvalid (at start, not on a request) when
    EVALSVC_PRICES is malformed."""
    _table(get_settings().prices)


def price_of(model: str) -> Price | None:
    """The price of `model` (as EVALSVC_LLM or EVALSVC_EMBEDDINGS names it); None when it has
    none."""
    return _table(get_settings().prices).get(model)


def usd(amount: Decimal | None) -> float | None:
    return None if amount is None else float(amount)
