"""Tool-call trajectories (E11): the calls a pair's app made against those it should have made,
scored with no model.

Five pure functions, each `(made, expected) -> Score` on the 1..5 scale of the checks:

- `strict`: 5 when both lists have the same length and call i matches expected call i for
  every i, else 1.
- `unordered`: 5 when the two are equal as multisets of calls, else 1.
- `subset`: 5 when every call made matches a distinct expected call, else 1.
- `superset`: 5 when every expected call is matched by a distinct call made, else 1.
- `tool_recall`: 1 + 4 (expected calls matched by distinct calls made) / (expected calls);
  5 when no call is expected.

A call matches another when their `ToolCall.key`s are equal: the same name and the same
arguments as JSON values (key order aside, 1 and 1.0 alike, true never 1). Calls are never
compared with ==. Each call's key is computed once for the lists of the last pairs (every
trajectory check of one pair reads the same two lists), and the multisets are Counters of
keys, so a check takes time linear in the calls' arguments (canonical_json sorts each object's
keys). bench/checks.py measures the worst cases at the field limits.

Tool names are the tenant's text: a reason names at most SHOWN_NAMES of them, each quoted,
escaped and cut to NAME_CHARS characters, and never shows arguments. Every function is total:
for any calls it returns a score in [1, 5] with a non-empty reason of at most
REASON_MAX_CHARS characters that can be stored, and never raises.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Sequence

from evalsvc.core.observability import logger
from evalsvc.models.conversations import ToolCall
from evalsvc.scoring.checks import FAIL, PASS, Score, graded
from evalsvc.scoring.text import storable

# At most what a stored reason holds (models.evaluations' MAX_REASON_CHARS, not imported for
# its pydantic models; a test holds the two equal).
REASON_MAX_CHARS = 1_000
# The names a reason lists before "and N more", and the characters each may take, quotes
# included: 2 lists x 3 names x 40 characters leave the reason well within its limit.
SHOWN_NAMES = 3
NAME_CHARS = 40

Key = tuple[str, str]
Calls = Sequence[ToolCall]
Metric = Callable[[Calls, Calls], Score]


# ---- what every check shares --------------------------------------------------------------------


# The keys of the last lists: the trajectory checks of one pair read the same two lists. A call
# hashes by identity (ToolCall compares by key, never by ==), so this caches the very lists.
@functools.lru_cache(maxsize=4)
def _cached_keys(calls: tuple[ToolCall, ...]) -> tuple[Key, ...]:
    return tuple(call.key for call in calls)


def _keys(calls: Calls) -> tuple[Key, ...]:
    return _cached_keys(tuple(calls))


def _shown(name: str) -> str:
    """A tool name quoted for a reason: at most NAME_CHARS characters, quotes included, and
    escaped (a control character or a lone surrogate shows as its escape)."""
    quoted = repr(name)
    if len(quoted) <= NAME_CHARS:
        return quoted
    return quoted[: NAME_CHARS - 4] + "..." + quoted[0]


def _calls(n: int) -> str:
    return f"{n} call" if n == 1 else f"{n} calls"


def _names(calls: Counter[Key]) -> str:
    """The names of a multiset of calls, in the order first met, each with its count when more
    than one: at most SHOWN_NAMES names, then how many calls are left ("'search' (2 times),
    'fetch' and 4 more")."""
    by_name: Counter[str] = Counter()
    for (name, _), count in calls.items():
        by_name[name] += count
    shown = list(by_name.items())[:SHOWN_NAMES]
    parts = [_shown(name) + (f" ({count} times)" if count > 1 else "") for name, count in shown]
    left = sum(by_name.values()) - sum(count for _, count in shown)
    return ", ".join(parts) + (f" and {left} more" if left else "")


def _other_arguments(missing: Counter[Key], extra: Counter[Key]) -> str:
    """The names both missing and extra, at most SHOWN_NAMES: calls of the expected tools made
    with other arguments than expected ("" when there are none)."""
    extra_names = {name for name, _ in extra}
    both = [name for name in dict.fromkeys(name for name, _ in missing) if name in extra_names]
    if not both:
        return ""
    shown = ", ".join(_shown(name) for name in both[:SHOWN_NAMES])
    more = f" and {len(both) - SHOWN_NAMES} more" if len(both) > SHOWN_NAMES else ""
    return f"; called with other arguments than expected: {shown}{more}"


def _differences(missing: Counter[Key], extra: Counter[Key]) -> str:
    parts = []
    if missing:
        parts.append(f"{_calls(sum(missing.values()))} expected and not made: {_names(missing)}")
    if extra:
        parts.append(f"{_calls(sum(extra.values()))} made and not expected: {_names(extra)}")
    return "; ".join(parts) + _other_arguments(missing, extra)


def _bounded(reason: str) -> str:
    reason = storable(reason).strip()
    if len(reason) <= REASON_MAX_CHARS:
        return reason
    return reason[: REASON_MAX_CHARS - 3] + "..."


def _total(name: str) -> Callable[[Metric], Metric]:
    """The check made total: a score in [1, 5] and a non-empty, storable reason within
    REASON_MAX_CHARS whatever the calls. A check that raises (arguments nested deeper than the
    interpreter recurses, a value that is not JSON) scores 1 and says so; the error is logged
    without the calls."""

    def wrap(metric: Metric) -> Metric:
        @functools.wraps(metric)
        def score(made: Calls, expected: Calls) -> Score:
            try:
                result = metric(made, expected)
            except Exception as exc:
                logger.warning(
                    "trajectory check raised",
                    extra={"metric": name, "error": exc.__class__.__name__},
                )
                return Score(
                    FAIL,
                    f"{name} could not be computed for these tool calls "
                    f"({exc.__class__.__name__}); it is scored as failing",
                )
            value = result.value if math.isfinite(result.value) else FAIL
            reason = _bounded(result.reason) or f"{name} gave no reason"
            return Score(min(PASS, max(FAIL, value)), reason)

        return score

    return wrap


# ---- the checks ---------------------------------------------------------------------------------


@_total("trajectory:strict")
def strict(made: Calls, expected: Calls) -> Score:
    """5 when the calls made are the expected ones in the same order, else 1, with the first
    position where they differ."""
    got, wanted = _keys(made), _keys(expected)
    for index, (call, expected_call) in enumerate(zip(got, wanted, strict=False)):
        if call != expected_call:
            note = " (same name, other arguments)" if call[0] == expected_call[0] else ""
            return Score(
                FAIL,
                f"call {index + 1} differs: made {_shown(call[0])}, expected "
                f"{_shown(expected_call[0])}{note}; {len(got)} made, {len(wanted)} expected",
            )
    if not got and wanted:
        return Score(
            FAIL, f"no call made, and {len(wanted)} expected, the first {_shown(wanted[0][0])}"
        )
    if not wanted and got:
        return Score(FAIL, f"no call expected, and {len(got)} made, the first {_shown(got[0][0])}")
    if len(got) < len(wanted):
        at = len(got)
        return Score(
            FAIL,
            f"{at} made, {len(wanted)} expected: the calls made are the first expected ones, in "
            f"order; expected call {at + 1}, {_shown(wanted[at][0])}, was not made",
        )
    if len(got) > len(wanted):
        at = len(wanted)
        return Score(
            FAIL,
            f"{len(got)} made, {at} expected: the expected calls were made, in order, then "
            f"{len(got) - at} more from call {at + 1}, {_shown(got[at][0])}",
        )
    if not got:
        return Score(PASS, "no call made, and none expected")
    return Score(PASS, f"the {_calls(len(got))} made are the expected ones, in order")


@_total("trajectory:unordered")
def unordered(made: Calls, expected: Calls) -> Score:
    """5 when the calls made and the expected ones are equal as multisets, else 1."""
    got, wanted = Counter(_keys(made)), Counter(_keys(expected))
    missing, extra = wanted - got, got - wanted
    if missing or extra:
        differences = _differences(missing, extra)
        return Score(FAIL, f"the calls differ from the expected ones: {differences}")
    count = sum(got.values())
    if not count:
        return Score(PASS, "no call made, and none expected")
    return Score(PASS, f"the {_calls(count)} made are the expected ones, in some order")


@_total("trajectory:subset")
def subset(made: Calls, expected: Calls) -> Score:
    """5 when every call made matches a distinct expected call, else 1."""
    got, wanted = Counter(_keys(made)), Counter(_keys(expected))
    extra = got - wanted
    if extra:
        count = sum(extra.values())
        return Score(
            FAIL,
            f"{count} of the {_calls(len(made))} made {'matches' if count == 1 else 'match'} no "
            f"distinct expected call ({len(expected)} expected): {_names(extra)}"
            + _other_arguments(wanted - got, extra),
        )
    if not made:
        return Score(PASS, f"no call made, so none beyond the {len(expected)} expected")
    return Score(
        PASS,
        f"each of the {_calls(len(made))} made matches a distinct expected call "
        f"({len(expected)} expected)",
    )


@_total("trajectory:superset")
def superset(made: Calls, expected: Calls) -> Score:
    """5 when every expected call is matched by a distinct call made, else 1."""
    got, wanted = Counter(_keys(made)), Counter(_keys(expected))
    missing = wanted - got
    if missing:
        count = sum(missing.values())
        return Score(
            FAIL,
            f"{count} of the {_calls(len(expected))} expected {'was' if count == 1 else 'were'} "
            f"not made ({len(made)} made): {_names(missing)}"
            + _other_arguments(missing, got - wanted),
        )
    if not expected:
        return Score(PASS, f"no call expected, so none missing ({len(made)} made)")
    return Score(
        PASS,
        f"each of the {_calls(len(expected))} expected is matched by a distinct call made "
        f"({len(made)} made)",
    )


@_total("tool_recall")
def tool_recall(made: Calls, expected: Calls) -> Score:
    """1 + 4 (expected calls matched by distinct calls made) / (expected calls); 5 when none
    is expected."""
    got, wanted = Counter(_keys(made)), Counter(_keys(expected))
    n = sum(wanted.values())
    if not n:
        return Score(PASS, f"no call was expected: recall 1 by convention ({len(made)} made)")
    missing = wanted - got
    k = n - sum(missing.values())
    value = graded(k / n)
    if k < n:
        # 5 only when every expected call was made, however many are expected (graded rounds
        # to 4 decimals: (n - 1) / n would round to 5 from n = 80,000).
        value = min(value, PASS - 1e-4)
        return Score(
            value,
            f"{k} of {n} expected calls made (recall {k / n:.3f}); not made: {_names(missing)}"
            + _other_arguments(missing, got - wanted),
        )
    return Score(value, f"{n} of {n} expected calls made (recall 1.000)")


# The trajectory checks by their name after `check:` (scoring.checks.TRAJECTORY_CHECKS).
BY_NAME: dict[str, Metric] = {
    "trajectory:strict": strict,
    "trajectory:unordered": unordered,
    "trajectory:subset": subset,
    "trajectory:superset": superset,
    "tool_recall": tool_recall,
}
