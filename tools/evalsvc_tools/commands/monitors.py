"""`evalsvc monitors`: the user's commands for monitors (E8), evaluation that runs on its own on
a schedule and compares each run with its baseline, over HTTP as the other user commands
(commands/common.py: the URL and key, errors, exit codes, Ctrl-C); monitor_runs.py holds
`run` and `history`:

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
from typing import Any

from evalsvc.core.identifiers import CLIENT_ID_RULE, is_client_id
from evalsvc.models.monitors import MAX_SECRET_CHARS, MIN_SECRET_CHARS
from evalsvc.models.usage import MAX_COST_USD

from evalsvc_tools.client import ClientError, segment
from evalsvc_tools.commands import monitor_runs
from evalsvc_tools.commands.common import (
    Subcommands,
    add_service_flags,
    client_for,
    count,
    finite_float,
    positive_int,
    refuse,
    user_command,
)
from evalsvc_tools.commands.monitor_runs import answer_object, monitor_id_of
from evalsvc_tools.commands.polling import read_retrying
from evalsvc_tools.render.monitors import format_when, render_monitors
from evalsvc_tools.terminal import cut, rich_console, terminal_json

# A monitor's baseline: its previous complete run, or a fixed evaluation result (by id).
PREVIOUS = "previous"


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
    refuse(problems)
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
    client = client_for(args)
    # Not asked again: a request that timed out may have created the monitor.
    answer = answer_object(client.request("POST", "/monitors", body).json(), "POST /monitors")
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
    client = client_for(args)
    if not args.json:
        rich_console()
    body = answer_object(read_retrying(client, "GET", "/monitors").json(), "GET /monitors")
    if args.json:
        print(terminal_json(body))
    else:
        render_monitors(body, rich_console())
    return 0


@user_command
def delete(args: argparse.Namespace) -> int:
    """DELETE /monitors/{id}: the monitor stops, its runs' records are removed."""
    monitor_id = monitor_id_of(args.id)
    client = client_for(args)
    path = f"/monitors/{segment(monitor_id)}"
    answer = answer_object(client.request("DELETE", path).json(), f"DELETE {path}")
    if args.json:
        print(terminal_json(answer))
        return 0
    removed = count(answer, "runs_removed")
    print(f"deleted monitor {monitor_id} and {removed} run record{'' if removed == 1 else 's'}")
    return 0


def add_parsers(commands: Subcommands) -> None:
    """`evalsvc monitors create|list|run|history|delete`."""
    monitors = commands.add_parser(
        "monitors",
        help="evaluation on a schedule, each run compared with its baseline",
        description="Monitors: a dataset evaluated on a schedule with a metrics set, each run "
        "compared with its baseline (the previous complete run, or a fixed result), and a "
        "webhook alerted when a run regresses or fails.",
    ).add_subparsers(dest="monitors", required=True)

    _add_create_parser(monitors)

    list_parser = monitors.add_parser("list", help="the tenant's monitors, as a table")
    list_parser.add_argument("--json", action="store_true", help="print the service's JSON answer")
    add_service_flags(list_parser)
    list_parser.set_defaults(run=listing)

    monitor_runs.add_run_parser(monitors)
    monitor_runs.add_history_parser(monitors)

    delete_parser = monitors.add_parser("delete", help="stop a monitor and remove it with its runs")
    delete_parser.add_argument("id", metavar="ID", help="the monitor's id")
    delete_parser.add_argument(
        "--json", action="store_true", help="print the service's JSON answer"
    )
    add_service_flags(delete_parser)
    delete_parser.set_defaults(run=delete)


def _add_create_parser(monitors: Subcommands) -> None:
    create_parser = monitors.add_parser(
        "create",
        help="create a monitor; prints its id",
        description="Create a monitor (POST /monitors). Prints its id alone on stdout and its "
        "first run on stderr. The service checks the schedule and the figures, and answers "
        "what is wrong (HTTP 400).",
    )
    create_parser.add_argument(
        "--name", required=True, help="what the monitor watches, 1-200 characters"
    )
    create_parser.add_argument(
        "--dataset", required=True, metavar="SEED_ID", help="the seed dataset each run evaluates"
    )
    create_parser.add_argument(
        "--metrics", required=True, metavar="METRICS_ID", help="the metrics set (evalsvc metrics)"
    )
    create_parser.add_argument(
        "--schedule",
        required=True,
        metavar="S",
        help="'rate(N minutes|hours|days)' or a 5-field cron in UTC ('0 6 * * MON-FRI'), runs "
        "at least 5 minutes apart",
    )
    create_parser.add_argument(
        "--pairs",
        type=positive_int,
        metavar="N",
        help="each run evaluates the N most recent pairs (default: the newest 200, unless "
        "--label is given: then every pair carrying the labels)",
    )
    create_parser.add_argument(
        "--label",
        action="append",
        metavar="L",
        help="only pairs carrying this label (repeat: all of them)",
    )
    create_parser.add_argument(
        "--baseline",
        metavar="previous|RESULT_ID",
        help="what each run is compared with: 'previous' (the last complete run; the default) "
        "or a complete evaluation result's id",
    )
    create_parser.add_argument(
        "--alpha",
        type=finite_float,
        metavar="A",
        help="significance level of the comparisons' verdicts (default 0.05)",
    )
    create_parser.add_argument(
        "--threshold",
        type=finite_float,
        metavar="T",
        help="the comparison's regression_threshold (default 1): a pair regressed when its "
        "score fell by at least T (a run's verdicts are the metrics' paired tests at --alpha)",
    )
    create_parser.add_argument(
        "--max-cost-usd",
        type=finite_float,
        metavar="X",
        help="each run's LLM spending cap, in dollars; required when a metric is a question "
        "the judge answers",
    )
    create_parser.add_argument(
        "--webhook-url",
        metavar="URL",
        help="an https URL posted to when a run regresses or fails (with --webhook-secret-env)",
    )
    create_parser.add_argument(
        "--webhook-secret-env",
        metavar="NAME",
        help="the environment variable holding the webhook's secret (16-256 characters), "
        "which signs every post: read from there, never from a flag, so that it is not in "
        "the shell's history or the process list; never printed",
    )
    create_parser.add_argument(
        "--json", action="store_true", help="print the service's JSON answer"
    )
    add_service_flags(create_parser)
    create_parser.set_defaults(run=create)
