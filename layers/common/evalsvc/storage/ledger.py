"""The monthly ledger: each tenant's LLM usage and spending by calendar month (UTC), its monthly
limit, and the reservations of work in flight.

    pk          sk                  what
    T#<tenant>  limit               limit_pusd (set by the operator), or unlimited = true (the
                                    operator's explicit choice of no limit); no item: the
                                    tenant has no limit of its own (the default applies)
    T#<tenant>  M#<YYYY-MM>         llm_calls, cache_hits, input_tokens, output_tokens,
                                    spent_pusd, unpriced_calls (calls of a model with no price),
                                    reserved_pusd, committed_pusd (spent + reserved), and
                                    reservations: {<id>: {"pusd": amount, "until": epoch s,
                                    "calls", "in", "out": the most the work's attempts in
                                    flight (its rooms) can use, "n": its writes so far,
                                    "unpriced": 1 for a model with no price}}

Amounts are whole pico-dollars (10^-12 USD, what a cost is rounded up to): sums stay exact.

Every piece of LLM work (a request, a chunk's delivery) holds one reservation while it runs,
with or without a limit: the rooms of its attempts in flight (usage.Meter), the most each can
use. Holding more is one conditional update of the month (`reserve`, then `grow`): with a
limit, it adds its amount to committed_pusd only while committed_pusd stays within the limit,
so spending cannot pass the limit however many workers hold at once. As attempts end, what
they used is recorded (`record`), a batch at a time: added to the month's spending, their
rooms kept for the next attempts (the spending added to committed_pusd only within the limit)
or, at the limit, given back. Settling records the rest and gives back every room.

A reservation whose work died (killed mid-call: nothing settles it) is charged in full when it
has expired (`until`), or as soon as its job completes (`charge_now`): its rooms, the most the
attempts not recorded can have used, so what the provider may have served is never left
uncounted, and no more than those attempts is. The next reservation that finds no room charges
expired ones, and a read of the month counts them as spent before they are. The map of
reservations is bounded (MAX_RESERVATIONS), and so is the item.

Each write of a reservation's work names the entry's write count it follows (`n`), so a write
retried after its answer was lost is found applied and not applied twice. A write that finds
its reservation gone (charged as dead while the work still ran: a duplicate delivery) adds
what it used without one: counted twice at worst, never missed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

from botocore.exceptions import ClientError

from evalsvc.core.settings import get_settings
from evalsvc.spending.meter import Usage
from evalsvc.spending.prices import COST_QUANTUM
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, error_code, n, s

# Reservations in flight for one tenant and month at most (each ~60 bytes of the item).
MAX_RESERVATIONS = 2_000
LIMIT_SK = "limit"


def _table() -> str:
    return get_settings().usage_table


def _pk(tenant: str) -> str:
    return f"T#{tenant}"


def _month_key(tenant: str, month: str) -> Item:
    return {"pk": s(_pk(tenant)), "sk": s(f"M#{month}")}


def _usd(value: Decimal) -> dict[str, str]:
    """Dollars as a whole number of pico-dollars (costs are counted in COST_QUANTUM)."""
    return n(int((value / COST_QUANTUM).to_integral_value(rounding=ROUND_CEILING)))


def _get_usd(item: Item, name: str) -> Decimal:
    value = item.get(name)
    return Decimal(value["N"]) * COST_QUANTUM if value is not None else Decimal(0)


@dataclass(frozen=True, slots=True)
class Reservation:
    """The most a piece of LLM work in flight can use (`usd` None: its model has no price),
    held until `until` (epoch seconds)."""

    usd: Decimal | None
    until: int
    most: Usage = field(default_factory=Usage)
    # The entry's writes so far (each write of the work names the count it follows).
    writes: int = 0


@dataclass(slots=True)
class Month:
    """A tenant's month as stored."""

    month: str
    usage: Usage = field(default_factory=Usage)
    spent_usd: Decimal = Decimal(0)
    unpriced_calls: int = 0
    committed_usd: Decimal = Decimal(0)
    # Unexpired reservations, and expired ones not yet charged.
    reservations: dict[str, Reservation] = field(default_factory=dict)

    def reserved_usd(self, now: float) -> Decimal:
        """What unexpired reservations hold."""
        held = (r.usd or Decimal(0) for r in self.reservations.values() if r.until > now)
        return sum(held, Decimal(0))

    def expired(self, now: float) -> dict[str, Reservation]:
        """Reservations of work that died, to be charged in full."""
        return {rid: r for rid, r in self.reservations.items() if r.until <= now}

    def charged(self, now: float) -> Month:
        """The month as it stands once its expired reservations are charged (as a read sees it,
        whether or not they were written yet)."""
        month = Month(
            self.month, self.usage, self.spent_usd, self.unpriced_calls, self.committed_usd
        )
        for rid, reservation in self.reservations.items():
            if reservation.until > now:
                month.reservations[rid] = reservation
                continue
            month.usage = month.usage + reservation.most
            if reservation.usd is None:
                month.unpriced_calls += reservation.most.llm_calls
            else:
                month.spent_usd += reservation.usd
        return month


def _month_from(month: str, item: Item | None) -> Month:
    if item is None:
        return Month(month)
    reservations = {
        rid: _reservation_from(value["M"])
        for rid, value in item.get("reservations", {}).get("M", {}).items()
    }
    return Month(
        month,
        Usage(
            dynamo.get_n(item, "llm_calls"),
            dynamo.get_n(item, "cache_hits"),
            dynamo.get_n(item, "input_tokens"),
            dynamo.get_n(item, "output_tokens"),
        ),
        _get_usd(item, "spent_pusd"),
        dynamo.get_n(item, "unpriced_calls"),
        _get_usd(item, "committed_pusd"),
        reservations,
    )


def _reservation_from(value: Item) -> Reservation:
    unpriced = "unpriced" in value
    return Reservation(
        None if unpriced else Decimal(value["pusd"]["N"]) * COST_QUANTUM,
        int(value["until"]["N"]),
        Usage(
            dynamo.get_n(value, "calls"),
            0,
            dynamo.get_n(value, "in"),
            dynamo.get_n(value, "out"),
        ),
        dynamo.get_n(value, "n"),
    )


# ---- the limit ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OwnLimit:
    """A monthly limit the operator set for one tenant: `usd`, or None for the explicit choice
    of no limit."""

    usd: Decimal | None


def set_limit(tenant: str, limit: OwnLimit | None) -> None:
    """Set the tenant's own monthly limit (None: it has none of its own)."""
    key = {"pk": s(_pk(tenant)), "sk": s(LIMIT_SK)}
    if limit is None:
        dynamo.call("delete_item", TableName=_table(), Key=key)
    elif limit.usd is None:
        dynamo.call("put_item", TableName=_table(), Item={**key, "unlimited": {"BOOL": True}})
    else:
        dynamo.call("put_item", TableName=_table(), Item={**key, "limit_pusd": _usd(limit.usd)})


def _own_limit(item: Item | None) -> OwnLimit | None:
    if item is None:
        return None
    if "limit_pusd" in item:
        return OwnLimit(_get_usd(item, "limit_pusd"))
    if item.get("unlimited", {}).get("BOOL") is True:
        return OwnLimit(None)
    return None


def limit_and_month(tenant: str, month: str) -> tuple[OwnLimit | None, Month]:
    """The tenant's own limit (None: none of its own) and its month, in one read."""
    limit_key = {"pk": s(_pk(tenant)), "sk": s(LIMIT_SK)}
    month_key = _month_key(tenant, month)
    limit_item: Item | None = None
    month_item: Item | None = None
    for item in dynamo.batch_get(_table(), [limit_key, month_key]):
        if item["sk"]["S"] == LIMIT_SK:
            limit_item = item
        else:
            month_item = item
    return _own_limit(limit_item), _month_from(month, month_item)


def limit_of(tenant: str) -> OwnLimit | None:
    """The tenant's own limit; None when it has none of its own."""
    item = dynamo.get_item(_table(), {"pk": s(_pk(tenant)), "sk": s(LIMIT_SK)}, consistent=False)
    return _own_limit(item)


# ---- reservations ------------------------------------------------------------------------------


def reserve(
    tenant: str,
    month: str,
    reservation: str,
    held: Reservation,
    limit: Decimal | None,
) -> bool:
    """Hold `held` of the month for `reservation`: with a `limit`, only if it stays within it
    with everything committed. False when it would not, or MAX_RESERVATIONS are in flight."""
    usd = held.usd or Decimal(0)
    entry: Item = {
        "pusd": _usd(usd),
        "until": n(held.until),
        "calls": n(held.most.llm_calls),
        "in": n(held.most.input_tokens),
        "out": n(held.most.output_tokens),
        "n": n(0),
        **({"unpriced": n(1)} if held.usd is None else {}),
    }
    room = ""
    values: Item = {":r": {"M": entry}, ":usd": _usd(usd), ":most": n(MAX_RESERVATIONS)}
    if limit is not None:
        headroom = limit - usd
        if headroom < 0:
            return False
        room = "(attribute_not_exists(committed_pusd) OR committed_pusd <= :room) AND "
        values[":room"] = _usd(headroom)
    kwargs: Item = {
        "TableName": _table(),
        "Key": _month_key(tenant, month),
        "UpdateExpression": "SET reservations.#r = :r ADD committed_pusd :usd, reserved_pusd :usd",
        "ConditionExpression": room
        + "(attribute_not_exists(reservations) OR size(reservations) < :most) "
        "AND attribute_not_exists(reservations.#r)",
        "ExpressionAttributeNames": {"#r": reservation},
        "ExpressionAttributeValues": values,
    }
    for _ in range(2):
        try:
            dynamo.call("update_item", **kwargs)
            return True
        except ClientError as exc:
            if dynamo.failed_conditions(exc) is not None:
                # A retry of a write that was applied (its answer lost) finds its own entry.
                return reservation in read_month(tenant, month).reservations
            # A month without a reservation yet has no map to hold one: start it, once.
            if error_code(exc) != "ValidationException":
                raise
        dynamo.call(
            "update_item",
            TableName=_table(),
            Key=_month_key(tenant, month),
            UpdateExpression="SET reservations = if_not_exists(reservations, :none)",
            ExpressionAttributeValues={":none": {"M": {}}},
        )
    return False


def charge_expired(tenant: str, month: str, expired: Mapping[str, Reservation]) -> None:
    """Charge in full reservations that expired (their work died before it settled), each
    once, as read (one written since is left for later): what they held moves from reserved
    to spent, with the most calls and tokens."""
    for rid, reservation in expired.items():
        most = reservation.most
        adds = {
            "llm_calls": n(most.llm_calls),
            "input_tokens": n(most.input_tokens),
            "output_tokens": n(most.output_tokens),
            "reserved_pusd": _usd(-(reservation.usd or Decimal(0))),
        }
        if reservation.usd is None:
            adds["unpriced_calls"] = n(most.llm_calls)
        else:
            adds["spent_pusd"] = _usd(reservation.usd)
        _remove(tenant, month, rid, reservation.writes, adds)


def _remove(
    tenant: str, month: str, reservation: str, writes: int, adds: Mapping[str, dict[str, str]]
) -> bool:
    """Remove a reservation at write number `writes`, adding `adds` to the month's counters in
    the same write: False when it is gone, or at another write."""
    done = dynamo.conditional(
        "update_item",
        TableName=_table(),
        Key=_month_key(tenant, month),
        UpdateExpression="REMOVE reservations.#r ADD "
        + ", ".join(f"{name} :{name}" for name in adds),
        ConditionExpression="reservations.#r.#n = :writes",
        ExpressionAttributeNames={"#r": reservation, "#n": "n"},
        ExpressionAttributeValues={
            **{f":{name}": value for name, value in adds.items()},
            ":writes": n(writes),
        },
    )
    return done is not None


def charge_now(tenant: str, month: str, reservations: Sequence[str]) -> None:
    """Charge in full, now, the `reservations` of work known to have died (a job completed
    without them settling), those still standing; an expiry would charge them the same."""
    stored = read_month(tenant, month).reservations
    charge_expired(tenant, month, {rid: stored[rid] for rid in reservations if rid in stored})


def read_month(tenant: str, month: str) -> Month:
    item = dynamo.get_item(_table(), _month_key(tenant, month))
    return _month_from(month, item)


# ---- the writes of work that holds a reservation ----------------------------------------------

# The entry's fields as a write names them (`in` is a reserved word of DynamoDB's expressions).
_ENTRY_NAMES = {"#n": "n", "#p": "pusd", "#c": "calls", "#i": "in", "#o": "out"}


class StaleWrites(Exception):
    """A write named a write number its reservation is no longer at (an earlier write whose
    answer was lost was applied): read the entry again."""


class Recorded(enum.Enum):
    """What recording a batch did with the rooms it freed."""

    KEPT = "kept"  # held for the next attempts
    RELEASED = "released"  # given back: the limit leaves no room to keep them
    UNRESERVED = "unreserved"  # the reservation was gone: the usage added without it


def _used(usage: Usage, cost: Decimal | None) -> dict[str, dict[str, str]]:
    """The month's counters a usage adds to (`cost` None: its model has no price)."""
    adds = {
        "llm_calls": n(usage.llm_calls),
        "cache_hits": n(usage.cache_hits),
        "input_tokens": n(usage.input_tokens),
        "output_tokens": n(usage.output_tokens),
    }
    if cost is None:
        adds["unpriced_calls"] = n(usage.llm_calls)
    else:
        adds["spent_pusd"] = _usd(cost)
    return adds


def _entry_write(
    tenant: str,
    month: str,
    reservation: str,
    writes: int,
    *,
    sets: str,
    adds: Mapping[str, dict[str, str]],
    values: Item,
    condition: str = "",
) -> bool | None:
    """One write of a reservation's entry, following its write number `writes` (and setting the
    next): True when applied (a retry of this very write included), False when `condition`
    was false, None when the entry is gone; StaleWrites when the entry is at another write."""
    named = {k: v for k, v in _ENTRY_NAMES.items() if k == "#n" or k in sets}
    try:
        dynamo.call(
            "update_item",
            TableName=_table(),
            Key=_month_key(tenant, month),
            UpdateExpression=f"SET reservations.#r.#n = :next{sets} ADD "
            + ", ".join(f"{name} :{name}" for name in adds),
            ConditionExpression="reservations.#r.#n = :writes" + condition,
            ExpressionAttributeNames={"#r": reservation, **named},
            ExpressionAttributeValues={
                **{f":{name}": value for name, value in adds.items()},
                **values,
                ":writes": n(writes),
                ":next": n(writes + 1),
            },
        )
        return True
    except ClientError as exc:
        if dynamo.failed_conditions(exc) is None:
            raise
    stored = read_month(tenant, month).reservations.get(reservation)
    if stored is None:
        return None
    if stored.writes == writes + 1:
        return True  # this very write, retried after its answer was lost
    if stored.writes != writes:
        raise StaleWrites(reservation)
    return False


def _room_condition(limit: Decimal | None, amount: Decimal, values: Item) -> str | None:
    """The condition that committing `amount` more stays within `limit` ("" without a limit,
    or for no more); None when it cannot."""
    if limit is None or amount <= 0:
        return ""
    headroom = limit - amount
    if headroom < 0:
        return None
    values[":room"] = _usd(headroom)
    return " AND (attribute_not_exists(committed_pusd) OR committed_pusd <= :room)"


def grow(
    tenant: str,
    month: str,
    reservation: str,
    writes: int,
    more: Reservation,
    limit: Decimal | None,
) -> bool | None:
    """Hold `more` of the month for a standing reservation (its write number `writes`): with a
    `limit`, only within it. False when it would not fit, None when the reservation is gone."""
    usd = more.usd or Decimal(0)
    values: Item = {
        ":usd": _usd(usd),
        ":calls": n(more.most.llm_calls),
        ":in": n(more.most.input_tokens),
        ":out": n(more.most.output_tokens),
    }
    condition = _room_condition(limit, usd, values)
    if condition is None:
        return False
    return _entry_write(
        tenant,
        month,
        reservation,
        writes,
        sets=", reservations.#r.#p = reservations.#r.#p + :usd, "
        "reservations.#r.#c = reservations.#r.#c + :calls, "
        "reservations.#r.#i = reservations.#r.#i + :in, "
        "reservations.#r.#o = reservations.#r.#o + :out",
        adds={"committed_pusd": _usd(usd), "reserved_pusd": _usd(usd)},
        values=values,
        condition=condition,
    )


def record(
    tenant: str,
    month: str,
    reservation: str,
    writes: int,
    used: Usage,
    cost: Decimal | None,
    rooms: Reservation,
    limit: Decimal | None,
) -> Recorded:
    """Add what a batch of attempts used (`cost` None: no price) to the month, against the
    reservation that held their `rooms` (its write number `writes`): the rooms kept for the
    next attempts when the spending fits the `limit` with everything committed, else given
    back. A reservation gone (charged as dead while its work ran on) adds it without one. The
    caller's next write follows `writes + 1`, whatever this one did."""
    adds = _used(used, cost)
    spent = cost or Decimal(0)
    values: Item = {}
    condition = _room_condition(limit, spent, values)
    if condition is not None:
        applied = _entry_write(
            tenant,
            month,
            reservation,
            writes,
            sets="",
            adds={**adds, "committed_pusd": _usd(spent)},
            values=values,
            condition=condition,
        )
        if applied is None:
            return _unreserved(tenant, month, adds, spent)
        if applied:
            return Recorded.KEPT
    usd = rooms.usd or Decimal(0)
    released = _entry_write(
        tenant,
        month,
        reservation,
        writes,
        sets=", reservations.#r.#p = reservations.#r.#p - :usd, "
        "reservations.#r.#c = reservations.#r.#c - :calls, "
        "reservations.#r.#i = reservations.#r.#i - :in, "
        "reservations.#r.#o = reservations.#r.#o - :out",
        adds={**adds, "committed_pusd": _usd(spent - usd), "reserved_pusd": _usd(-usd)},
        values={
            ":usd": _usd(usd),
            ":calls": n(rooms.most.llm_calls),
            ":in": n(rooms.most.input_tokens),
            ":out": n(rooms.most.output_tokens),
        },
    )
    if released is None:
        return _unreserved(tenant, month, adds, spent)
    return Recorded.RELEASED


def _unreserved(
    tenant: str, month: str, adds: Mapping[str, dict[str, str]], spent: Decimal
) -> Recorded:
    adds = {**adds, "committed_pusd": _usd(spent)}
    dynamo.call(
        "update_item",
        TableName=_table(),
        Key=_month_key(tenant, month),
        UpdateExpression="ADD " + ", ".join(f"{name} :{name}" for name in adds),
        ExpressionAttributeValues={f":{name}": value for name, value in adds.items()},
    )
    return Recorded.UNRESERVED


def settle(
    tenant: str,
    month: str,
    usage: Usage,
    cost: Decimal | None,
    reservation: tuple[str, int, Decimal] | None,
) -> None:
    """Add what was used and not recorded yet (`cost` None: the model has no price) to the
    month, and give back the reservation (id, write number, amount it holds), if any. One gone
    already (charged as dead while its work ran on, or given back by this very write, whose
    answer was lost and which was retried) adds what was used without it: counted twice at
    worst, never missed."""
    adds = _used(usage, cost)
    spent = cost or Decimal(0)
    if reservation is not None:
        rid, writes, held = reservation
        released = {**adds, "reserved_pusd": _usd(-held), "committed_pusd": _usd(spent - held)}
        if _remove(tenant, month, rid, writes, released):
            return
        stored = read_month(tenant, month).reservations.get(rid)
        if stored is not None:
            # Its writes are not those the caller knows (one whose answer was lost): give back
            # what the entry holds, as stored.
            settle(tenant, month, usage, cost, (rid, stored.writes, stored.usd or Decimal(0)))
            return
    if usage.empty:
        return
    _unreserved(tenant, month, adds, spent)


def reservation_of(tenant: str, month: str, reservation: str) -> Reservation | None:
    """A standing reservation's entry as stored (None: gone)."""
    return read_month(tenant, month).reservations.get(reservation)
