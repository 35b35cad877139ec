"""Monitor schedules (E8): when a monitor runs.

    rate(N minutes|hours|days)   every N units from the monitor's anchor (its creation), N >= 1
                                 ("minute", "hour", "day" when N is 1)
    M H DOM MON DOW              a 5-field cron in UTC: minute 0-59, hour 0-23, day of month
                                 1-31, month 1-12 (or JAN-DEC), day of week 0-7 (0 and 7 are
                                 Sunday, or SUN-SAT); each `*`, a value, a range `a-b`, a step
                                 `*/n` or `a-b/n`, or a list of those. As in cron, when both
                                 the day of month and the day of week are restricted, a day
                                 matching either runs.

Runs are at least MIN_INTERVAL_MS apart: a schedule that could run sooner after a run is refused
(InvalidInput, saying why), as is a cron that names no day that exists (31 February).
Everything here is pure arithmetic on UTC milliseconds, bounded whatever the text.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from evalsvc.core.errors import InvalidInput

MINUTE_MS = 60_000
MIN_INTERVAL_MS = 5 * MINUTE_MS
MAX_SCHEDULE_CHARS = 200
# A cron that names a day exists has one within 8 years (29 February: 4, or 8 across 2100).
SEARCH_DAYS = 8 * 366 + 1

_UNITS = {"minute": MINUTE_MS, "hour": 60 * MINUTE_MS, "day": 24 * 60 * MINUTE_MS}
_RATE = re.compile(r"rate\(\s*([0-9]{1,7})\s+([a-z]+)\s*\)")
_MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
_DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
_TERM = re.compile(r"(\*|[0-9A-Z]{1,3}(?:-[0-9A-Z]{1,3})?)(?:/([0-9]{1,2}))?")


@dataclass(frozen=True, slots=True)
class Rate:
    every_ms: int


@dataclass(frozen=True, slots=True)
class Cron:
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 Sunday ... 6 Saturday
    any_day: bool  # day of month is `*`
    any_weekday: bool  # day of week is `*`

    def runs_on(self, day: date) -> bool:
        if day.month not in self.months:
            return False
        in_month = day.day in self.days
        in_week = day.isoweekday() % 7 in self.weekdays
        if self.any_day or self.any_weekday:
            return in_month and in_week
        return in_month or in_week


Schedule = Rate | Cron


def _bad(text: str, why: str) -> InvalidInput:
    return InvalidInput(
        f"schedule {text[:80]!r} is not valid: {why}. Use rate(N minutes|hours|days) or a "
        "5-field cron in UTC (minute hour day-of-month month day-of-week), at least 5 minutes "
        "apart"
    )


def parse(text: str) -> Schedule:
    """The schedule `text` names; InvalidInput saying what is wrong."""
    if len(text) > MAX_SCHEDULE_CHARS:
        raise _bad(text, f"it is longer than {MAX_SCHEDULE_CHARS} characters")
    stripped = text.strip()
    if stripped.lower().startswith("rate"):
        return _parse_rate(text, stripped.lower())
    return _parse_cron(text, stripped)


def _parse_rate(text: str, lowered: str) -> Rate:
    match = _RATE.fullmatch(lowered)
    if match is None:
        raise _bad(text, "a rate is rate(N minutes), rate(N hours) or rate(N days)")
    count, unit = int(match.group(1)), match.group(2)
    singular = unit[:-1] if unit.endswith("s") else unit
    if singular not in _UNITS or count < 1:
        raise _bad(text, f"{unit!r} is not minutes, hours or days, or N is below 1")
    if (unit == singular) != (count == 1):
        raise _bad(text, f"say rate(1 {singular}) or rate({max(count, 2)} {singular}s)")
    every = count * _UNITS[singular]
    if every < MIN_INTERVAL_MS:
        raise _bad(text, "runs must be at least 5 minutes apart")
    if every > 366 * _UNITS["day"]:
        raise _bad(text, "runs must be at most 366 days apart")
    return Rate(every)


def _field(text: str, value: str, name: str, low: int, high: int, names: list[str]) -> set[int]:
    found: set[int] = set()
    for term in value.upper().split(","):
        match = _TERM.fullmatch(term)
        if match is None:
            raise _bad(text, f"the {name} field has {term[:20]!r}")
        span, step_text = match.group(1), match.group(2)
        if span == "*":
            first, last = low, high
        else:
            ends = [_value(text, end, name, low, high, names) for end in span.split("-")]
            first, last = ends[0], ends[-1]
            if first > last:
                raise _bad(text, f"the {name} range {span} runs backwards")
            if step_text is not None and len(ends) == 1:
                last = high  # `a/n`: from a to the field's end
        step = 1 if step_text is None else int(step_text)
        if step < 1:
            raise _bad(text, f"the {name} step must be at least 1")
        found.update(range(first, last + 1, step))
    return found


def _value(text: str, word: str, name: str, low: int, high: int, names: list[str]) -> int:
    if word.isdigit():
        number = int(word)
    elif word in names:
        number = names.index(word) + (1 if name == "month" else 0)
    else:
        raise _bad(text, f"the {name} field has {word!r}")
    if not low <= number <= high:
        raise _bad(text, f"the {name} field takes {low}-{high}, not {number}")
    return number


def _parse_cron(text: str, stripped: str) -> Cron:
    fields = stripped.split()
    if len(fields) != 5:
        raise _bad(text, f"a cron has 5 fields, not {len(fields)}")
    minute, hour, day, month, weekday = fields
    weekdays = {d % 7 for d in _field(text, weekday, "day-of-week", 0, 7, _DAYS)}
    cron = Cron(
        minutes=tuple(sorted(_field(text, minute, "minute", 0, 59, []))),
        hours=tuple(sorted(_field(text, hour, "hour", 0, 23, []))),
        days=frozenset(_field(text, day, "day-of-month", 1, 31, [])),
        months=frozenset(_field(text, month, "month", 1, 12, _MONTHS)),
        weekdays=frozenset(weekdays),
        any_day=day == "*",
        any_weekday=weekday == "*",
    )
    if _shortest_gap(cron) < MIN_INTERVAL_MS:
        raise _bad(text, "runs must be at least 5 minutes apart")
    if next_after(cron, 0) is None:
        raise _bad(text, "it names no day that exists")
    return cron


def _shortest_gap(cron: Cron) -> int:
    """The least time between two runs: between minutes of one hour, and across the hour when
    two consecutive hours run (23 and 0 across midnight, counted whatever the days)."""
    minutes = cron.minutes
    gaps = [b - a for a, b in itertools.pairwise(minutes)]
    hours = set(cron.hours)
    if any((h + 1) % 24 in hours for h in hours):
        gaps.append(60 - minutes[-1] + minutes[0])
    return min(gaps, default=60) * MINUTE_MS


def next_after(schedule: Schedule, after_ms: int, anchor_ms: int = 0) -> int | None:
    """The first run strictly after `after_ms` (UTC ms): a rate's runs are anchor_ms + k *
    every; None for a cron with no run within SEARCH_DAYS."""
    if isinstance(schedule, Rate):
        every = schedule.every_ms
        if after_ms < anchor_ms:
            return anchor_ms
        return anchor_ms + (((after_ms - anchor_ms) // every) + 1) * every
    start = datetime.fromtimestamp(after_ms // MINUTE_MS * 60, UTC) + timedelta(minutes=1)
    day = start.date()
    for offset in range(SEARCH_DAYS):
        current = day + timedelta(days=offset)
        if not schedule.runs_on(current):
            continue
        for hour in schedule.hours:
            for minute in schedule.minutes:
                at = datetime(current.year, current.month, current.day, hour, minute, tzinfo=UTC)
                if at >= start:
                    return int(at.timestamp()) * 1000
    return None
