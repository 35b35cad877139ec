"""LLM usage, cost and spending as the API shows them (E3)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from evalsvc.spending.meter import Bound, Usage
from evalsvc.spending.prices import usd

# The largest max_cost_usd a request may give.
MAX_COST_USD = 1_000_000.0


def max_cost_usd_field(estimate_route: str) -> Any:
    """The `max_cost_usd` field of a request that spends on an LLM, whose bound
    `estimate_route` gives."""
    return Field(
        default=None,
        gt=0,
        le=MAX_COST_USD,
        allow_inf_nan=False,
        description="Refuse (400, before any LLM call) when the run could cost more than this "
        f"(its cost_usd_max, as {estimate_route} gives it) or the model has no price",
    )


class LostWorkOut(BaseModel):
    """The part of a usage that is an estimate, not a count."""

    llm_calls: int = Field(description="Calls that may have been in flight")
    input_tokens: int = Field(description="The most input tokens they could use")
    output_tokens: int = Field(description="The most output tokens they could use")
    cost_usd: float | None = Field(description="What that could cost; null without a price")


class ModelUsageOut(BaseModel):
    """One model's part of a usage (a jury's judges, a judge and an embeddings model)."""

    model: str
    llm_calls: int
    cache_hits: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = Field(description="At this model's price; null without one")


class UsageOut(BaseModel):
    """What the LLM work of a request (or a queued result's chunks) used."""

    llm_calls: int = Field(description="LLM calls made, every attempt counted (retries too)")
    cache_hits: int = Field(description="Judge verdicts found in the judge cache (no call)")
    input_tokens: int = Field(description="Input tokens, as the provider counted them")
    output_tokens: int = Field(description="Output tokens, as the provider counted them")
    cost_usd: float | None = Field(
        description="What the tokens cost; 0 without LLM calls; null when the model has no price"
    )
    model: str | None = Field(description="The LLM (EVALSVC_LLM); null when none was used")
    lost_work: LostWorkOut | None = Field(
        default=None,
        description="Of the figures above, the part that is an estimate, not a count: the "
        "calls that were in flight when queued work was killed (while it runs, those in flight "
        "now), each counted at the most it could use, so that no call the provider may have "
        "served goes uncounted; null when there is none",
    )
    by_model: list[ModelUsageOut] | None = Field(
        default=None,
        description="When more than one model did the work (a jury's judges, E13; a judge and "
        "an embeddings model): each one's part, at its own price; absent otherwise",
    )

    @model_serializer(mode="wrap")
    def _without_absent_parts(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out: dict[str, Any] = handler(self)
        if out.get("by_model") is None:
            out.pop("by_model", None)
        return out


def usage_out(usage: Usage) -> UsageOut:
    lost = usage.lost()
    return UsageOut(
        by_model=[
            ModelUsageOut(
                model=part.model,
                llm_calls=part.llm_calls,
                cache_hits=part.cache_hits,
                input_tokens=part.input_tokens,
                output_tokens=part.output_tokens,
                cost_usd=usd(part.cost()),
            )
            for part in usage.shares
        ]
        or None,
        llm_calls=usage.llm_calls,
        cache_hits=usage.cache_hits,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cost_usd=usd(usage.cost()),
        model=usage.model or None,
        lost_work=None
        if lost is None
        else LostWorkOut(
            llm_calls=lost.llm_calls,
            input_tokens=lost.input_tokens,
            output_tokens=lost.output_tokens,
            cost_usd=usd(lost.cost()),
        ),
    )


class EstimateOut(BaseModel):
    """What POST /evaluate with the same body would cost, at most and as expected."""

    pairs: int = Field(description="Pairs the evaluation would score")
    llm_calls: int = Field(
        description="Model calls it would make (before any retry): the judge's, and the "
        "embeddings model's for embed: metrics"
    )
    cached_calls: int = Field(
        description="Calls the judge cache answers instead (no call, no cost): verdicts, and "
        "texts whose embeddings it holds"
    )
    input_tokens_max: int = Field(
        description="At most this many input tokens, every retry counted: a token is at least "
        "one byte of what is sent, plus what a provider adds around it"
    )
    output_tokens_max: int = Field(
        description="At most this many output tokens: every call sends max_tokens"
    )
    cost_usd_expected: float | None = Field(
        description="The expected cost (about 4 bytes a token, no retries); null without a price"
    )
    cost_usd_max: float | None = Field(
        description="The bound max_cost_usd and monthly limits are held to; null without a price"
    )
    model: str | None = Field(description="The judge model; null when no question needs one")


def estimate_out(pairs: int, bound: Bound) -> EstimateOut:
    return EstimateOut(
        pairs=pairs,
        llm_calls=bound.calls,
        cached_calls=bound.cached,
        input_tokens_max=bound.input_tokens_max,
        output_tokens_max=bound.output_tokens_max,
        cost_usd_expected=usd(bound.cost_expected()),
        cost_usd_max=usd(bound.cost_max()),
        model=bound.model or None,
    )


class MonthUsageOut(BaseModel):
    """A tenant's LLM usage and spending in one calendar month (UTC)."""

    month: str = Field(description="YYYY-MM")
    llm_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = Field(
        description="Spent this month; null when some of the month's calls had no price"
    )
    limit_usd: float | None = Field(
        description="The monthly limit in force; null when there is none"
    )
    limit_is_default: bool = Field(
        default=False,
        description="The limit is the deployment's default, the tenant having none of its own",
    )
    reserved_usd: float = Field(description="Held by LLM work in flight (its bound)")
