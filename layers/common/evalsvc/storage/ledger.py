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
                                    "calls", "in", "out": the most the work can use,
                                    "unpriced": 1 for a model with no price}}

Amounts are whole pico-dollars (10^-12 USD, what a cost is rounded up to): sums stay exact.

Every piece of LLM work reserves the most it can use before its first call, with or without a
limit. A reservation is one conditional update of the month: with a limit, it adds its amount
to committed_pusd only while committed_pusd stays within the limit, so spending cannot pass the
limit however many workers reserve at once. Settling replaces the reservation with what was
used. A reservation whose work died (killed mid-call: nothing settles it) is charged in full
when it has expired (`until`): what the provider may have served is never left uncounted. The
next reservation that finds no room charges expired ones, and a read of the month counts them
as spent before they are. The map of reservations is bounded (MAX_RESERVATIONS), and so is the
item.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal

from botocore.exceptions import ClientError

from evalsvc.pricing import COST_QUANTUM
from evalsvc.settings import get_settings
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import Item, error_code, n, s
from evalsvc.usage import Usage

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
    once: what they held moves from reserved to spent, with the most calls and tokens."""
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
        dynamo.conditional(
            "update_item",
            TableName=_table(),
            Key=_month_key(tenant, month),
            UpdateExpression="REMOVE reservations.#r ADD "
            + ", ".join(f"{name} :{name}" for name in adds),
            ConditionExpression="attribute_exists(reservations.#r)",
            ExpressionAttributeNames={"#r": rid},
            ExpressionAttributeValues={f":{name}": value for name, value in adds.items()},
        )


def read_month(tenant: str, month: str) -> Month:
    item = dynamo.get_item(_table(), _month_key(tenant, month))
    return _month_from(month, item)


# ---- settling ----------------------------------------------------------------------------------


def settle(
    tenant: str,
    month: str,
    usage: Usage,
    cost: Decimal | None,
    reservation: tuple[str, Decimal] | None,
) -> None:
    """Add what was used (`cost` None: the model has no price) to the month in place of the
    reservation (id, amount) it was held against. A reservation gone already was charged in
    full when it expired (its bound, at least what was used), or settled by this very write (a
    retry whose first answer was lost): nothing is added again."""
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
    spent = cost or Decimal(0)
    if reservation is not None:
        rid, held = reservation
        released = {**adds, "reserved_pusd": _usd(-held), "committed_pusd": _usd(spent - held)}
        dynamo.conditional(
            "update_item",
            TableName=_table(),
            Key=_month_key(tenant, month),
            UpdateExpression="REMOVE reservations.#r ADD "
            + ", ".join(f"{name} :{name}" for name in released),
            ConditionExpression="attribute_exists(reservations.#r)",
            ExpressionAttributeNames={"#r": rid},
            ExpressionAttributeValues={f":{name}": value for name, value in released.items()},
        )
        return
    adds["committed_pusd"] = _usd(spent)
    dynamo.call(
        "update_item",
        TableName=_table(),
        Key=_month_key(tenant, month),
        UpdateExpression="ADD " + ", ".join(f"{name} :{name}" for name in adds),
        ExpressionAttributeValues={f":{name}": value for name, value in adds.items()},
    )
