"""Asking the service again, the one way every user command does it:

- `Retry`: a request asked again while the service answers that it may succeed later (a 503,
  a 429 with Retry-After, a gateway's 502 or 504; while following work, a dropped connection
  too), each pause its Retry-After, else a backoff doubling with each retry; the command's own
  requests say each retry on stderr (`READ`, `START`), the reads of work being followed do not
  (`while_following`);
- `follow`: queued work (`Queued`: what, where, how its progress is counted) read until it is
  no longer running, at once, then from MIN_POLL_SECONDS doubling up to the command's interval
  (`Pace`), its progress on a display (`follow_shown`), and shown once it ended (`show_ended`).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from evalsvc.core import backoff as backoff_rule
from evalsvc.core.identifiers import is_client_id

from evalsvc_tools.client import (
    Client,
    ClientError,
    ConnectionProblem,
    HttpError,
    Response,
    segment,
)
from evalsvc_tools.commands.common import count
from evalsvc_tools.progress import PlainLines, ProgressDisplay, RichBar
from evalsvc_tools.terminal import rich_console, terminal_json, terminal_safe

T = TypeVar("T")

# Statuses worth asking again about while following queued work, and how many times in a row.
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_POLL_FAILURES = 5
# The shortest pause between two reads of running work, whatever Retry-After says, and the
# first: a small evaluation is often done by then. Each pause after it doubles, up to
# EVALSVC_POLL_SECONDS.
MIN_POLL_SECONDS = 0.2
# A request that changes nothing (a comparison, a report) is asked this many times in all
# while the service says to retry: a 503 (busy: out of its time, or storage), a 429 with
# Retry-After, a gateway's 502 or 504. Each pause is Retry-After (at most MAX_RETRY_SECONDS),
# else doubles from FIRST_RETRY_SECONDS.
READ_ATTEMPTS = 4
FIRST_RETRY_SECONDS = 2.0
MAX_RETRY_SECONDS = 60.0

Failure = HttpError | ConnectionProblem


def retry_pause(retry_after: float | None, backoff: float) -> float:
    """How long to wait before asking again after a failure the service said may pass: its
    Retry-After, else `backoff`, at most MAX_RETRY_SECONDS."""
    return min(retry_after if retry_after is not None else backoff, MAX_RETRY_SECONDS)


def backoff(retry: int, first: float) -> float:
    """The pause before retry number `retry` (1 for the first) when the service did not say
    how long: the service's backoff rule, `first` doubling with each retry, at most
    MAX_RETRY_SECONDS. Without its jitter (`backoff_rule.delay`): a command is one client, and says
    the pause it takes."""
    return backoff_rule.grown(retry, first, MAX_RETRY_SECONDS)


@dataclass(frozen=True, slots=True)
class Retry:
    """The retry helper: a request asked again, up to `attempts` times in all, while `later`
    says its failure may pass; each pause the failure's Retry-After, else `backoff` from
    `first`, at most MAX_RETRY_SECONDS and at least `least`; each retry said on stderr when
    `say`."""

    attempts: int
    first: float
    later: Callable[[Failure], bool]
    least: float = 0.0
    say: bool = True

    def call(self, request: Callable[[], T]) -> T:
        for attempt in range(1, self.attempts + 1):
            try:
                return request()
            except (HttpError, ConnectionProblem) as exc:
                if not self.later(exc) or attempt == self.attempts:
                    raise
                said = exc.retry_after if isinstance(exc, HttpError) else None
                pause = max(self.least, retry_pause(said, backoff(attempt, self.first)))
                if self.say:
                    print(
                        f"evalsvc: {terminal_safe(exc.message)}; asking again in {pause:g} s "
                        f"(retry {attempt} of {self.attempts - 1})",
                        file=sys.stderr,
                    )
                time.sleep(pause)
        raise AssertionError("unreachable")  # pragma: no cover


def _may_pass(exc: Failure) -> bool:
    return isinstance(exc, HttpError) and (
        exc.status in (502, 503, 504) or (exc.status == 429 and exc.retry_after is not None)
    )


def _nothing_started(exc: Failure) -> bool:
    return isinstance(exc, HttpError) and exc.status == 429 and exc.retry_after is not None


def _transient(exc: Failure) -> bool:
    return not isinstance(exc, HttpError) or exc.status in TRANSIENT_STATUSES


# A request that changes nothing, asked again while the service says it may answer later.
READ = Retry(READ_ATTEMPTS, FIRST_RETRY_SECONDS, _may_pass, least=MIN_POLL_SECONDS)
# A request that starts work, asked again only while the service says it started nothing (a
# 429 with Retry-After: the tenant runs as many jobs as it may).
START = Retry(READ_ATTEMPTS, FIRST_RETRY_SECONDS, _nothing_started, least=MIN_POLL_SECONDS)


def while_following(interval: float) -> Retry:
    """The reads of work being followed every `interval` seconds at most: throttling, a
    gateway's 5xx or a dropped connection asked again, up to MAX_POLL_FAILURES times in a row,
    backing off from twice the interval, quietly (the progress display is on stderr)."""
    return Retry(MAX_POLL_FAILURES + 1, 2 * interval, _transient, say=False)


def read_retrying(
    client: Client,
    method: str,
    path: str,
    body: Any = None,
    *,
    query: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """A request that changes nothing, asked again (up to READ_ATTEMPTS in all) while the
    service answers that it may succeed later; each retry is said on stderr."""
    return READ.call(lambda: client.request(method, path, body, query=query, headers=headers))


class Pace:
    """The pauses between two reads of running work: the first MIN_POLL_SECONDS (or
    `interval`, when shorter), each after it twice the last, up to `interval`; a Retry-After
    the service gave is honoured instead (at least MIN_POLL_SECONDS, at most
    MAX_RETRY_SECONDS)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.pause = min(MIN_POLL_SECONDS, interval)

    def wait(self, retry_after: float | None = None) -> None:
        if retry_after is not None:
            time.sleep(max(MIN_POLL_SECONDS, retry_pause(retry_after, 0.0)))
        else:
            time.sleep(self.pause)
        self.pause = min(2 * self.pause, self.interval)


# ---- queued work ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Queued:
    """A kind of work the service may queue, as the commands follow it: GET /{route}/{id}
    (with `query`) until it is no longer running; `progress` reads (done, total) from each
    answer, and the progress display names the work `noun` and counts it in `unit`."""

    noun: str
    route: str
    progress: Callable[[dict[str, Any]], tuple[int, int]]
    doing: str
    unit: str
    query: Mapping[str, str] | None = None

    def path(self, job_id: str) -> str:
        return f"/{self.route}/{segment(job_id)}"

    def display(self, job_id: str) -> ProgressDisplay:
        if sys.stderr.isatty():
            return RichBar(job_id, self.noun, self.doing, self.unit)
        return PlainLines(job_id, self.noun, self.unit)


def pairs_progress(body: dict[str, Any]) -> tuple[int, int]:
    return count(body, "pairs_done"), count(body, "pairs_total")


def _nested_progress(body: dict[str, Any]) -> tuple[int, int]:
    progress = body.get("progress")
    if not isinstance(progress, dict):
        return 0, 0
    return count(progress, "done"), count(progress, "total")


def _judge_calls_progress(body: dict[str, Any]) -> tuple[int, int]:
    if "judge_calls_total" not in body:  # a service that does not count them
        return pairs_progress(body)
    return count(body, "judge_calls_done"), count(body, "judge_calls_total")


EVALUATION = Queued("evaluation", "evaluation", pairs_progress, "scoring", "pairs")
# With judge_samples k > 1 a pair takes k calls a question: the progress counts the calls, so
# that the work shows as large as it is.
SAMPLED_EVALUATION = Queued(
    "evaluation", "evaluation", _judge_calls_progress, "judging", "judge calls"
)
# The service counts pairs whose comparisons are all judged. Verdicts are paged: while the
# work runs one is asked for, not a page of them each time.
PAIRWISE = Queued(
    "pairwise judging", "pairwise", _nested_progress, "judging", "pairs", query={"limit": "1"}
)


def location_id(location: str | None, route: str = "evaluation") -> str | None:
    """The id of the work a `Location` (…/{route}/{id}) names, when it is one."""
    match = re.search(rf"{route}/([^/?#]+)$", location or "")
    return match.group(1) if match and is_client_id(match.group(1)) else None


def follow(
    client: Client,
    results_id: str,
    display: ProgressDisplay,
    interval: float,
    on_answer: Callable[[dict[str, Any]], None] | None = None,
    *,
    kind: Queued = EVALUATION,
) -> dict[str, Any]:
    """GET /evaluation/{id} (or another `kind` of queued work) until it is no longer running;
    its last answer (each answer is given to `on_answer` first). Paced by `Pace`: the first
    read at once, the next MIN_POLL_SECONDS later, each pause after it twice the last, up to
    `interval`; a Retry-After is honoured instead. Throttling, a gateway's 5xx or a dropped
    connection are asked again (honouring Retry-After), up to MAX_POLL_FAILURES times in a
    row (`while_following`)."""
    retry = while_following(interval)
    pace = Pace(interval)
    path = kind.path(results_id)
    while True:
        response = retry.call(lambda: client.request("GET", path, query=kind.query))
        body = response.json()
        if not isinstance(body, dict):
            raise ClientError(f"GET /{kind.route}/{results_id} did not answer with an object")
        if on_answer is not None:
            on_answer(body)
        display.update(*kind.progress(body))
        if body.get("status", "complete") != "running":
            return body
        pace.wait(response.retry_after)


def follow_shown(
    client: Client,
    kind: Queued,
    job_id: str,
    first: dict[str, Any],
    interval: float,
    on_answer: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """`follow` queued work with its progress on stderr, from the answer that queued it
    (`first`, shown when it says how far the work is) to its last answer."""
    display = kind.display(job_id)
    try:
        done, total = kind.progress(first)
        if total:
            display.update(done, total)
        return follow(client, job_id, display, interval, on_answer, kind=kind)
    finally:
        display.close()


def show_ended(
    args: argparse.Namespace,
    body: Any,
    what: str,
    path: str,
    render: Callable[[dict[str, Any], Any], None],
) -> int:
    """Print queued work that has ended (`what`, read at `path`): its body as JSON with --json,
    else its tables; a failed one is an error naming why."""
    if not isinstance(body, dict):
        raise ClientError(f"GET {path} did not answer with an object")
    if args.json:
        print(terminal_json(body))
    if body.get("status") == "failed":
        raise ClientError(f"{what} failed: {body.get('failure') or 'no reason given'}")
    if not args.json:
        render(body, rich_console())
    return 0
