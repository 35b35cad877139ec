"""The operator's commands of `evalsvc`, straight against DynamoDB (table names from
--stack-name outputs, from flags, or from the environment) or, with --local, the local embedded
store; and `serve`, the whole API locally:

    evalsvc serve                         the local API on 127.0.0.1:3000/v1
    evalsvc keys create --tenant T --user U --email E
    evalsvc keys list [--tenant T]
    evalsvc keys revoke KEY_OR_KEY_ID
    evalsvc synthetic import FILE.jsonl --tenant T [--id ID] [--system-prompt TEXT]
    evalsvc tenants set-limit --tenant T (--monthly-usd X | --unlimited | --clear)
    evalsvc tenants usage --tenant T [--month YYYY-MM]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from evalsvc.core.errors import DomainError
from evalsvc.core.identifiers import format_ms
from evalsvc.models.datasets import MAX_PAIRS, MAX_TEXT_CHARS

from evalsvc_tools.commands.common import Subcommands
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
            apply_environment(
                {**LOCAL_CREDENTIALS, **tables, "EVALSVC_DYNAMODB_ENDPOINT_URL": endpoint}
            )
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
        env["EVALSVC_API_KEYS_TABLE"] = args.api_keys_table
    if args.datasets_table:
        env["EVALSVC_DATASETS_TABLE"] = args.datasets_table
    if args.usage_table:
        env["EVALSVC_USAGE_TABLE"] = args.usage_table
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
        "EVALSVC_API_KEYS_TABLE": outputs["ApiKeysTableName"],
        "EVALSVC_DATASETS_TABLE": outputs["DatasetsTableName"],
    }
    if "UsageTableName" in outputs:
        tables["EVALSVC_USAGE_TABLE"] = outputs["UsageTableName"]
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


def _add_target_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("where")
    group.add_argument("--local", action="store_true", help="the local embedded store (make run)")
    group.add_argument("--data-dir", type=Path, default=_data_dir(), help="local store directory")
    group.add_argument("--stack-name", help="read table names from this CloudFormation stack")
    group.add_argument("--region", help="AWS region")
    group.add_argument("--api-keys-table", help="API keys table name")
    group.add_argument("--datasets-table", help="datasets table name")
    group.add_argument("--usage-table", help="usage table name")


def add_parsers(commands: Subcommands) -> None:
    """`evalsvc serve`, `evalsvc keys ...`, `evalsvc tenants ...`, `evalsvc synthetic ...`."""
    serve_parser = commands.add_parser("serve", help="serve the whole API locally")
    serve_parser.add_argument("--host", default="127.0.0.1")
    serve_parser.add_argument("--port", type=int, default=_env_int("PORT", 3000))
    serve_parser.add_argument(
        "--dynamodb-port", type=int, default=_env_int("EVALSVC_DYNAMODB_PORT", 8000)
    )
    serve_parser.add_argument("--data-dir", type=Path, default=_data_dir())
    serve_parser.set_defaults(run=_serve)

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
