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

The user's commands talk to any deployment over HTTP (client.py), with the API's base URL and
a key from --url/--key or EVALSVC_URL/EVALSVC_API_KEY (plain http only to this machine, unless
--insecure-http):

    evalsvc push FILE.jsonl|FILE.csv --seed ID [--system-prompt TEXT]
    evalsvc metrics [--question TEXT]... [--check NAME[:ARG]]... [--file FILE] [--json]
    evalsvc evaluate (--seed ID | --synthetic ID) [--metrics ID] [--label L]... [--latest-n N]
                     [--json]
    evalsvc compare BASELINE_ID CANDIDATE_ID [--fail-on-regression]
                    [--cluster-by label|input|conversation] [--json]
    evalsvc plan BASELINE_ID [CANDIDATE_ID] --effect X [--alpha A] [--power P] [--json]
    evalsvc pairwise RUN RUN [RUN...] --question TEXT [--one-order] [--max-pairs N]
                     [--alpha A] [--max-cost-usd X] [--estimate] [--json]
    evalsvc report ID [--compare OTHER_ID [--cluster-by label|input|conversation]]
                   [-o FILE | -o - [--force]]
    evalsvc monitors create --name N --dataset ID --metrics ID --schedule S [--pairs N]
                     [--label L]... [--baseline previous|ID] [--alpha A] [--threshold T]
                     [--max-cost-usd X] [--webhook-url URL --webhook-secret-env NAME] [--json]
    evalsvc monitors list [--json]
    evalsvc monitors run ID [--wait] [--json]
    evalsvc monitors history ID [--limit N | --all] [--json]
    evalsvc monitors delete ID [--json]

Each group of commands is a module of commands/, with its parsers (commands/__init__.py lists
them); this module puts the parsers together and turns the errors into exit statuses.
"""

from __future__ import annotations

import argparse
import sys

from evalsvc.core.errors import DomainError
from evalsvc.spending.prices import PricesInvalid

from evalsvc_tools.client import ClientError
from evalsvc_tools.commands import (
    compare,
    data,
    evaluate,
    monitors,
    operator,
    pairwise,
    report,
)
from evalsvc_tools.terminal import terminal_safe


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="evalsvc", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    # In the order `evalsvc --help` lists them.
    for group in (operator, data, evaluate, compare, pairwise, report, monitors):
        group.add_parsers(commands)
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
