"""Spending: the LLM usage of one request or one chunk of queued work, held to the request's
`max_cost_usd` and to the tenant's monthly limit, and added to the month as its calls end.

    with spending.session(tenant, "POST /evaluate", seconds) as spend:
        ...                     every LLM made here meters into spend.meter; before each batch
                                of calls, its bound is shown to spend.guard, which refuses it
                                (400 over max_cost_usd, 429 when it cannot fit what the month
                                leaves) and holds the rooms of its first attempts; every
                                attempt takes a room (the most it can use, held in the month:
                                within the limit) before it is sent, and its usage is added to
                                the month (and to `copy`: a job's chunk) before the room is
                                given back (usage.Meter), a batch at a time
    (on leaving)                the rest is added and the rooms given back, whatever
                                happened; LLM metrics by route

Work killed before it leaves (a process killed mid-call) settles nothing: its reservation (the
rooms of the attempts in flight or not yet added, at most EVALSVC_JUDGE_CONCURRENCY of them) is
charged in full once it expires, at most its `seconds` plus RESERVATION_GRACE_SECONDS later, or
when its job completes (storage.ledger): no call the provider served goes unrecorded, and at most
the attempts in flight at the kill are charged without having been served.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from aws_lambda_powertools.metrics import MetricUnit, single_metric

from evalsvc.core.errors import InvalidInput, OverLimit, SpendingUnbounded, Throttled
from evalsvc.core.identifiers import new_id
from evalsvc.core.observability import logger
from evalsvc.core.settings import get_settings
from evalsvc.models.usage import MonthUsageOut
from evalsvc.spending.meter import Bound, Meter, Usage, metering
from evalsvc.storage import ledger

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


class Copy(Protocol):
    """Where else a session's usage is kept as its calls end (a job's chunk: what its result
    sums)."""

    def hold(self, reservation: str, month: str, most: Usage) -> None:
        """The most the session's attempts in flight or not yet added can use, held under its
        reservation until `settle` (a session killed leaves it: counted as lost work)."""
        ...

    def add(self, used: Usage) -> None:
        """Add what a batch of attempts used."""
        ...

    def settle(self, used: Usage, reservation: str | None) -> None:
        """Add the rest, and drop the hold of `reservation`."""
        ...


class Spending:
    """The usage of one request or chunk: its meter, its guard, and the keeper of its meter (a
    reservation in the month, holding the rooms of its attempts, and `copy`)."""

    def __init__(
        self,
        tenant: str,
        route: str,
        seconds: float,
        max_cost: Decimal | None = None,
        copy: Copy | None = None,
    ) -> None:
        self.tenant = tenant
        self.route = route
        self.max_cost = max_cost
        self.copy = copy
        self.month = this_month()
        self.meter = Meter(keeper=self, rooms_most=get_settings().judge_concurrency)
        life = min(max(seconds, 0.0), MAX_WORK_SECONDS) + RESERVATION_GRACE_SECONDS
        self._until = int(time.time() + life)
        self._settled = False
        self._limit: Limit | None = None
        # The keeper's state, changed by one write at a time.
        self._lock = threading.Lock()
        self._reservation: str | None = None
        self._writes = 0
        self._rooms = 0
        self._room = Usage()
        self._room_usd: Decimal | None = Decimal(0)
        # Given by the meter, not yet added to the month, or to the copy.
        self._month_due = Usage()
        self._copy_due = Usage()
        # The effect of a write whose answer never came (None: none), checked before the next.
        self._in_doubt: Callable[[], None] | None = None
        # Every reservation made (a reservation gone is replaced).
        self._reservations: list[str] = []
        # The bounds the guard admitted so far (a judge's and an embeddings model's batches of
        # one scoring): max_cost_usd holds their sum.
        self._guarded = Bound()

    def limit_in_force(self) -> Limit:
        """The limit the tenant is held to, read once for the request or chunk."""
        if self._limit is None:
            self._limit = limit_in_force(ledger.limit_of(self.tenant))
        return self._limit

    def limit(self) -> Decimal | None:
        """The tenant's monthly limit (None: none), read once for the request or chunk."""
        return self.limit_in_force().usd

    def guard(self, bound: Bound) -> None:
        """Refuse the planned calls of `bound` before any is made when they could pass the
        request's cap (with the batches admitted before them), or (a tenant with a limit) could
        not fit what the month leaves; then hold the rooms of their first attempts."""
        if bound.calls == 0:
            self.check_cap(bound)
            return
        guarded = self._guarded + bound
        self.check_cap(guarded)
        limit = self.limit()
        if limit is not None:
            cost_max = bound.cost_max()
            if cost_max is None:
                raise _unbounded(self.limit_in_force(), bound.unpriced() or bound.model)
            self._admit(cost_max, limit)
        self._guarded = guarded
        self.meter.prepare(bound.concurrent(), bound.attempt_most())

    def _admit(self, cost_max: Decimal, limit: Decimal) -> None:
        """An OverLimit unless `cost_max` fits what the month leaves: its spending, and what
        work in flight holds, besides this session's own rooms."""
        now = time.time()
        stored = ledger.read_month(self.tenant, self.month)
        month = stored.charged(now)
        own = (
            stored.reservations[self._reservation].usd or Decimal(0)
            if self._reservation in stored.reservations
            else Decimal(0)
        )
        if month.spent_usd + month.reserved_usd(now) - own + cost_max <= limit:
            return
        expired = stored.expired(now)
        if expired:
            # Written now, so that the month holds what a read of it shows.
            ledger.charge_expired(self.tenant, self.month, expired)
        raise self._over_limit(cost_max, limit, month)

    # ---- the meter's keeper ----------------------------------------------------------------

    def hold(self, rooms: int, room: Usage) -> None:
        """Hold `rooms` rooms of `room` in the month (within the limit) and on the copy."""
        with self._lock:
            limit = self.limit()
            room_usd = room.cost()
            if limit is not None and room_usd is None:
                raise _unbounded(self.limit_in_force(), room.model)
            self._settle_doubt()
            target = room.times(rooms)
            target_usd = None if room_usd is None else room_usd * rooms
            if self._reservation is None or not self._grow(target, target_usd, limit):
                self._reserve(target, target_usd, limit)
            self._rooms, self._room, self._room_usd = rooms, room, room_usd
            if self.copy is not None and self._reservation is not None:
                self.copy.hold(self._reservation, self.month, target)

    def _grow(self, target: Usage, target_usd: Decimal | None, limit: Decimal | None) -> bool:
        """Grow the standing reservation to `target`: False when it is gone (a new one is
        needed); OverLimit when the limit leaves no room."""
        assert self._reservation is not None
        held = self._room.times(self._rooms)
        more = Usage(
            target.llm_calls - held.llm_calls,
            0,
            target.input_tokens - held.input_tokens,
            target.output_tokens - held.output_tokens,
        )
        held_usd = (self._room_usd or Decimal(0)) * self._rooms
        more_usd = None if target_usd is None else target_usd - held_usd
        reservation = self._reservation
        writes = self._writes
        # Whether a write whose answer never came was applied is read before the next.
        self._in_doubt = lambda: None
        grown = ledger.grow(
            self.tenant,
            self.month,
            reservation,
            writes,
            ledger.Reservation(more_usd, self._until, more),
            limit,
        )
        self._in_doubt = None
        if grown is None:
            self._reservation = None
            return False
        if not grown:
            raise self._over_limit(more_usd or Decimal(0), limit or Decimal(0), next_calls=True)
        self._writes = writes + 1
        return True

    def _reserve(self, target: Usage, target_usd: Decimal | None, limit: Decimal | None) -> None:
        reservation = new_id("rs_")
        held = ledger.Reservation(target_usd, self._until, target)
        if not ledger.reserve(self.tenant, self.month, reservation, held, limit):
            expired = ledger.read_month(self.tenant, self.month).expired(time.time())
            if expired:
                ledger.charge_expired(self.tenant, self.month, expired)
            if not expired or not ledger.reserve(self.tenant, self.month, reservation, held, limit):
                if limit is None:
                    raise Throttled(
                        f"this tenant has {ledger.MAX_RESERVATIONS} pieces of LLM work in "
                        "flight: retry once some of it is done"
                    )
                raise self._over_limit(target_usd or Decimal(0), limit, next_calls=True)
        self._reservation, self._writes = reservation, 0
        self._reservations.append(reservation)

    def keep(self, used: Usage, rooms: int) -> int:
        """Add `used` (with whatever was not added before) to the copy and to the month, the
        freed rooms kept while the limit allows: the rooms held now."""
        with self._lock:
            self._settle_doubt()
            self._month_due = self._month_due + used
            self._copy_due = self._copy_due + used
            if self.copy is not None and not self._copy_due.empty:
                self.copy.add(self._copy_due)
            self._copy_due = Usage()
            if self._reservation is None:
                # Gone (charged as dead while this work ran on): added without one.
                ledger.settle(
                    self.tenant, self.month, self._month_due, self._month_due.cost(), None
                )
                self._month_due = Usage()
                self._rooms = 0
                return 0
            writes = self._writes
            freed = min(rooms, self._rooms)
            released_usd = None if self._room_usd is None else self._room_usd * freed

            def added() -> None:
                self._month_due = Usage()

            # Whether a write whose answer never came was applied is read before the next.
            self._in_doubt = added
            outcome = ledger.record(
                self.tenant,
                self.month,
                self._reservation,
                writes,
                self._month_due,
                self._month_due.cost(),
                ledger.Reservation(released_usd, self._until, self._room.times(freed)),
                self.limit(),
            )
            self._in_doubt = None
            added()
            if outcome is ledger.Recorded.UNRESERVED:
                self._reservation, self._rooms = None, 0
                return 0
            self._writes = writes + 1
            if outcome is ledger.Recorded.RELEASED:
                self._rooms -= freed
                if self.copy is not None:
                    self.copy.hold(self._reservation, self.month, self._room.times(self._rooms))
            return self._rooms

    def _settle_doubt(self) -> None:
        """Before a write: if the last one's answer never came, read whether it was applied
        (then what it added is not due any more), and what the reservation holds."""
        if self._in_doubt is None or self._reservation is None:
            self._in_doubt = None
            return
        stored = ledger.reservation_of(self.tenant, self.month, self._reservation)
        if stored is None:
            self._reservation, self._rooms = None, 0
        else:
            if stored.writes == self._writes + 1:
                self._in_doubt()
            elif stored.writes != self._writes:
                logger.warning(
                    "a reservation's writes are not those its work made",
                    extra={"reservation": self._reservation, "writes": stored.writes},
                )
            # The rooms as stored (every room is alike: one call each).
            self._writes = stored.writes
            self._rooms = stored.most.llm_calls
            if self._rooms:
                most = stored.most
                self._room = Usage(
                    1,
                    0,
                    most.input_tokens // self._rooms,
                    most.output_tokens // self._rooms,
                    self._room.model,
                )
                self._room_usd = None if stored.usd is None else stored.usd / self._rooms
        self._in_doubt = None

    # ---- the limit ---------------------------------------------------------------------------

    def check_room(self, bound: Bound) -> None:
        """For work that will run later, in chunks that hold for themselves: a 429 now when
        its bound does not fit what the monthly limit leaves (nothing is held)."""
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
        self,
        cost_max: Decimal,
        limit: Decimal,
        month: ledger.Month | None = None,
        *,
        next_calls: bool = False,
    ) -> OverLimit:
        now = time.time()
        month = (month or ledger.read_month(self.tenant, self.month)).charged(now)
        spent, reserved = month.spent_usd, month.reserved_usd(now)
        what = "this work's next calls" if next_calls else "this work"
        return OverLimit(
            f"{what} could cost up to {dollars(cost_max)}, and this month's LLM spending "
            f"is {dollars(spent)} with {dollars(reserved)} held by work in flight, against "
            f"{self.limit_in_force().named()}: "
            + (
                "retry once the work in flight is done, or select less"
                if spent + cost_max <= limit
                else "select less, or ask the operator to raise the limit"
            ),
            transient=spent + cost_max <= limit,
        )

    def check_cap(self, bound: Bound) -> None:
        """A 400 when the calls of `bound` could cost more than max_cost_usd, or have no
        price to bound them by."""
        cap = self.max_cost
        if cap is None:
            return
        cost_max = bound.cost_max()
        if bound.calls and cost_max is None:
            raise InvalidInput(
                f"max_cost_usd is {cap}, and the model {bound.unpriced() or bound.model!r} has "
                "no price, so this run's cost cannot be bounded: drop max_cost_usd, or ask the "
                "operator to price the model (EVALSVC_PRICES)"
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
        """Add what was not added yet to the month (and the copy), and give back the rooms
        (once)."""
        with self._lock:
            if self._settled:
                return
            self._settled = True
            failure: Exception | None = None
            try:
                self._settle_doubt()
            except Exception as exc:
                failure = exc
            rest = self.meter.unkept()
            month_rest, copy_rest = rest + self._month_due, rest + self._copy_due
            self._month_due = self._copy_due = Usage()
            try:
                standing = None
                if self._reservation is not None:
                    held = (self._room_usd or Decimal(0)) * self._rooms
                    standing = (self._reservation, self._writes, held)
                if standing is not None or not month_rest.empty:
                    ledger.settle(self.tenant, self.month, month_rest, month_rest.cost(), standing)
                # An attempt ending after this (none should) is added without a reservation.
                self._reservation, self._rooms = None, 0
            except Exception as exc:
                failure = exc
            if self.copy is not None and (self._reservations or not copy_rest.empty):
                for reservation in self._reservations[:-1]:
                    self.copy.settle(Usage(), reservation)
                last = self._reservations[-1] if self._reservations else None
                self.copy.settle(copy_rest, last)
            if failure is not None:
                raise failure
        usage = self.meter.usage()
        if usage.llm_calls:
            emit(self.route, usage, usage.cost())


def charge_lost_work(tenant: str, holds: Sequence[tuple[str, str]]) -> None:
    """Work that completed with these holds standing ((month, reservation) each): the
    deliveries that made them were killed, so their reservations are charged now, as the
    work's result counts them, rather than when they expire. Best effort: an expiry charges
    them all the same."""
    months: dict[str, list[str]] = {}
    for month, reservation in holds:
        months.setdefault(month if _MONTH.match(month) else this_month(), []).append(reservation)
    for month, reservations in months.items():
        try:
            ledger.charge_now(tenant, month, reservations)
        except Exception:
            logger.exception("lost work could not be charged now: it will be when it expires")


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
    copy: Copy | None = None,
) -> Iterator[Spending]:
    """Meter and guard the LLM work of the block, keeping its usage (in the month, and in
    `copy`) as its calls end; settle the rest on leaving, whatever happened."""
    spend = Spending(tenant, route, seconds, max_cost, copy)
    try:
        with metering(spend.meter, spend.guard):
            yield spend
    finally:
        try:
            spend.settle()
        except Exception:
            # The work is done (or failed) either way: a reservation left unsettled expires.
            logger.exception("LLM usage could not be added to the month", extra={"route": route})
