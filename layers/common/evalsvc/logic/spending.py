"""Spending: the LLM usage of one request or one chunk of queued work, held to the request's
`max_cost_usd` and to the tenant's monthly limit, and added to the month when it ends.

    with spending.session(tenant, "POST /evaluate", seconds) as spend:
        ...                     every LLM made here meters into spend.meter; before each batch
                                of calls, its bound is shown to spend.guard, which refuses it
                                (400 over max_cost_usd, 429 past the monthly limit) or
                                reserves the most it can use (with or without a limit), and
                                tells `on_hold` (a job's chunk keeps the same hold)
    (on leaving)                what was used is added to the month in place of the
                                reservations, whatever happened; LLM metrics by route

Work killed before it leaves (a process killed mid-call) settles nothing: its reservations are
charged in full once they expire, at most its `seconds` plus RESERVATION_GRACE_SECONDS later
(storage.ledger), so no call the provider served goes unrecorded.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal

from aws_lambda_powertools.metrics import MetricUnit, single_metric

from evalsvc.errors import InvalidInput, OverLimit, SpendingUnbounded, Throttled
from evalsvc.identifiers import new_id
from evalsvc.models.usage import MonthUsageOut
from evalsvc.observability import logger
from evalsvc.settings import get_settings
from evalsvc.storage import ledger
from evalsvc.usage import Bound, Meter, Usage, metering

# Told of every hold before its calls are made: (reservation id, the most the calls can use).
OnHold = Callable[[str, Usage], None]

# How long a reservation outlives the work it was made for, when that work dies unsettled.
RESERVATION_GRACE_SECONDS = 300.0
# The longest any work runs (a Lambda function's limit): a reservation's life is its work's
# time left, at most this, plus the grace.
MAX_WORK_SECONDS = 900.0
METRICS_NAMESPACE = "EvalService"


# ASCII digits only (\d would take other scripts' digits).
_MONTH = re.compile(r"\A[0-9]{4}-(0[1-9]|1[0-2])\Z")


def this_month(at: float | None = None) -> str:
    """YYYY-MM of `at` (now), UTC."""
    return time.strftime("%Y-%m", time.gmtime(time.time() if at is None else at))


def dollars(amount: Decimal) -> str:
    """An amount for a message: to the cent, or to six places when under a cent."""
    return f"${amount:.2f}" if amount >= Decimal("0.01") or amount == 0 else f"${amount:.6f}"


@dataclass(frozen=True, slots=True)
class Limit:
    """The monthly limit a tenant is held to (`usd` None: none), and whether it is the default
    (EVALSVC_DEFAULT_MONTHLY_LIMIT_USD, for a tenant with no limit of its own)."""

    usd: Decimal | None
    is_default: bool = False

    def named(self) -> str:
        """The limit for a message: "the monthly limit of $X" and where it comes from."""
        if self.usd is None:
            return "no monthly limit"
        source = " (the default for a tenant without a limit of its own)" if self.is_default else ""
        return f"the monthly limit of {dollars(self.usd)}{source}"


def limit_in_force(own: ledger.OwnLimit | None) -> Limit:
    """The tenant's own limit (an amount, or the explicit choice of none); without one, the
    deployment's default."""
    if own is not None:
        return Limit(own.usd)
    default = get_settings().default_monthly_limit_usd
    return Limit(default, is_default=default is not None)


class Spending:
    """The usage of one request or chunk: its meter, its guard, its reservations."""

    def __init__(
        self,
        tenant: str,
        route: str,
        seconds: float,
        max_cost: Decimal | None = None,
        on_hold: OnHold | None = None,
    ) -> None:
        self.tenant = tenant
        self.route = route
        self.max_cost = max_cost
        self.on_hold = on_hold
        self.month = this_month()
        self.meter = Meter()
        life = min(max(seconds, 0.0), MAX_WORK_SECONDS) + RESERVATION_GRACE_SECONDS
        self._until = int(time.time() + life)
        self._reservations: list[tuple[str, Decimal]] = []
        self._holds: list[str] = []
        self._settled = False
        self._limit: Limit | None = None

    def limit_in_force(self) -> Limit:
        """The limit the tenant is held to, read once for the request or chunk."""
        if self._limit is None:
            self._limit = limit_in_force(ledger.limit_of(self.tenant))
        return self._limit

    def limit(self) -> Decimal | None:
        """The tenant's monthly limit (None: none), read once for the request or chunk."""
        return self.limit_in_force().usd

    def guard(self, bound: Bound) -> None:
        """Refuse the planned calls of `bound` before any is made, or reserve the most they
        can use (a tenant with a limit: only within it)."""
        cost_max = bound.cost_max()
        self.check_cap(bound)
        if bound.calls == 0:
            return
        limit = self.limit()
        if limit is not None and cost_max is None:
            raise _unbounded(self.limit_in_force(), bound.model)
        reservation = new_id("rs_")
        held = ledger.Reservation(cost_max, self._until, bound.most())
        if not self._reserve(reservation, held, limit):
            if limit is None:
                raise Throttled(
                    f"this tenant has {ledger.MAX_RESERVATIONS} pieces of LLM work in flight: "
                    "retry once some of it is done"
                )
            raise self._over_limit(cost_max or Decimal(0), limit)
        self._reservations.append((reservation, cost_max or Decimal(0)))
        self._holds.append(reservation)
        if self.on_hold is not None:
            self.on_hold(reservation, held.most)

    def holds(self) -> list[str]:
        """The ids of the reservations made so far."""
        return list(self._holds)

    def check_room(self, bound: Bound) -> None:
        """For work that will run later, in chunks that reserve for themselves: a 429 now when
        its bound does not fit what the monthly limit leaves (nothing is reserved)."""
        if bound.calls == 0:
            return
        limit = self.limit()
        if limit is None:
            return
        cost_max = bound.cost_max()
        if cost_max is None:
            raise _unbounded(self.limit_in_force(), bound.model)
        now = time.time()
        month = ledger.read_month(self.tenant, self.month).charged(now)
        if month.spent_usd + month.reserved_usd(now) + cost_max > limit:
            raise self._over_limit(cost_max, limit, month)

    def _over_limit(
        self, cost_max: Decimal, limit: Decimal, month: ledger.Month | None = None
    ) -> OverLimit:
        now = time.time()
        month = (month or ledger.read_month(self.tenant, self.month)).charged(now)
        spent, reserved = month.spent_usd, month.reserved_usd(now)
        return OverLimit(
            f"this work could cost up to {dollars(cost_max)}, and this month's LLM spending "
            f"is {dollars(spent)} with {dollars(reserved)} held by work in flight, against "
            f"{self.limit_in_force().named()}: "
            + (
                "retry once the work in flight is done, or select less"
                if spent + cost_max <= limit
                else "select less, or ask the operator to raise the limit"
            ),
            transient=spent + cost_max <= limit,
        )

    def _reserve(self, reservation: str, held: ledger.Reservation, limit: Decimal | None) -> bool:
        if ledger.reserve(self.tenant, self.month, reservation, held, limit):
            return True
        expired = ledger.read_month(self.tenant, self.month).expired(time.time())
        if not expired:
            return False
        ledger.charge_expired(self.tenant, self.month, expired)
        return ledger.reserve(self.tenant, self.month, reservation, held, limit)

    def check_cap(self, bound: Bound) -> None:
        """A 400 when the calls of `bound` could cost more than max_cost_usd, or have no
        price to bound them by."""
        cap = self.max_cost
        if cap is None:
            return
        cost_max = bound.cost_max()
        if bound.calls and cost_max is None:
            raise InvalidInput(
                f"max_cost_usd is {cap}, and the model {bound.model!r} has no price, so this "
                "run's cost cannot be bounded: drop max_cost_usd, or ask the operator to price "
                "the model (EVALSVC_PRICES)"
            )
        if cost_max is not None and cost_max > cap and self.route.startswith("worker"):
            raise InvalidInput(
                f"the evaluation stopped before passing its max_cost_usd: its next chunk could "
                f"cost up to {dollars(cost_max)}, and {dollars(cap)} of the cap is left (chunks "
                "done again after a timeout or throttling spent more than one run); evaluate "
                "again with a higher max_cost_usd"
            )
        if cost_max is not None and cost_max > cap:
            raise InvalidInput(
                f"this run could cost up to {dollars(cost_max)} (cost_usd_max), more than "
                f"max_cost_usd {dollars(cap)}: select fewer pairs or metrics, or raise "
                "max_cost_usd (POST /evaluate/estimate gives the figures)"
            )

    def usage(self) -> Usage:
        return self.meter.usage()

    def settle(self) -> None:
        """Add what was used to the month and release the reservations (once)."""
        if self._settled:
            return
        self._settled = True
        usage = self.meter.usage()
        if usage.empty and not self._reservations:
            return
        cost = usage.cost()
        first = self._reservations[0] if self._reservations else None
        ledger.settle(self.tenant, self.month, usage, cost, first)
        for rid, held in self._reservations[1:]:
            ledger.settle(self.tenant, self.month, Usage(), Decimal(0), (rid, held))
        if usage.llm_calls:
            emit(self.route, usage, cost)


def _unbounded(limit: Limit, model: str) -> SpendingUnbounded:
    return SpendingUnbounded(
        f"this tenant is held to {limit.named()}, and the model {model!r} has no price to hold "
        "LLM work to it: the operator must give it one in EVALSVC_PRICES"
    )


def emit(route: str, usage: Usage, cost: Decimal | None) -> None:
    """The LLM metrics of one request or chunk, by route."""
    figures = [
        ("LLMInputTokens", MetricUnit.Count, float(usage.input_tokens)),
        ("LLMOutputTokens", MetricUnit.Count, float(usage.output_tokens)),
    ]
    if cost is not None:
        figures.append(("LLMCostUSD", MetricUnit.NoUnit, float(cost)))
    for name, unit, value in figures:
        with single_metric(
            name=name, unit=unit, value=value, namespace=METRICS_NAMESPACE
        ) as metric:
            metric.add_dimension(name="route", value=route)


def set_limit(tenant: str, monthly_usd: Decimal) -> None:
    """The operator's: the most `tenant` may spend on LLM calls in a month, over the default."""
    _named(tenant)
    ledger.set_limit(tenant, ledger.OwnLimit(monthly_usd))


def set_unlimited(tenant: str) -> None:
    """The operator's explicit choice: `tenant` has no monthly limit, whatever the default."""
    _named(tenant)
    ledger.set_limit(tenant, ledger.OwnLimit(None))


def clear_limit(tenant: str) -> None:
    """The operator's: `tenant` has no limit of its own any more; the default applies."""
    _named(tenant)
    ledger.set_limit(tenant, None)


def _named(tenant: str) -> None:
    if not tenant.strip():
        raise InvalidInput("name the tenant")


def month_usage(tenant: str, month: str | None) -> MonthUsageOut:
    """The tenant's figures for `month` (YYYY-MM, UTC; None: this month)."""
    if month is None:
        month = this_month()
    elif not _MONTH.match(month):
        shown = month if len(month) <= 20 else month[:17] + "..."
        raise InvalidInput(
            f"month {shown!r} is not a month: give it as YYYY-MM (a four-digit year and a "
            "two-digit month 01-12), e.g. 2026-11"
        )
    # Any month can be asked for: one before the tenant's first spending, or still to come,
    # has nothing stored and answers zeros.
    own, stored = ledger.limit_and_month(tenant, month)
    limit = limit_in_force(own)
    now = time.time()
    # Work that died is charged in full when its reservation expires: counted as spent from
    # then on, whether or not the next reservation has written it yet.
    stored = stored.charged(now)
    cost = None if stored.unpriced_calls else float(stored.spent_usd)
    return MonthUsageOut(
        month=month,
        llm_calls=stored.usage.llm_calls,
        input_tokens=stored.usage.input_tokens,
        output_tokens=stored.usage.output_tokens,
        cost_usd=cost,
        limit_usd=None if limit.usd is None else float(limit.usd),
        limit_is_default=limit.is_default,
        reserved_usd=float(stored.reserved_usd(now)),
    )


@contextmanager
def session(
    tenant: str,
    route: str,
    seconds: float,
    max_cost: Decimal | None = None,
    on_hold: OnHold | None = None,
) -> Iterator[Spending]:
    """Meter and guard the LLM work of the block; settle it on leaving, whatever happened.
    `on_hold` is told of every reservation as it is made."""
    spend = Spending(tenant, route, seconds, max_cost, on_hold)
    try:
        with metering(spend.meter, spend.guard):
            yield spend
    finally:
        try:
            spend.settle()
        except Exception:
            # The work is done (or failed) either way: a reservation left unsettled expires.
            logger.exception("LLM usage could not be added to the month", extra={"route": route})
