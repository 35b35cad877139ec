"""`evalsvc report`: the HTML report of an evaluation result (or of a comparison of two), saved
to a file, written whole or not at all, or to stdout.

    evalsvc report ID [--compare OTHER] [-o FILE]       the HTML report of a result or comparison
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys
from pathlib import Path

from evalsvc_tools.client import EXIT_USAGE, Client, ClientError, segment
from evalsvc_tools.commands.anchored import anchored_lines
from evalsvc_tools.commands.common import (
    CLUSTER_BY,
    Subcommands,
    add_service_flags,
    client_for,
    user_command,
)
from evalsvc_tools.commands.polling import read_retrying
from evalsvc_tools.render.jury import jury_lines
from evalsvc_tools.terminal import terminal_safe


def _file_part(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", value)[:100] or "_"


def _write_atomically(path: Path, content: bytes) -> None:
    """The whole file or none of it: written beside its place, then moved there."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        with temporary.open("xb") as out:
            out.write(content)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


REPORT_ON_TERMINAL = (
    "-o - would write the HTML report to this terminal, and the page holds the datasets' and "
    "judges' text as it is, control characters included, which a terminal obeys (clearing the "
    "screen, setting its title, making links): save it (-o FILE), pipe it (| less), or pass "
    "--force to write it here with those characters replaced"
)


@user_command
def report(args: argparse.Namespace) -> int:
    on_terminal = args.output == "-" and sys.stdout.isatty()
    if on_terminal and not args.force:
        raise ClientError(REPORT_ON_TERMINAL, EXIT_USAGE)
    if args.cluster_by is not None and args.compare is None:
        raise ClientError("--cluster-by clusters a comparison: give --compare OTHER", EXIT_USAGE)
    client = client_for(args)
    if args.compare is None:
        path = f"/evaluation/{segment(args.id)}/report"
        query = None
        default = f"report-{_file_part(args.id)}.html"
    else:
        path = "/compare/report"
        query = {"baseline_id": args.id, "candidate_id": args.compare}
        if args.cluster_by is not None:
            query["cluster_by"] = args.cluster_by
        default = f"compare-{_file_part(args.id)}-{_file_part(args.compare)}.html"
    answer = read_retrying(client, "GET", path, query=query, headers={"Accept": "text/html"})
    kind = (answer.header("Content-Type") or "").split(";")[0].strip().lower()
    if kind != "text/html":
        raise ClientError(f"GET {path} answered {kind or 'no Content-Type'}, not an HTML page")
    if args.output == "-":
        # To a pipe or a file the page as it is; to a terminal (--force) shown, never obeyed.
        page = answer.body
        if on_terminal:
            page = terminal_safe(page.decode("utf-8", "replace")).encode("utf-8")
        sys.stdout.buffer.write(page)
        sys.stdout.flush()
    else:
        target = Path(args.output or default)
        try:
            _write_atomically(target, answer.body)
        except OSError as exc:
            raise ClientError(f"{target}: cannot be written ({exc.strerror or exc})") from None
        print(target)
    if args.compare is None:
        _say_below(client, args.id)
    return 0


def _say_below(client: Client, results_id: str) -> None:
    """On stderr (stdout holds the page or its file's name alone), what `evaluate` prints below
    its table for a complete result: each metric's jury and each model's part of the usage
    (E13, from the result read here), then what people would say of each metric with audit
    labels (E12). The page says it too."""
    try:
        result = read_retrying(client, "GET", f"/evaluation/{segment(results_id)}").json()
    except ClientError as exc:
        print(
            f"evalsvc: juries and what people would say are not shown: "
            f"{terminal_safe(exc.message)}",
            file=sys.stderr,
        )
        return
    if not isinstance(result, dict) or result.get("status") != "complete":
        return
    for line in jury_lines(result):
        print(line, file=sys.stderr)
    definitions = result.get("metrics_definitions")
    if isinstance(definitions, list):
        for line in anchored_lines(client, results_id, len(definitions)):
            print(line, file=sys.stderr)


def add_parsers(commands: Subcommands) -> None:
    report_parser = commands.add_parser(
        "report", help="save an evaluation's (or comparison's) report"
    )
    report_parser.add_argument(
        "id", metavar="ID", help="an evaluation id (the baseline with --compare)"
    )
    report_parser.add_argument("--compare", metavar="OTHER", help="the candidate evaluation's id")
    report_parser.add_argument(
        "--cluster-by",
        choices=CLUSTER_BY,
        help="with --compare: the clustered interval too (by the baseline pair's label, input "
        "or conversation)",
    )
    report_parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to save the HTML (- for stdout: refused when that is a terminal, unless "
        "--force); default report-ID.html or compare-ID-OTHER.html",
    )
    report_parser.add_argument(
        "--force",
        action="store_true",
        help="with -o - on a terminal: write the page there anyway, its control characters "
        "replaced (shown, not obeyed)",
    )
    add_service_flags(report_parser)
    report_parser.set_defaults(run=report)
