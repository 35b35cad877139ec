"""Tenant patterns on RE2: what they match, what is refused, and that matching never holds
the GIL."""

from __future__ import annotations

import threading
import time

import pytest
from evalsvc.scoring.patterns import (
    MAX_PROGRAM_SIZE,
    PatternError,
    compile_pattern,
)
from evalsvc.scoring.text import storable, utf8

from tests.pathological import outputs


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        ("^(a+)+$", "a" * 40 + "!", False),  # Python's re: minutes
        ("^(a+)+!$", "a" * 40 + "!", True),
        ("\\d{3}-\\d{4}", "call 555-1234", True),
        ("\\x{1F600}", "hi \U0001f600", True),
        ("a.c", "a\ud800c", True),  # a lone surrogate is read as U+FFFD, one character
        ("\\x{FFFD}", "x\udfffy", True),
    ],
)
def test_patterns_match_as_re2_does(pattern: str, text: str, found: bool) -> None:
    assert compile_pattern(pattern).search(text) is found


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("(a)\\1", "invalid escape sequence"),
        ("(?=a)", "invalid perl operator"),
        ("(?<!a)b", "invalid perl operator"),
        ("a{1001}", "invalid repetition size"),
        ("\\w{1000}\\w{1000}", f"over the {MAX_PROGRAM_SIZE} allowed"),
    ],
)
def test_patterns_re2_cannot_run_in_bounded_time_are_refused(pattern: str, reason: str) -> None:
    with pytest.raises(PatternError, match=reason):
        compile_pattern(pattern)


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    assert utf8("a\ud800b\U0001f600") == "a\ufffdb\U0001f600".encode()
    assert storable("x\udfff") == "x\ufffd"


def test_compiled_patterns_are_kept() -> None:
    assert compile_pattern("x+y") is compile_pattern("x+y")


def test_a_pattern_search_lets_other_threads_run() -> None:
    """RE2 releases the GIL: while a slow search runs in C, another thread keeps taking steps.
    (Each step gives the GIL back, so it can run only when the search thread does not hold it:
    Python's own `re` lets it take one step, at most, during a search.)"""
    pattern = compile_pattern("a[ab]{990}x")
    text = outputs()["random a and b"]
    steps: list[float] = []
    stop = threading.Event()

    def step() -> None:
        while not stop.is_set():
            steps.append(time.monotonic())
            time.sleep(0)  # hands the GIL back

    other = threading.Thread(target=step)
    other.start()
    time.sleep(0.05)
    started = time.monotonic()
    assert not pattern.search(text)
    ended = time.monotonic()
    stop.set()
    other.join()

    assert ended - started > 0.05, "the search was too quick to tell"
    assert len([t for t in steps if started < t < ended]) >= 10
