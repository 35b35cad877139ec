"""`evalsvc monitors run` and `evalsvc monitors history`: a monitor's runs (E8), one started now
(and with --wait followed to its end in the monitor's history), and its history read, over
HTTP as the other user commands (monitors.py holds the rest of `evalsvc monitors`):

    evalsvc monitors run ID [--wait]                 POST /monitors/{id}/run; --wait follows the
                                                     run to its end (exit 1: failed, regressed)
    evalsvc monitors history ID [--limit N | --all]  GET /monitors/{id}/history, newest first
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from evalsvc.core.identifiers import CLIENT_ID_RULE, is_client_id

from evalsvc_tools.client import EXIT_USAGE, Client, ClientError, HttpError, segment
from evalsvc_tools.commands.common import (
    EXIT_INTERRUPTED,
    Subcommands,
    add_service_flags,
    client_for,
    poll_seconds,
    user_command,
)
from evalsvc_tools.commands.polling import (
    MAX_POLL_FAILURES,
    START,
    Pace,
    Queued,
    pairs_progress,
    read_retrying,
    while_following,
)
from evalsvc_tools.progress import ProgressDisplay
from evalsvc_tools.render.monitors import (
    format_mean,
    format_when,
    regressed_run_metrics,
    render_history,
    render_monitor_run,
)
from evalsvc_tools.terminal import cut, rich_console, terminal_json

# GET /monitors/{id}/history's page: 20 runs unless asked, at most 100.
DEFAULT_HISTORY = 20
MAX_HISTORY = 100
# A run's statuses once it has ended.
ENDED = frozenset({"complete", "failed"})
# While following a run, the history is read this many runs a page, and at most this many pages
# are looked through for it (a run asked for now is on the first, unless later runs came since).
RUN_PAGE = 10
MAX_RUN_PAGES = 10
# A run that ended with its alert pending: how long its delivery is waited for (the service
# makes up to 3 attempts of 5 s, with backoff, in under a minute), to say what became of it.
ALERT_WAIT_SECONDS = 90.0
# The progress of a run is its evaluation's: the pairs scored.
MONITOR_RUN = Queued("monitor run", "evaluation", pairs_progress, "scoring", "pairs")


def monitor_id_of(value: str) -> str:
    if not is_client_id(value):
        raise ClientError(
            f"{value[:140]!r} is not a monitor id: {CLIENT_ID_RULE}; nothing was sent", EXIT_USAGE
        )
    return value


def history_path(monitor_id: str) -> str:
    return f"/monitors/{segment(monitor_id)}/history"


def answer_object(response_body: Any, what: str) -> dict[str, Any]:
    if not isinstance(response_body, dict):
        raise ClientError(f"{what} did not answer with an object")
    return response_body


def runs_of(body: dict[str, Any]) -> list[dict[str, Any]]:
    runs = body.get("runs")
    return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []


# ---- run ---------------------------------------------------------------------------------------


def _start_run(client: Client, monitor_id: str) -> dict[str, Any]:
    """POST /monitors/{id}/run; asked again (saying so) while the tenant runs as many jobs as
    it may (429 with Retry-After: nothing was started), up to READ_ATTEMPTS in all (START)."""
    path = f"/monitors/{segment(monitor_id)}/run"
    answer = START.call(lambda: client.request("POST", path))
    started = answer_object(answer.json(), f"POST {path}")
    run_id = started.get("run_id")
    if not isinstance(run_id, str) or not is_client_id(run_id):
        raise ClientError(f"POST {path} answered without a run_id")
    return started


def find_run(
    client: Client, monitor_id: str, run_id: str, scheduled_for: Any
) -> dict[str, Any] | None:
    """Run `run_id` as the monitor's history has it (None when it is not there), paging from
    the newest run until it is found or the runs are older than it (`scheduled_for`)."""
    path = history_path(monitor_id)
    query = {"limit": str(RUN_PAGE)}
    for _ in range(MAX_RUN_PAGES):
        body = answer_object(client.request("GET", path, query=query).json(), f"GET {path}")
        runs = runs_of(body)
        for run in runs:
            if run.get("run_id") == run_id:
                return run
        older = isinstance(scheduled_for, str) and any(
            isinstance(r.get("scheduled_for"), str) and r["scheduled_for"] < scheduled_for
            for r in runs
        )
        cursor = body.get("next_cursor")
        if older or not isinstance(cursor, str) or not cursor:
            return None
        query = {"limit": str(RUN_PAGE), "cursor": cursor}
    return None


def _show_progress(client: Client, run: dict[str, Any], display: ProgressDisplay) -> None:
    """The progress of a running run's evaluation (once it has one), on `display`."""
    result_id = run.get("result_id")
    if not isinstance(result_id, str) or not is_client_id(result_id):
        return
    try:
        body = client.request("GET", f"/evaluation/{segment(result_id)}").json()
    except HttpError as exc:
        if exc.status == 404:  # not started yet, or it could not start (the run will say)
            return
        raise
    if isinstance(body, dict):
        done, total = MONITOR_RUN.progress(body)
        if total:
            display.update(done, total)


def _alert_pending(run: dict[str, Any]) -> bool:
    webhook = run.get("webhook")
    return isinstance(webhook, dict) and webhook.get("status") == "pending"


def follow_run(
    client: Client,
    monitor_id: str,
    started: dict[str, Any],
    display: ProgressDisplay,
    interval: float,
) -> dict[str, Any]:
    """Read the monitor's history until the run `started` names has ended (and its alert, if
    it has one, was delivered or given up on, for at most ALERT_WAIT_SECONDS), showing its
    evaluation's progress on `display`; the run as the history has it. Paced as `follow`
    (`Pace`): at once, then from MIN_POLL_SECONDS doubling up to `interval`; throttling, a
    gateway's 5xx or a dropped connection are asked again, up to MAX_POLL_FAILURES times in a
    row (`while_following`)."""
    run_id = str(started["run_id"])
    scheduled_for = started.get("scheduled_for")
    retry = while_following(interval)
    pace = Pace(interval)
    missing = 0
    alert_until: float | None = None

    def read() -> dict[str, Any] | None:
        run = find_run(client, monitor_id, run_id, scheduled_for)
        if run is not None and run.get("status") not in ENDED:
            _show_progress(client, run, display)
        return run

    while True:
        run = retry.call(read)
        if run is None:
            missing += 1
            if missing > MAX_POLL_FAILURES:
                raise ClientError(
                    f"monitor run {run_id} is not in the history of monitor {monitor_id}"
                )
        elif run.get("status") in ENDED:
            if not _alert_pending(run):
                return run
            now = time.monotonic()
            if alert_until is None:
                alert_until = now + ALERT_WAIT_SECONDS
                print(f"monitor run {run_id}: delivering its alert", file=sys.stderr)
            elif now >= alert_until:
                return run  # shown as pending: the service goes on delivering it
        pace.wait()


def _followed(
    client: Client, monitor_id: str, started: dict[str, Any], interval: float
) -> dict[str, Any]:
    run_id = str(started["run_id"])
    display = MONITOR_RUN.display(run_id)
    try:
        return follow_run(client, monitor_id, started, display, interval)
    except KeyboardInterrupt:
        raise ClientError(
            f"interrupted; monitor run {run_id} goes on in the service (evalsvc monitors "
            f"history {monitor_id})",
            EXIT_INTERRUPTED,
        ) from None
    finally:
        display.close()


@user_command
def run(args: argparse.Namespace) -> int:
    """POST /monitors/{id}/run: the run's id (--json: the answer). With --wait, the run is
    followed to its end and shown; exit 1 when it failed or a metric regressed."""
    monitor_id = monitor_id_of(args.id)
    client = client_for(args)
    interval = poll_seconds() if args.wait else 0.0
    if args.wait and not args.json:
        rich_console()  # say now, not after the run, when rich is missing
    started = _start_run(client, monitor_id)
    run_id = str(started["run_id"])
    if not args.wait:
        print(terminal_json(started) if args.json else run_id)
        print(
            f"monitor run {run_id} started: see it with evalsvc monitors history {monitor_id}",
            file=sys.stderr,
        )
        return 0
    print(
        f"monitor run {run_id} of monitor {monitor_id} started, scheduled for "
        f"{format_when(started.get('scheduled_for'))}",
        file=sys.stderr,
    )
    ended = _followed(client, monitor_id, started, interval)
    if args.json:
        print(terminal_json(ended))
    else:
        render_monitor_run(ended, rich_console())
    if ended.get("status") == "failed":
        raise ClientError(
            f"monitor run {run_id} failed: {ended.get('failure') or 'no reason given'}"
        )
    regressed = regressed_run_metrics(ended)
    if regressed:
        baseline = cut(str(ended.get("baseline_id")), 128)
        for metric in regressed:
            print(
                f"evalsvc: regressed: {cut(str(metric.get('metric')), 80)}: mean "
                f"{format_mean(metric)} against baseline {baseline}",
                file=sys.stderr,
            )
        metrics = ended.get("metrics")
        raise ClientError(
            f"monitor run {run_id} regressed on {len(regressed)} of "
            f"{len(metrics) if isinstance(metrics, list) else len(regressed)} metrics against "
            f"baseline {baseline}"
        )
    return 0


# ---- history -----------------------------------------------------------------------------------


@user_command
def history(args: argparse.Namespace) -> int:
    """GET /monitors/{id}/history, newest first: `--limit` runs (20 by default), or with --all
    every page of them; a table, or the body (--json; with --all, every run in one body)."""
    monitor_id = monitor_id_of(args.id)
    client = client_for(args)
    if not args.json:
        rich_console()
    path = history_path(monitor_id)
    limit = MAX_HISTORY if args.all else args.limit or DEFAULT_HISTORY
    query = {"limit": str(limit)}
    body = answer_object(read_retrying(client, "GET", path, query=query).json(), f"GET {path}")
    if args.all:
        runs = runs_of(body)
        seen: set[str] = set()
        cursor = body.get("next_cursor")
        while isinstance(cursor, str) and cursor:
            if cursor in seen:
                raise ClientError(f"GET {path} gave the same next_cursor twice")
            seen.add(cursor)
            page = read_retrying(client, "GET", path, query={**query, "cursor": cursor}).json()
            page = answer_object(page, f"GET {path}")
            runs += runs_of(page)
            cursor = page.get("next_cursor")
        body = {"runs": runs, "next_cursor": None}
    if args.json:
        print(terminal_json(body))
        return 0
    render_history(body, rich_console())
    if body.get("next_cursor"):
        print(
            f"older runs follow: --limit N (up to {MAX_HISTORY}) or --all shows them",
            file=sys.stderr,
        )
    return 0


def _history_limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_HISTORY:
        raise argparse.ArgumentTypeError(f"{text!r} is not from 1 to {MAX_HISTORY}")
    return value


def add_run_parser(monitors: Subcommands) -> None:
    run_parser = monitors.add_parser(
        "run",
        help="run a monitor now; --wait follows the run to its end",
        description="Run monitor ID now, besides its schedule (POST /monitors/ID/run), and print "
        "the run's id. With --wait, follow the run (its evaluation's progress on stderr) until "
        "it ends, then print each metric's mean with its interval and its verdict against the "
        "baseline, the cost and what became of the alert. Exit status: 0 the run was started "
        "(with --wait: it completed and no metric regressed); 1 the run failed or a metric "
        "regressed (with --wait), or the service refused; 2 a bad argument.",
    )
    run_parser.add_argument("id", metavar="ID", help="the monitor's id")
    run_parser.add_argument(
        "--wait", action="store_true", help="follow the run until it ends; exit 1 on a regression"
    )
    run_parser.add_argument(
        "--json",
        action="store_true",
        help="print the run as its history has it once it ended (without --wait: the answer "
        "that started it)",
    )
    add_service_flags(run_parser)
    run_parser.set_defaults(run=run)


def add_history_parser(monitors: Subcommands) -> None:
    history_parser = monitors.add_parser(
        "history",
        help="a monitor's runs, newest first",
        description="A monitor's runs, newest first (GET /monitors/ID/history): when, status, "
        "each metric's mean [interval] and verdict against the baseline, cost and alert.",
    )
    history_parser.add_argument("id", metavar="ID", help="the monitor's id")
    count_group = history_parser.add_mutually_exclusive_group()
    count_group.add_argument(
        "--limit",
        type=_history_limit,
        metavar="N",
        help=f"the N newest runs, 1-{MAX_HISTORY} (default {DEFAULT_HISTORY})",
    )
    count_group.add_argument("--all", action="store_true", help="every run kept, read page by page")
    history_parser.add_argument(
        "--json", action="store_true", help="print the runs as JSON ({runs, next_cursor})"
    )
    add_service_flags(history_parser)
    history_parser.set_defaults(run=history)
