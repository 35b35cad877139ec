"""`evalsvc monitors`: the user's commands for monitors (E8), evaluation that runs on its own on
a schedule and compares each run with its baseline, over HTTP as the other user commands
(user_commands.py: the URL and key, errors, exit codes, Ctrl-C):

    evalsvc monitors create --name N --dataset ID --metrics ID --schedule S ...   POST /monitors
    evalsvc monitors list                            GET /monitors, as a table
    evalsvc monitors run ID [--wait]                 POST /monitors/{id}/run; --wait follows the
                                                     run to its end (exit 1: failed, regressed)
    evalsvc monitors history ID [--limit N | --all]  GET /monitors/{id}/history, newest first
    evalsvc monitors delete ID                       DELETE /monitors/{id}

A webhook's secret is read from the environment variable --webhook-secret-env names, never
from a flag: it stays out of the shell's history and the process list, and is never printed.
Every text the service gave reaches the terminal through terminal.py's filter (the tables as
rich Text, --json as terminal_json).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from evalsvc.identifiers import CLIENT_ID_RULE, is_client_id
from evalsvc.models.monitors import MAX_SECRET_CHARS, MIN_SECRET_CHARS
from evalsvc.models.usage import MAX_COST_USD

from evalsvc_tools.client import (
    EXIT_USAGE,
    Client,
    ClientError,
    ConnectionProblem,
    HttpError,
    segment,
)
from evalsvc_tools.progress import ProgressDisplay
from evalsvc_tools.render.monitors import (
    format_mean,
    format_when,
    regressed_run_metrics,
    render_history,
    render_monitor_run,
    render_monitors,
)
from evalsvc_tools.terminal import cut, rich_console, terminal_json, terminal_safe
from evalsvc_tools.user_commands import (
    EXIT_INTERRUPTED,
    FIRST_RETRY_SECONDS,
    MAX_POLL_FAILURES,
    MIN_POLL_SECONDS,
    READ_ATTEMPTS,
    TRANSIENT_STATUSES,
    Queued,
    _client,
    _count,
    _pairs_progress,
    _poll_seconds,
    _problems,
    read_retrying,
    retry_pause,
    user_command,
)

# A monitor's baseline: its previous complete run, or a fixed evaluation result (by id).
PREVIOUS = "previous"
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
MONITOR_RUN = Queued("monitor run", "evaluation", _pairs_progress, "scoring", "pairs")


def _monitor_id(value: str) -> str:
    if not is_client_id(value):
        raise ClientError(
            f"{value[:140]!r} is not a monitor id: {CLIENT_ID_RULE}; nothing was sent", EXIT_USAGE
        )
    return value


def _history_path(monitor_id: str) -> str:
    return f"/monitors/{segment(monitor_id)}/history"


def _object(response_body: Any, what: str) -> dict[str, Any]:
    if not isinstance(response_body, dict):
        raise ClientError(f"{what} did not answer with an object")
    return response_body


def _runs(body: dict[str, Any]) -> list[dict[str, Any]]:
    runs = body.get("runs")
    return [r for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []


# ---- create ------------------------------------------------------------------------------------


def _webhook_secret(args: argparse.Namespace, problems: list[str]) -> str | None:
    """The secret in the variable --webhook-secret-env names; its problems (its length, never
    its text) added to `problems`."""
    if (args.webhook_url is None) != (args.webhook_secret_env is None):
        problems.append(
            "--webhook-url and --webhook-secret-env go together: the secret signs every alert "
            "(X-Evalsvc-Signature), so the receiver can tell it came from the service"
        )
        return None
    if args.webhook_secret_env is None:
        return None
    name = args.webhook_secret_env[:100]
    secret = os.environ.get(args.webhook_secret_env, "")
    if not secret:
        problems.append(
            f"--webhook-secret-env names ${name}, which is not set or empty: export the secret "
            f"there ({MIN_SECRET_CHARS}-{MAX_SECRET_CHARS} characters)"
        )
        return None
    if not MIN_SECRET_CHARS <= len(secret) <= MAX_SECRET_CHARS:
        problems.append(
            f"the secret in ${name} has {len(secret)} characters: a webhook secret has "
            f"{MIN_SECRET_CHARS} to {MAX_SECRET_CHARS}"
        )
        return None
    return secret


def _create_body(args: argparse.Namespace) -> dict[str, Any]:
    """The body of POST /monitors from the arguments; every problem with them is said, and
    nothing sent, when there is any. The schedule and the figures' ranges are the service's to
    check (its 400 names what is wrong)."""
    problems = [
        f"{flag} {value[:140]!r} is not an id: {CLIENT_ID_RULE}"
        for flag, value in (("--dataset", args.dataset), ("--metrics", args.metrics))
        if not is_client_id(value)
    ]
    if args.baseline is not None and not is_client_id(args.baseline):
        problems.append(
            f"--baseline {args.baseline[:140]!r} is neither {PREVIOUS!r} nor an evaluation "
            f"result id: {CLIENT_ID_RULE}"
        )
    if args.max_cost_usd is not None and not 0 < args.max_cost_usd <= MAX_COST_USD:
        problems.append(
            f"--max-cost-usd is {args.max_cost_usd:g}: it must be more than 0 and at most "
            f"{MAX_COST_USD:,.0f}"
        )
    secret = _webhook_secret(args, problems)
    if len(problems) == 1:
        raise ClientError(f"{problems[0]}; nothing was sent", EXIT_USAGE)
    if problems:
        _problems(problems)
        raise ClientError(
            f"{len(problems)} problems with the arguments (listed above); nothing was sent",
            EXIT_USAGE,
        )
    body: dict[str, Any] = {
        "name": args.name,
        "seed_data_id": args.dataset,
        "metrics_id": args.metrics,
        "schedule": args.schedule,
    }
    query: dict[str, Any] = {}
    if args.label:
        query["pair_labels"] = args.label
    if args.pairs is not None:
        query["latest_n_pairs"] = args.pairs
    if query:
        body["pair_query"] = query
    for name, value in (
        ("baseline", args.baseline),
        ("alpha", args.alpha),
        ("regression_threshold", args.threshold),
        ("max_cost_usd", args.max_cost_usd),
        ("webhook_url", args.webhook_url),
        ("webhook_secret", secret),
    ):
        if value is not None:
            body[name] = value
    return body


@user_command
def create(args: argparse.Namespace) -> int:
    """POST /monitors: the monitor's id alone on stdout (its first run on stderr); --json
    prints the answer."""
    body = _create_body(args)
    client = _client(args)
    # Not asked again: a request that timed out may have created the monitor.
    answer = _object(client.request("POST", "/monitors", body).json(), "POST /monitors")
    monitor_id = answer.get("monitor_id")
    if not isinstance(monitor_id, str) or not is_client_id(monitor_id):
        raise ClientError("POST /monitors answered without a monitor_id")
    if args.json:
        print(terminal_json(answer))
        return 0
    print(
        f"created monitor {monitor_id} ({cut(args.name, 100)}): {cut(args.schedule, 100)} in "
        f"UTC, first run at {format_when(answer.get('next_run_at'))}",
        file=sys.stderr,
    )
    print(monitor_id)
    return 0


# ---- list, delete ------------------------------------------------------------------------------


@user_command
def listing(args: argparse.Namespace) -> int:
    """GET /monitors as a table (--json: the body)."""
    client = _client(args)
    if not args.json:
        rich_console()
    body = _object(read_retrying(client, "GET", "/monitors").json(), "GET /monitors")
    if args.json:
        print(terminal_json(body))
    else:
        render_monitors(body, rich_console())
    return 0


@user_command
def delete(args: argparse.Namespace) -> int:
    """DELETE /monitors/{id}: the monitor stops, its runs' records are removed."""
    monitor_id = _monitor_id(args.id)
    client = _client(args)
    path = f"/monitors/{segment(monitor_id)}"
    answer = _object(client.request("DELETE", path).json(), f"DELETE {path}")
    if args.json:
        print(terminal_json(answer))
        return 0
    removed = _count(answer, "runs_removed")
    print(f"deleted monitor {monitor_id} and {removed} run record{'' if removed == 1 else 's'}")
    return 0


# ---- run ---------------------------------------------------------------------------------------


def _start_run(client: Client, monitor_id: str) -> dict[str, Any]:
    """POST /monitors/{id}/run; asked again (saying so) while the tenant runs as many jobs as
    it may (429 with Retry-After: nothing was started), up to READ_ATTEMPTS in all."""
    path = f"/monitors/{segment(monitor_id)}/run"
    for attempt in range(1, READ_ATTEMPTS + 1):
        try:
            answer = client.request("POST", path)
        except HttpError as exc:
            if exc.status != 429 or exc.retry_after is None or attempt == READ_ATTEMPTS:
                raise
            backoff = FIRST_RETRY_SECONDS * 2 ** (attempt - 1)
            pause = max(MIN_POLL_SECONDS, retry_pause(exc.retry_after, backoff))
            print(
                f"evalsvc: {terminal_safe(exc.message)}; asking again in {pause:g} s "
                f"(retry {attempt} of {READ_ATTEMPTS - 1})",
                file=sys.stderr,
            )
            time.sleep(pause)
            continue
        started = _object(answer.json(), f"POST {path}")
        run_id = started.get("run_id")
        if not isinstance(run_id, str) or not is_client_id(run_id):
            raise ClientError(f"POST {path} answered without a run_id")
        return started
    raise AssertionError("unreachable")  # pragma: no cover


def find_run(
    client: Client, monitor_id: str, run_id: str, scheduled_for: Any
) -> dict[str, Any] | None:
    """Run `run_id` as the monitor's history has it (None when it is not there), paging from
    the newest run until it is found or the runs are older than it (`scheduled_for`)."""
    path = _history_path(monitor_id)
    query = {"limit": str(RUN_PAGE)}
    for _ in range(MAX_RUN_PAGES):
        body = _object(client.request("GET", path, query=query).json(), f"GET {path}")
        runs = _runs(body)
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
    evaluation's progress on `display`; the run as the history has it. Paced as `follow`:
    at once, then from MIN_POLL_SECONDS doubling up to `interval`; throttling, a gateway's 5xx
    or a dropped connection are asked again, up to MAX_POLL_FAILURES times in a row."""
    run_id = str(started["run_id"])
    scheduled_for = started.get("scheduled_for")
    failures = missing = 0
    pause = min(MIN_POLL_SECONDS, interval)
    alert_until: float | None = None
    while True:
        try:
            run = find_run(client, monitor_id, run_id, scheduled_for)
            if run is not None and run.get("status") not in ENDED:
                _show_progress(client, run, display)
        except (HttpError, ConnectionProblem) as exc:
            transient = not isinstance(exc, HttpError) or exc.status in TRANSIENT_STATUSES
            failures += 1
            if not transient or failures > MAX_POLL_FAILURES:
                raise
            said = exc.retry_after if isinstance(exc, HttpError) else None
            time.sleep(retry_pause(said, interval * 2**failures))
            continue
        failures = 0
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
        time.sleep(pause)
        pause = min(2 * pause, interval)


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
    monitor_id = _monitor_id(args.id)
    client = _client(args)
    interval = _poll_seconds() if args.wait else 0.0
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
    monitor_id = _monitor_id(args.id)
    client = _client(args)
    if not args.json:
        rich_console()
    path = _history_path(monitor_id)
    limit = MAX_HISTORY if args.all else args.limit or DEFAULT_HISTORY
    query = {"limit": str(limit)}
    body = _object(read_retrying(client, "GET", path, query=query).json(), f"GET {path}")
    if args.all:
        runs = _runs(body)
        seen: set[str] = set()
        cursor = body.get("next_cursor")
        while isinstance(cursor, str) and cursor:
            if cursor in seen:
                raise ClientError(f"GET {path} gave the same next_cursor twice")
            seen.add(cursor)
            page = read_retrying(client, "GET", path, query={**query, "cursor": cursor}).json()
            page = _object(page, f"GET {path}")
            runs += _runs(page)
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
