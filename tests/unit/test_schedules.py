"""Monitor schedules (E8): rate and 5-field cron in UTC, the next run after a time (checked
against a minute-by-minute walk), month ends and leap days, the 5-minute minimum, and every
malformed schedule refused saying why."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from evalsvc.core.errors import InvalidInput
from evalsvc.monitoring import schedules
from hypothesis import given, settings
from hypothesis import strategies as st


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()) * 1000


def at(value: int | None) -> str:
    assert value is not None
    return datetime.fromtimestamp(value / 1000, UTC).strftime("%Y-%m-%d %H:%M")


def test_a_rate_runs_every_n_units_from_its_anchor() -> None:
    rate = schedules.parse("rate(15 minutes)")
    anchor = ms("2026-11-28 10:07:00")
    assert at(schedules.next_after(rate, anchor, anchor)) == "2026-11-28 10:22"
    assert at(schedules.next_after(rate, anchor + 1, anchor)) == "2026-11-28 10:22"
    assert at(schedules.next_after(rate, ms("2026-11-28 10:22:00"), anchor)) == "2026-11-28 10:37"
    assert at(schedules.next_after(rate, anchor - 1, anchor)) == "2026-11-28 10:07"
    assert schedules.parse("rate(1 day)") == schedules.Rate(86_400_000)
    assert schedules.parse(" RATE( 2 hours ) ") == schedules.Rate(7_200_000)


@pytest.mark.parametrize(
    ("cron", "after", "expected"),
    [
        ("0 9 * * *", "2026-11-28 08:59:59", "2026-11-28 09:00"),
        ("0 9 * * *", "2026-11-28 09:00:00", "2026-11-29 09:00"),
        ("*/15 * * * *", "2026-11-28 23:50:00", "2026-11-29 00:00"),
        ("0 0 31 * *", "2026-11-15 00:00:00", "2026-12-31 00:00"),  # November has no 31st
        ("0 0 29 2 *", "2026-03-01 00:00:00", "2028-02-29 00:00"),  # the next leap day
        ("30 12 28-31 * *", "2027-02-27 13:00:00", "2027-02-28 12:30"),
        ("0 8 * * MON-FRI", "2026-11-28 09:00:00", "2026-11-30 08:00"),  # Saturday to Monday
        ("0 8 * * 7", "2026-11-28 09:00:00", "2026-11-29 08:00"),  # 7 is Sunday too
        # Both days restricted: either runs (the 1st of the month, or a Monday)
        ("0 0 1 * 1", "2026-11-28 00:00:00", "2026-11-30 00:00"),
        ("0 0 1 * 1", "2026-11-30 00:00:00", "2026-12-01 00:00"),
        ("0 0 1 jan,jul *", "2026-11-28 00:00:00", "2027-01-01 00:00"),
        ("5/20 * * * *", "2026-11-28 10:46:00", "2026-11-28 11:05"),
    ],
)
def test_a_cron_runs_at_its_next_matching_minute(cron: str, after: str, expected: str) -> None:
    assert at(schedules.next_after(schedules.parse(cron), ms(after))) == expected


def walk(cron: schedules.Cron, after_ms: int, limit_minutes: int) -> int | None:
    """The next run by trying every minute: the oracle."""
    start = datetime.fromtimestamp(after_ms // 60_000 * 60, UTC) + timedelta(minutes=1)
    for k in range(limit_minutes):
        t = start + timedelta(minutes=k)
        if t.minute in cron.minutes and t.hour in cron.hours and cron.runs_on(t.date()):
            return int(t.timestamp()) * 1000
    return None


field = st.one_of(
    st.just("*"),
    st.integers(0, 5).map(str),
    st.tuples(st.integers(0, 3), st.integers(3, 6)).map(lambda t: f"{t[0]}-{t[1]}"),
    st.integers(2, 9).map(lambda n: f"*/{n}"),
)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 11).map(lambda m: str(m * 5)),
    st.sampled_from(["*", "3", "0-5", "*/6", "22,23"]),
    st.sampled_from(["*", "1", "15", "28-31", "*/10", "29"]),
    st.sampled_from(["*", "2", "1-3", "*/4", "12"]),
    st.sampled_from(["*", "0", "1-5", "6,0", "3"]),
    st.integers(ms("2026-01-01 00:00:00"), ms("2030-12-31 00:00:00")),
)
def test_the_next_run_is_the_first_matching_minute(
    minute: str, hour: str, day: str, month: str, weekday: str, after: int
) -> None:
    cron = schedules.parse(f"{minute} {hour} {day} {month} {weekday}")
    assert isinstance(cron, schedules.Cron)
    found = schedules.next_after(cron, after)
    assert found is not None and found > after
    # Nothing matches between `after` and what was found
    span = (found - after) // 60_000 + 1
    assert walk(cron, after, span) == found


@pytest.mark.parametrize(
    ("schedule", "says"),
    [
        ("rate(4 minutes)", "at least 5 minutes"),
        ("rate(0 hours)", "below 1"),
        ("rate(1 minutes)", "rate(1 minute)"),
        ("rate(5 minute)", "rate(5 minutes)"),
        ("rate(5 weeks)", "minutes, hours or days"),
        ("rate(367 days)", "366 days"),
        ("rate(5)", "rate(N minutes)"),
        ("*/2 * * * *", "at least 5 minutes"),
        ("0,58 * * * *", "at least 5 minutes"),  # 58 then 0 of the next hour: 2 minutes
        ("0,3 * * * *", "at least 5 minutes"),
        ("1,58 23,0 * * *", "at least 5 minutes"),  # 23:58, then 0:01 across midnight
        ("* * * *", "5 fields"),
        ("0 0 * * * *", "5 fields"),
        ("60 * * * *", "0-59"),
        ("0 24 * * *", "0-23"),
        ("0 0 0 * *", "1-31"),
        ("0 0 * 13 *", "1-12"),
        ("0 0 * * 8", "0-7"),
        ("0 0 * FOO *", "FOO"),
        ("0 5-1 * * *", "backwards"),
        ("0 0 */0 * *", "at least 1"),
        ("0 0 31 2 *", "no day that exists"),
        ("0 0 30 2 *", "no day that exists"),
        ("0 0 * * * ; rm", "5 fields"),
        ("x" * 201, "200 characters"),
        ("", "5 fields"),
    ],
)
def test_a_bad_schedule_is_refused_saying_why(schedule: str, says: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        schedules.parse(schedule)
    assert says in caught.value.message


def test_hours_apart_allow_minutes_close_across_the_hour() -> None:
    # 0:58 and 3:02: never two minutes apart, since hours 0 and 3 are not consecutive
    cron = schedules.parse("2,58 0,3 * * *")
    assert isinstance(cron, schedules.Cron)
    assert at(schedules.next_after(cron, ms("2026-11-28 00:59:00"))) == "2026-11-28 03:02"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_a_schedule_or_a_400_quickly(text: str) -> None:
    try:
        schedule = schedules.parse(text)
    except InvalidInput as error:
        assert error.message.startswith("schedule ")
        return
    assert schedules.next_after(schedule, ms("2026-11-28 00:00:00")) is not None
