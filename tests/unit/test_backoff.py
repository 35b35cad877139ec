"""The one backoff rule (evalsvc.core.backoff): the service's retries wait `delay` (jittered),
the command line's `grown` (the same curve without jitter, so it can say the pause it takes)."""

from __future__ import annotations

from evalsvc.core import backoff
from hypothesis import given
from hypothesis import strategies as st

RETRIES = st.integers(min_value=1, max_value=200)
SECONDS = st.floats(min_value=0.001, max_value=100.0)


def test_the_pause_doubles_from_the_base_and_stops_at_the_cap() -> None:
    assert [backoff.grown(retry, 1.0, 10.0) for retry in range(1, 7)] == [1, 2, 4, 8, 10, 10]
    assert backoff.grown(1, 0.5, 60.0) == 0.5


@given(RETRIES, SECONDS, SECONDS)
def test_a_jittered_delay_is_between_half_and_all_of_the_grown_pause(
    retry: int, base: float, cap: float
) -> None:
    pause = backoff.grown(retry, base, cap)
    assert pause <= cap
    assert 0.5 * pause <= backoff.delay(retry, base, cap) <= pause
