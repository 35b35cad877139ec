"""`evalsvc push` and `evalsvc metrics`: the user's data sent to the service (pair_files.py and
metrics_files.py read and check it first).

    evalsvc push FILE --seed ID [--system-prompt P]     a JSON Lines or CSV file → a seed dataset
    evalsvc metrics (--question Q | --check C)... [--file F] [--judges A,B[,...] [--jury J]]
                                                        create a metrics set; its id
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import check_dataset_id, is_client_id
from evalsvc.models.common import MAX_BODY_BYTES
from evalsvc.models.datasets import MAX_TEXT_CHARS
from evalsvc.models.metric_sets import AGGREGATES

from evalsvc_tools import metrics_files
from evalsvc_tools.client import EXIT_USAGE, ClientError, HttpError, encode_json, segment
from evalsvc_tools.commands.common import (
    Subcommands,
    add_service_flags,
    client_for,
    say_problems,
    user_command,
)
from evalsvc_tools.pair_files import BadFile, read_pairs
from evalsvc_tools.terminal import cut, terminal_json, terminal_safe


@user_command
def push(args: argparse.Namespace) -> int:
    """Write FILE as seed dataset ID in one request: the service replaces the dataset
    atomically, so a failed push leaves what was there."""
    try:
        dataset_id = check_dataset_id(args.seed)
    except InvalidInput as exc:  # "dataset id ... is not valid ..." or "... is reserved ..."
        raise ClientError(f"seed {exc.message}", EXIT_USAGE) from None
    prompt = args.system_prompt
    if prompt is not None and len(prompt) > MAX_TEXT_CHARS:
        raise ClientError(
            f"--system-prompt has {len(prompt):,} characters, over the limit of {MAX_TEXT_CHARS:,}",
            EXIT_USAGE,
        )
    client = client_for(args)  # settings first: a missing URL is said before a long file is read
    try:
        pairs = read_pairs(args.file)
    except BadFile as exc:
        say_problems(exc.problems)
        raise
    body: dict[str, Any] = {"data": pairs}
    if prompt is not None:
        body["system_prompt"] = prompt
    data = encode_json(body)
    if len(data) > MAX_BODY_BYTES:
        raise ClientError(
            f"{args.file}: {len(pairs):,} pairs make a request of {len(data):,} bytes, over the "
            f"{MAX_BODY_BYTES:,} one request to the service may carry. A seed dataset is written "
            "whole, in one request, so that a failed write leaves nothing half-written: push it "
            "as several datasets (a smaller file each), or shorten its texts. Nothing was sent.",
            EXIT_USAGE,
        )
    answer = client.request("POST", f"/data/seed/{segment(dataset_id)}", data=data).json()
    written = answer.get("id", dataset_id) if isinstance(answer, dict) else dataset_id
    written = terminal_safe(str(written))
    print(f"wrote {len(pairs):,} pairs to seed dataset {written} (it holds exactly these now)")
    return 0


# ---- metrics -----------------------------------------------------------------------------------


def _where_rejected(said: str, definitions: list[metrics_files.Definition]) -> str:
    """The service names a definition it refuses by its index (`metrics[2]: ...`): name it by
    where it came from instead (a file's line, or the flag)."""
    match = re.match(r"metrics\[(\d+)\]:?\s*(.*)", said, re.DOTALL)
    if match is None or int(match.group(1)) >= len(definitions):
        return said
    return f"{definitions[int(match.group(1))].where}: {match.group(2)}"


class AddJudges(argparse.Action):
    """`--judges a,b` and `--judges a --judges b` alike: each name, in the order given, added
    to one list (blanks around a name, and empty names, dropped)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        names = [name.strip() for name in str(values).split(",") if name.strip()]
        setattr(namespace, self.dest, [*(getattr(namespace, self.dest, None) or []), *names])


def _metrics_body(args: argparse.Namespace, definitions: list[str]) -> dict[str, object]:
    """POST /specify_questions' body: the definitions, and the jury when --judges names one
    (the service checks the names: 2-5 distinct judges it knows, each priced)."""
    if args.jury is not None and args.judges is None:
        raise ClientError(
            "--jury says how a jury's scores are combined: give --judges too", EXIT_USAGE
        )
    if args.judges is not None and not args.judges:
        raise ClientError("--judges names no judge: give A,B[,...]", EXIT_USAGE)
    body: dict[str, object] = {"metrics": definitions}
    if args.judges is not None:
        body["judges"] = args.judges
    if args.jury is not None:
        body["jury"] = args.jury
    return body


def _say_jury(answer: dict[str, object]) -> None:
    """On stderr under the metrics, the jury the set names, as the service stored it."""
    judges = answer.get("judges")
    if not isinstance(judges, list) or not judges:
        return
    named = ", ".join(cut(str(judge), 64) for judge in judges)
    aggregate = cut(str(answer.get("jury") or "mean"), 16)
    print(
        f"its questions are judged by a jury of {len(judges)} ({aggregate}): {named}",
        file=sys.stderr,
    )


@user_command
def metrics(args: argparse.Namespace) -> int:
    """Create a metrics set (POST /specify_questions) from --file, then --question/--check in
    the order given; the id alone on stdout, the metrics by index on stderr."""
    definitions: list[metrics_files.Definition] = []
    problems: list[str] = []
    if args.file is not None:
        definitions, problems = metrics_files.from_file(args.file)
    definitions += metrics_files.from_flags(args.definitions or [])
    try:
        metrics_files.check(definitions, problems)
    except metrics_files.BadDefinitions as exc:
        say_problems(exc.problems)
        raise
    body = _metrics_body(args, [d.text for d in definitions])
    client = client_for(args)
    try:
        answer = client.request("POST", "/specify_questions", body).json()
    except HttpError as exc:
        if exc.status != 400:
            raise
        raise ClientError(f"HTTP 400: {_where_rejected(exc.said, definitions)}") from None
    metrics_id = answer.get("metrics_id") if isinstance(answer, dict) else None
    if not isinstance(metrics_id, str) or not is_client_id(metrics_id):
        raise ClientError("POST /specify_questions answered without a metrics_id")
    if args.json:
        print(terminal_json(answer))
        return 0
    created = answer.get("definitions")
    shown = created if isinstance(created, list) else [d.text for d in definitions]
    print(f"created metrics set {metrics_id} with {len(shown)} metrics:", file=sys.stderr)
    for index, definition in enumerate(shown):
        print(f"  {index}  {cut(str(definition), 100)}", file=sys.stderr)
    _say_jury(answer)
    print(metrics_id)
    return 0


def add_parsers(commands: Subcommands) -> None:
    push_parser = commands.add_parser(
        "push", help="write a JSON Lines or CSV file of pairs as a seed dataset (replacing it)"
    )
    push_parser.add_argument("file", type=Path, help="FILE.jsonl (or .json, .ndjson) or FILE.csv")
    push_parser.add_argument("--seed", required=True, metavar="ID", help="the seed dataset's id")
    push_parser.add_argument("--system-prompt", help="the dataset's system prompt")
    add_service_flags(push_parser)
    push_parser.set_defaults(run=push)

    metrics_parser = commands.add_parser(
        "metrics",
        help="create a metrics set from questions and checks; prints its id",
        description="Create a metrics set (POST /specify_questions): the definitions of --file "
        "first, then --question and --check in the order given (a metric's index is its place "
        "in that order). Prints the set's id alone on stdout (the metrics, by index, on "
        "stderr); pass it to evaluate --metrics.",
    )
    metrics_parser.add_argument(
        "--question",
        dest="definitions",
        action=metrics_files.AddDefinition,
        metavar="TEXT",
        help="a question the LLM judge scores each pair on, e.g. 'Is the answer polite?' "
        "(repeat for more)",
    )
    metrics_parser.add_argument(
        "--check",
        dest="definitions",
        action=metrics_files.AddDefinition,
        metavar="NAME[:ARG]",
        help="a deterministic check, e.g. max_words:50, no_pii, regex:^[A-Z] (check: prefix "
        "optional; repeat for more)",
    )
    metrics_parser.add_argument(
        "--file",
        type=Path,
        metavar="FILE",
        help="definitions from FILE.txt (one a line, # starts a comment; a check is written "
        'check:NAME) or FILE.json (["...", ...] or {"metrics": [...]})',
    )
    metrics_parser.add_argument(
        "--judges",
        action=AddJudges,
        metavar="A,B[,...]",
        help="a jury: 2-5 of the service's judges (EVALSVC_JUDGES) each score every question, "
        "a pair's score their mean or median (--jury); A,B or repeat the option",
    )
    metrics_parser.add_argument(
        "--jury",
        choices=AGGREGATES,
        help="how a jury's scores make a pair's: mean (the default) or median",
    )
    metrics_parser.add_argument(
        "--json", action="store_true", help="print the service's JSON answer"
    )
    add_service_flags(metrics_parser)
    metrics_parser.set_defaults(run=metrics)
