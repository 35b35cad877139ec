"""`evalsvc`: the operator's and the user's command line.

    evalsvc serve                         the local API on 127.0.0.1:3000/v1
    evalsvc keys create --tenant T --user U --email E
    evalsvc keys list [--tenant T]
    evalsvc keys revoke KEY_OR_KEY_ID
    evalsvc synthetic import FILE.jsonl --tenant T [--id ID] [--system-prompt TEXT]
    evalsvc tenants set-limit --tenant T (--monthly-usd X | --unlimited | --clear)
    evalsvc tenants usage --tenant T [--month YYYY-MM]

Every command above but `serve` targets AWS DynamoDB (table names from --stack-name outputs, from
flags, or from the environment) or, with --local, the local embedded store.

The user's commands talk to any deployment over HTTP (user_commands.py), with the API's base
URL and a key from --url/--key or EVALSVC_URL/EVALSVC_API_KEY (plain http only to this
machine, unless --insecure-http):

    evalsvc push FILE.jsonl|FILE.csv --seed ID [--system-prompt TEXT]
    evalsvc metrics [--question TEXT]... [--check NAME[:ARG]]... [--file FILE] [--json]
    evalsvc evaluate (--seed ID | --synthetic ID) [--metrics ID] [--label L]... [--latest-n N]
                     [--json]
    evalsvc compare BASELINE_ID CANDIDATE_ID [--fail-on-regression] [--cluster-by label|input]
                    [--json]
    evalsvc plan BASELINE_ID [CANDIDATE_ID] --effect X [--alpha A] [--power P] [--json]
    evalsvc pairwise RUN RUN [RUN...] --question TEXT [--one-order] [--max-pairs N]
                     [--alpha A] [--max-cost-usd X] [--estimate] [--json]
    evalsvc report ID [--compare OTHER_ID [--cluster-by label|input]] [-o FILE | -o - [--force]]
    evalsvc monitors create --name N --dataset ID --metrics ID --schedule S [--pairs N]
                     [--label L]... [--baseline previous|ID] [--alpha A] [--threshold T]
                     [--max-cost-usd X] [--webhook-url URL --webhook-secret-env NAME] [--json]
    evalsvc monitors list [--json]
    evalsvc monitors run ID [--wait] [--json]
    evalsvc monitors history ID [--limit N | --all] [--json]
    evalsvc monitors delete ID [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, get_args

from evalsvc.core.errors import DomainError
from evalsvc.core.identifiers import format_ms
from evalsvc.models.datasets import MAX_PAIRS, MAX_TEXT_CHARS
from evalsvc.models.evaluations import ClusterBy
from evalsvc.spending.prices import PricesInvalid

from evalsvc_tools import metrics_files, monitor_commands, user_commands
from evalsvc_tools.client import ClientError
from evalsvc_tools.terminal import terminal_safe

DEFAULT_DATA_DIR = ".evalsvc"
# The largest monthly limit the operator may set, in dollars.
MAX_LIMIT_USD = Decimal(10_000_000)


def _data_dir() -> Path:
    return Path(os.environ.get("EVALSVC_DATA_DIR") or DEFAULT_DATA_DIR)


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


@contextlib.contextmanager
def _target(args: argparse.Namespace) -> Iterator[None]:
    """Point the service code at the chosen DynamoDB for the duration of a command."""
    from evalsvc_tools.local.server import apply_environment

    if args.local:
        from evalsvc_tools.local.store import EmbeddedDynamoDB, StoreBusy

        store = EmbeddedDynamoDB(args.data_dir, port=0)
        try:
            apply_environment(store.start())
        except StoreBusy:
            # The local server holds the store: talk to it.
            from evalsvc_tools.local.store import LOCAL_CREDENTIALS, TABLE_PREFIX
            from evalsvc_tools.local.tables import table_env_vars

            endpoint = (args.data_dir / "endpoint").read_text().strip()
            tables = {var: f"{TABLE_PREFIX}-{lid}" for var, lid in table_env_vars().items()}
            apply_environment({**LOCAL_CREDENTIALS, **tables, "DYNAMODB_ENDPOINT_URL": endpoint})
            yield
            return
        try:
            yield
        finally:
            store.stop()
        return
    env: dict[str, str] = {}
    if args.region:
        env["AWS_REGION"] = args.region
    if args.stack_name:
        env.update(_stack_environment(args.stack_name, args.region))
    if args.api_keys_table:
        env["API_KEYS_TABLE"] = args.api_keys_table
    if args.datasets_table:
        env["DATASETS_TABLE"] = args.datasets_table
    if args.usage_table:
        env["USAGE_TABLE"] = args.usage_table
    apply_environment(env)
    yield


def _stack_environment(stack_name: str, region: str | None) -> dict[str, str]:
    """What the stack's functions are given, from its outputs: the tables, and the default
    monthly limit (none when the stack has no such output: it was deployed without one)."""
    import boto3

    stacks = boto3.client("cloudformation", region_name=region).describe_stacks(
        StackName=stack_name
    )
    outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks["Stacks"][0].get("Outputs", [])}
    tables = {
        "API_KEYS_TABLE": outputs["ApiKeysTableName"],
        "DATASETS_TABLE": outputs["DatasetsTableName"],
    }
    if "UsageTableName" in outputs:
        tables["USAGE_TABLE"] = outputs["UsageTableName"]
    tables["EVALSVC_DEFAULT_MONTHLY_LIMIT_USD"] = outputs.get("DefaultMonthlyLimitUsd", "")
    return tables


# ---- commands ----------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    from evalsvc.spending.prices import check_prices

    from evalsvc_tools.local.server import serve

    check_prices()  # a malformed EVALSVC_PRICES stops the start, naming the problem
    serve(args.host, args.port, args.dynamodb_port, args.data_dir)
    # Everything is on disk and closed: leave without freeing each stored item one by one,
    # which took seconds with a large store.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _keys_create(args: argparse.Namespace) -> int:
    from evalsvc.logic import api_keys

    with _target(args):
        key, record = api_keys.create_key(args.tenant, args.user, args.email)
    owner = terminal_safe(f"{record.user} <{record.user_email}>")
    print(f"created key {record.key_id} for {owner} in tenant {terminal_safe(record.tenant)}")
    print("store it now: it is shown once and only its hash is kept")
    print(key)
    return 0


def _keys_list(args: argparse.Namespace) -> int:
    from evalsvc.logic import api_keys

    with _target(args):
        records = api_keys.list_keys(args.tenant)
    print(f"{'KEY ID':<14}{'TENANT':<20}{'USER':<20}{'EMAIL':<32}{'CREATED':<26}STATUS")
    for r in records:
        status = "revoked" if r.revoked else "active"
        created = format_ms(r.created_ms)
        # Names and emails were typed by whoever created the key: shown, never obeyed.
        tenant, user, email = (terminal_safe(t) for t in (r.tenant, r.user, r.user_email))
        print(f"{r.key_id:<14}{tenant:<20}{user:<20}{email:<32}{created:<26}{status}")
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    from evalsvc.logic import api_keys

    with _target(args):
        record = api_keys.revoke_key(args.key)
    user, tenant = terminal_safe(record.user), terminal_safe(record.tenant)
    print(f"revoked key {record.key_id} of {user} in tenant {tenant}")
    return 0


def _usd_amount(text: str) -> Decimal:
    """A limit in dollars: a finite number from 0 (nothing may be spent) to a million."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount in dollars") from None
    if not value.is_finite() or not 0 <= value <= MAX_LIMIT_USD:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an amount from 0 to {MAX_LIMIT_USD} dollars"
        )
    return value


def _tenants_set_limit(args: argparse.Namespace) -> int:
    from evalsvc.logic import spending

    with _target(args):
        if args.clear:
            spending.clear_limit(args.tenant)
        elif args.unlimited:
            spending.set_unlimited(args.tenant)
        else:
            spending.set_limit(args.tenant, args.monthly_usd)
    if args.clear:
        print(
            f"tenant {args.tenant} has no monthly LLM limit of its own: the deployment's default "
            "applies (EVALSVC_DEFAULT_MONTHLY_LIMIT_USD; none when that is unset)"
        )
    elif args.unlimited:
        print(f"tenant {args.tenant} has no monthly LLM limit, whatever the default")
    else:
        print(f"tenant {args.tenant} may spend ${args.monthly_usd} a month on LLM calls")
    return 0


def _tenants_usage(args: argparse.Namespace) -> int:
    from evalsvc.logic import spending

    with _target(args):
        figures = spending.month_usage(args.tenant, args.month)
    print(json.dumps(figures.model_dump(mode="json"), indent=2))
    return 0


def read_jsonl_pairs(path: Path) -> list[tuple[str, str]]:
    """(input, output) from a JSON Lines file, one object per line; errors name the line."""
    rows: list[tuple[str, str]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record: Any = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DomainError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(record, dict):
                raise DomainError(f"{path}:{number}: expected an object with input and output")
            for field in ("input", "output"):
                value = record.get(field)
                if not isinstance(value, str):
                    raise DomainError(f"{path}:{number}: {field!r} must be a string")
                if len(value) > MAX_TEXT_CHARS:
                    raise DomainError(
                        f"{path}:{number}: {field!r} is over {MAX_TEXT_CHARS} characters"
                    )
            rows.append((record["input"], record["output"]))
            if len(rows) > MAX_PAIRS:
                raise DomainError(f"{path}: more than {MAX_PAIRS} pairs, the dataset limit")
    return rows


def _synthetic_import(args: argparse.Namespace) -> int:
    from evalsvc.logic import datasets

    rows = read_jsonl_pairs(args.file)
    total = len(rows)
    print(f"read {total} pairs from {args.file}", file=sys.stderr)
    step = max(1, total // 20)
    last_shown = 0

    def progress(done: int) -> None:
        nonlocal last_shown
        if done - last_shown >= step or done == total:
            last_shown = done
            print(
                f"  written {done}/{total} pairs ({100 * done // max(total, 1)}%)", file=sys.stderr
            )

    with _target(args):
        header = datasets.import_synthetic_dataset(
            args.tenant,
            rows,
            dataset_id=args.id,
            system_prompt=args.system_prompt or "",
            on_progress=progress if total >= 1000 else None,
        )
    print(f"imported {header.pair_count} pairs into synthetic dataset (tenant {args.tenant}):")
    print(header.dataset_id)
    return 0


# ---- parser ------------------------------------------------------------------------------------


def _add_target_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("where")
    group.add_argument("--local", action="store_true", help="the local embedded store (make run)")
    group.add_argument("--data-dir", type=Path, default=_data_dir(), help="local store directory")
    group.add_argument("--stack-name", help="read table names from this CloudFormation stack")
    group.add_argument("--region", help="AWS region")
    group.add_argument("--api-keys-table", help="API keys table name")
    group.add_argument("--datasets-table", help="datasets table name")
    group.add_argument("--usage-table", help="usage table name")


def _add_service_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("service")
    group.add_argument(
        "--url",
        help="the API's base URL, ending in /v1 (default: $EVALSVC_URL): https, or plain http "
        "to this machine only",
    )
    group.add_argument(
        "--key",
        help="an API key (default: $EVALSVC_API_KEY, which keeps it out of the process list)",
    )
    group.add_argument(
        "--insecure-http",
        action="store_true",
        help="send the key over plain http to a host other than this machine (refused "
        "otherwise: anyone on the way could read the key); use https instead",
    )


# POST /compare's cluster_by.
CLUSTER_BY = get_args(ClusterBy)


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_PAIRS:
        raise argparse.ArgumentTypeError(f"{text!r} is not from 1 to {MAX_PAIRS}")
    return value


def _history_limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= monitor_commands.MAX_HISTORY:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not from 1 to {monitor_commands.MAX_HISTORY}"
        )
    return value


def _add_monitor_commands(commands: Any) -> None:
    """`evalsvc monitors create|list|run|history|delete` (monitor_commands.py)."""
    monitors = commands.add_parser(
        "monitors",
        help="evaluation on a schedule, each run compared with its baseline",
        description="Monitors: a dataset evaluated on a schedule with a metrics set, each run "
        "compared with its baseline (the previous complete run, or a fixed result), and a "
        "webhook alerted when a run regresses or fails.",
    ).add_subparsers(dest="monitors", required=True)

    create = monitors.add_parser(
        "create",
        help="create a monitor; prints its id",
        description="Create a monitor (POST /monitors). Prints its id alone on stdout and its "
        "first run on stderr. The service checks the schedule and the figures, and answers "
        "what is wrong (HTTP 400).",
    )
    create.add_argument("--name", required=True, help="what the monitor watches, 1-200 characters")
    create.add_argument(
        "--dataset", required=True, metavar="SEED_ID", help="the seed dataset each run evaluates"
    )
    create.add_argument(
        "--metrics", required=True, metavar="METRICS_ID", help="the metrics set (evalsvc metrics)"
    )
    create.add_argument(
        "--schedule",
        required=True,
        metavar="S",
        help="'rate(N minutes|hours|days)' or a 5-field cron in UTC ('0 6 * * MON-FRI'), runs "
        "at least 5 minutes apart",
    )
    create.add_argument(
        "--pairs",
        type=_positive_int,
        metavar="N",
        help="each run evaluates the N most recent pairs (default: the newest 200, unless "
        "--label is given: then every pair carrying the labels)",
    )
    create.add_argument(
        "--label",
        action="append",
        metavar="L",
        help="only pairs carrying this label (repeat: all of them)",
    )
    create.add_argument(
        "--baseline",
        metavar="previous|RESULT_ID",
        help="what each run is compared with: 'previous' (the last complete run; the default) "
        "or a complete evaluation result's id",
    )
    create.add_argument(
        "--alpha",
        type=_finite_float,
        metavar="A",
        help="significance level of the comparisons' verdicts (default 0.05)",
    )
    create.add_argument(
        "--threshold",
        type=_finite_float,
        metavar="T",
        help="the comparison's regression_threshold (default 1): a pair regressed when its "
        "score fell by at least T (a run's verdicts are the metrics' paired tests at --alpha)",
    )
    create.add_argument(
        "--max-cost-usd",
        type=_finite_float,
        metavar="X",
        help="each run's LLM spending cap, in dollars; required when a metric is a question "
        "the judge answers",
    )
    create.add_argument(
        "--webhook-url",
        metavar="URL",
        help="an https URL posted to when a run regresses or fails (with --webhook-secret-env)",
    )
    create.add_argument(
        "--webhook-secret-env",
        metavar="NAME",
        help="the environment variable holding the webhook's secret (16-256 characters), "
        "which signs every post: read from there, never from a flag, so that it is not in "
        "the shell's history or the process list; never printed",
    )
    create.add_argument("--json", action="store_true", help="print the service's JSON answer")
    _add_service_flags(create)
    create.set_defaults(run=monitor_commands.create)

    listing = monitors.add_parser("list", help="the tenant's monitors, as a table")
    listing.add_argument("--json", action="store_true", help="print the service's JSON answer")
    _add_service_flags(listing)
    listing.set_defaults(run=monitor_commands.listing)

    run = monitors.add_parser(
        "run",
        help="run a monitor now; --wait follows the run to its end",
        description="Run monitor ID now, besides its schedule (POST /monitors/ID/run), and print "
        "the run's id. With --wait, follow the run (its evaluation's progress on stderr) until "
        "it ends, then print each metric's mean with its interval and its verdict against the "
        "baseline, the cost and what became of the alert. Exit status: 0 the run was started "
        "(with --wait: it completed and no metric regressed); 1 the run failed or a metric "
        "regressed (with --wait), or the service refused; 2 a bad argument.",
    )
    run.add_argument("id", metavar="ID", help="the monitor's id")
    run.add_argument(
        "--wait", action="store_true", help="follow the run until it ends; exit 1 on a regression"
    )
    run.add_argument(
        "--json",
        action="store_true",
        help="print the run as its history has it once it ended (without --wait: the answer "
        "that started it)",
    )
    _add_service_flags(run)
    run.set_defaults(run=monitor_commands.run)

    history = monitors.add_parser(
        "history",
        help="a monitor's runs, newest first",
        description="A monitor's runs, newest first (GET /monitors/ID/history): when, status, "
        "each metric's mean [interval] and verdict against the baseline, cost and alert.",
    )
    history.add_argument("id", metavar="ID", help="the monitor's id")
    count = history.add_mutually_exclusive_group()
    count.add_argument(
        "--limit",
        type=_history_limit,
        metavar="N",
        help=f"the N newest runs, 1-{monitor_commands.MAX_HISTORY} (default "
        f"{monitor_commands.DEFAULT_HISTORY})",
    )
    count.add_argument("--all", action="store_true", help="every run kept, read page by page")
    history.add_argument(
        "--json", action="store_true", help="print the runs as JSON ({runs, next_cursor})"
    )
    _add_service_flags(history)
    history.set_defaults(run=monitor_commands.history)

    delete = monitors.add_parser("delete", help="stop a monitor and remove it with its runs")
    delete.add_argument("id", metavar="ID", help="the monitor's id")
    delete.add_argument("--json", action="store_true", help="print the service's JSON answer")
    _add_service_flags(delete)
    delete.set_defaults(run=monitor_commands.delete)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evalsvc", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="serve the whole API locally")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=_env_int("PORT", 3000))
    serve.add_argument("--dynamodb-port", type=int, default=_env_int("EVALSVC_DYNAMODB_PORT", 8000))
    serve.add_argument("--data-dir", type=Path, default=_data_dir())
    serve.set_defaults(run=_serve)

    keys = commands.add_parser("keys", help="manage API keys").add_subparsers(
        dest="keys", required=True
    )
    create = keys.add_parser("create", help="create a key; prints it alone on the last line")
    create.add_argument("--tenant", required=True)
    create.add_argument("--user", required=True)
    create.add_argument("--email", required=True)
    _add_target_flags(create)
    create.set_defaults(run=_keys_create)
    listing = keys.add_parser("list", help="list keys (never the keys themselves)")
    listing.add_argument("--tenant")
    _add_target_flags(listing)
    listing.set_defaults(run=_keys_list)
    revoke = keys.add_parser("revoke", help="revoke a key, by key id or by the key")
    revoke.add_argument("key")
    _add_target_flags(revoke)
    revoke.set_defaults(run=_keys_revoke)

    tenants = commands.add_parser("tenants", help="tenants' LLM spending").add_subparsers(
        dest="tenants", required=True
    )
    limit = tenants.add_parser(
        "set-limit", help="set a tenant's own monthly LLM limit, none, or back to the default"
    )
    limit.add_argument("--tenant", required=True)
    amount = limit.add_mutually_exclusive_group(required=True)
    amount.add_argument("--monthly-usd", type=_usd_amount, help="the limit, in US dollars")
    amount.add_argument(
        "--unlimited",
        action="store_true",
        help="no limit at all, whatever the deployment's default",
    )
    amount.add_argument(
        "--clear",
        action="store_true",
        help="remove the tenant's own limit (or --unlimited): the default applies again",
    )
    _add_target_flags(limit)
    limit.set_defaults(run=_tenants_set_limit)
    usage = tenants.add_parser("usage", help="a tenant's LLM usage and spending in a month")
    usage.add_argument("--tenant", required=True)
    usage.add_argument("--month", help="YYYY-MM (UTC); default: this month")
    _add_target_flags(usage)
    usage.set_defaults(run=_tenants_usage)

    synthetic = commands.add_parser("synthetic", help="synthetic datasets").add_subparsers(
        dest="synthetic", required=True
    )
    imp = synthetic.add_parser("import", help="import a JSON Lines file of {input, output}")
    imp.add_argument("file", type=Path)
    imp.add_argument("--tenant", required=True)
    imp.add_argument("--id", help="dataset id (replaces that dataset); default: a new id")
    imp.add_argument("--system-prompt", help="the dataset's system prompt")
    _add_target_flags(imp)
    imp.set_defaults(run=_synthetic_import)

    push = commands.add_parser(
        "push", help="write a JSON Lines or CSV file of pairs as a seed dataset (replacing it)"
    )
    push.add_argument("file", type=Path, help="FILE.jsonl (or .json, .ndjson) or FILE.csv")
    push.add_argument("--seed", required=True, metavar="ID", help="the seed dataset's id")
    push.add_argument("--system-prompt", help="the dataset's system prompt")
    _add_service_flags(push)
    push.set_defaults(run=user_commands.push)

    metrics = commands.add_parser(
        "metrics",
        help="create a metrics set from questions and checks; prints its id",
        description="Create a metrics set (POST /specify_questions): the definitions of --file "
        "first, then --question and --check in the order given (a metric's index is its place "
        "in that order). Prints the set's id alone on stdout (the metrics, by index, on "
        "stderr); pass it to evaluate --metrics.",
    )
    metrics.add_argument(
        "--question",
        dest="definitions",
        action=metrics_files.AddDefinition,
        metavar="TEXT",
        help="a question the LLM judge scores each pair on, e.g. 'Is the answer polite?' "
        "(repeat for more)",
    )
    metrics.add_argument(
        "--check",
        dest="definitions",
        action=metrics_files.AddDefinition,
        metavar="NAME[:ARG]",
        help="a deterministic check, e.g. max_words:50, no_pii, regex:^[A-Z] (check: prefix "
        "optional; repeat for more)",
    )
    metrics.add_argument(
        "--file",
        type=Path,
        metavar="FILE",
        help="definitions from FILE.txt (one a line, # starts a comment; a check is written "
        'check:NAME) or FILE.json (["...", ...] or {"metrics": [...]})',
    )
    metrics.add_argument("--json", action="store_true", help="print the service's JSON answer")
    _add_service_flags(metrics)
    metrics.set_defaults(run=user_commands.metrics)

    evaluate = commands.add_parser(
        "evaluate", help="evaluate a dataset, following its progress; a table of the result"
    )
    dataset = evaluate.add_mutually_exclusive_group(required=True)
    dataset.add_argument("--seed", metavar="ID", help="a seed dataset (or latest)")
    dataset.add_argument("--synthetic", metavar="ID", help="a synthetic dataset (or latest)")
    evaluate.add_argument(
        "--metrics",
        metavar="ID",
        help="the metrics set (from evalsvc metrics); without it the tenant's latest set is "
        "used, with a warning naming it",
    )
    evaluate.add_argument(
        "--label", action="append", metavar="L", help="only pairs carrying this label (repeat: all)"
    )
    evaluate.add_argument(
        "--latest-n", type=_positive_int, metavar="N", help="only the N most recent pairs"
    )
    evaluate.add_argument(
        "--cluster-by",
        choices=["label", "input"],
        help="pairs that are not independent: those sharing their first label (or their "
        "input) count as one cluster; the table adds each metric's clustered interval",
    )
    evaluate.add_argument(
        "--judge-samples",
        type=int,
        choices=range(1, 6),
        metavar="K",
        help="ask the judge K times (1-5) about each pair and question, average the answers and "
        "report the judge's own noise; costs K times the calls",
    )
    evaluate.add_argument("--json", action="store_true", help="print the result's JSON body")
    _add_service_flags(evaluate)
    evaluate.set_defaults(run=user_commands.evaluate)

    rerun = commands.add_parser(
        "rerun",
        help="evaluate again exactly the pairs an evaluation scored, following its progress",
        description="Evaluate again exactly the pairs evaluation ID scored, as they were when "
        "scored (read from the dataset version it pinned, whatever was written to the dataset "
        "since), with its metric definitions, cluster_by and judge_samples (POST "
        "/evaluation/ID/rerun). Follows its progress, then prints the result, what produced it, "
        "and whether its pairs_digest equals the original's; exits 1 when it does not. A "
        "version past its retention (EVALSVC_VERSION_RETENTION_DAYS) is refused with HTTP 410, "
        "naming the day it expired.",
    )
    rerun.add_argument("id", metavar="ID", help="the evaluation result to run again")
    rerun.add_argument(
        "--max-cost-usd",
        type=_finite_float,
        metavar="X",
        help="refuse, before any LLM call, when the rerun could cost more than X dollars",
    )
    rerun.add_argument(
        "--async",
        dest="asynchronous",
        action="store_true",
        help="queue it and print the new result's id at once, without following it (then "
        "evalsvc report ID, or GET /evaluation/ID)",
    )
    rerun.add_argument(
        "--json",
        action="store_true",
        help="print the new result's JSON body (with --async: the answer that queued it)",
    )
    _add_service_flags(rerun)
    rerun.set_defaults(run=user_commands.rerun)

    compare = commands.add_parser("compare", help="compare two evaluations pair by pair")
    compare.add_argument("baseline", metavar="BASELINE", help="the baseline evaluation's id")
    compare.add_argument("candidate", metavar="CANDIDATE", help="the candidate evaluation's id")
    compare.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when any metric's verdict is regressed",
    )
    compare.add_argument("--alpha", type=_finite_float, help="significance level (default 0.05)")
    compare.add_argument("--limit", type=int, help="regressions listed at most (default 20)")
    compare.add_argument(
        "--cluster-by",
        choices=CLUSTER_BY,
        help="pairs that are not independent: add each metric's clustered interval, by the "
        "baseline pair's first label or its input",
    )
    compare.add_argument("--json", action="store_true", help="print the comparison's JSON body")
    _add_service_flags(compare)
    compare.set_defaults(run=user_commands.compare)

    plan = commands.add_parser(
        "plan",
        help="how many pairs a comparison needs to detect a difference",
        description="Per metric, how many pairs a comparison needs to detect a mean difference "
        "of --effect with probability --power (POST /plan): from the spread of the paired "
        "differences with CANDIDATE, or without one from the baseline's spread (two "
        "independent runs).",
    )
    plan.add_argument("baseline", metavar="BASELINE", help="the baseline evaluation's id")
    plan.add_argument(
        "candidate",
        metavar="CANDIDATE",
        nargs="?",
        help="a candidate evaluation's id: plan a paired comparison from their differences",
    )
    plan.add_argument(
        "--effect",
        type=_finite_float,
        required=True,
        metavar="X",
        help="the mean difference to detect, on the score scale (> 0)",
    )
    plan.add_argument("--alpha", type=_finite_float, help="significance level (default 0.05)")
    plan.add_argument(
        "--power", type=_finite_float, help="chance to detect the effect, 0.5-1 (default 0.8)"
    )
    plan.add_argument("--json", action="store_true", help="print the plan's JSON body")
    _add_service_flags(plan)
    plan.set_defaults(run=user_commands.plan)

    pairwise = commands.add_parser(
        "pairwise",
        help="judge which of 2-8 runs answers better, two at a time; a leaderboard",
        description="Ask the judge which of two runs' outputs for the same input is better, "
        "for the pairs all the runs share (POST /pairwise), in both orders unless --one-order; "
        "follows the work's progress when it is queued, then prints the leaderboard (Bradley-"
        "Terry strengths with 95% intervals), each two runs' matchup (wins, win rate, Holm-"
        "adjusted p, verdict) and how often the judge chose the output shown first. Exits 1 "
        "when the judging fails.",
    )
    pairwise.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="2 to 8 distinct evaluation result ids (complete), whose outputs are compared",
    )
    pairwise.add_argument(
        "--question",
        required=True,
        metavar="TEXT",
        help="the criterion, 1-2,000 characters, e.g. 'Which answer is more helpful?'",
    )
    pairwise.add_argument(
        "--one-order",
        action="store_true",
        help="judge each comparison once, not in both orders (half the calls; the judge's "
        "bias toward the first or second position no longer cancels)",
    )
    pairwise.add_argument(
        "--max-pairs",
        type=_positive_int,
        metavar="N",
        help="pair ids used at most (default 500; a sample when the runs share more)",
    )
    pairwise.add_argument(
        "--alpha",
        type=_finite_float,
        metavar="A",
        help="significance level of the matchups' verdicts, 0 < A < 0.5 (default 0.05)",
    )
    pairwise.add_argument(
        "--max-cost-usd",
        type=_finite_float,
        metavar="X",
        help="refuse, before any LLM call, when the judging could cost more than X dollars",
    )
    pairwise.add_argument(
        "--estimate",
        action="store_true",
        help="judge nothing: print what the judging would take and cost (POST /pairwise/estimate)",
    )
    pairwise.add_argument(
        "--json", action="store_true", help="print the final JSON body (or the estimate's)"
    )
    _add_service_flags(pairwise)
    pairwise.set_defaults(run=user_commands.pairwise)

    report = commands.add_parser("report", help="save an evaluation's (or comparison's) report")
    report.add_argument("id", metavar="ID", help="an evaluation id (the baseline with --compare)")
    report.add_argument("--compare", metavar="OTHER", help="the candidate evaluation's id")
    report.add_argument(
        "--cluster-by",
        choices=CLUSTER_BY,
        help="with --compare: the clustered interval too (by the baseline pair's label or input)",
    )
    report.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to save the HTML (- for stdout: refused when that is a terminal, unless "
        "--force); default report-ID.html or compare-ID-OTHER.html",
    )
    report.add_argument(
        "--force",
        action="store_true",
        help="with -o - on a terminal: write the page there anyway, its control characters "
        "replaced (shown, not obeyed)",
    )
    _add_service_flags(report)
    report.set_defaults(run=user_commands.report)

    _add_monitor_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    from evalsvc_tools.local.journal import StoreFileError

    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except ClientError as exc:
        print(f"evalsvc: {terminal_safe(exc.message)}", file=sys.stderr)
        return exc.exit_code
    except DomainError as exc:
        print(f"evalsvc: {terminal_safe(exc.message)}", file=sys.stderr)
        return 2
    except PricesInvalid as exc:
        print(f"evalsvc: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    except StoreFileError as exc:
        print(f"evalsvc: {terminal_safe(str(exc))}", file=sys.stderr)
        return 1
    except (OSError, KeyError) as exc:
        print(f"evalsvc: {terminal_safe(str(exc))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
