"""`evalsvc evaluate` and `evalsvc rerun`: an evaluation started (or started again on exactly the
pairs an earlier one scored), followed with its progress, and its result drawn as a table.

    evalsvc evaluate (--seed ID | --synthetic ID) ...   run an evaluation, with its progress
    evalsvc rerun ID [--max-cost-usd X] [--async]       evaluate again exactly what ID scored
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from evalsvc.core.identifiers import CLIENT_ID_RULE, is_client_id
from evalsvc.models.usage import MAX_COST_USD

from evalsvc_tools.client import EXIT_USAGE, Client, ClientError, HttpError, segment
from evalsvc_tools.commands.anchored import anchored_lines
from evalsvc_tools.commands.common import (
    CLUSTER_BY,
    EXIT_INTERRUPTED,
    Subcommands,
    add_service_flags,
    client_for,
    count,
    finite_float,
    poll_seconds,
    positive_int,
    user_command,
)
from evalsvc_tools.commands.polling import (
    EVALUATION,
    SAMPLED_EVALUATION,
    follow_shown,
    location_id,
    read_retrying,
    show_ended,
)
from evalsvc_tools.render.evaluation import render_evaluation
from evalsvc_tools.terminal import cut, rich_console, terminal_json, terminal_safe


def _results_id(body: Any, status: int, path: str = "/evaluate") -> str:
    if isinstance(body, dict):
        found = body.get("eval_results_id") or body.get("results_id")
        if isinstance(found, str) and is_client_id(found):  # a result id, nothing else
            return found
    raise ClientError(f"POST {path} answered HTTP {status} without an eval_results_id")


def _evaluate_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = (
        {"seed_data_id": args.seed}
        if args.seed is not None
        else {"synthetic_data_id": args.synthetic}
    )
    if args.metrics:
        body["metrics_id"] = args.metrics
    query: dict[str, Any] = {}
    if args.label:
        query["pair_labels"] = args.label
    if args.latest_n is not None:
        query["latest_n_pairs"] = args.latest_n
    if query:
        body["pair_query"] = query
    if args.cluster_by is not None:
        body["cluster_by"] = args.cluster_by
    if args.judge_samples is not None:
        body["judge_samples"] = args.judge_samples
    return body


class MetricsNamer:
    """Says once, on stderr, which metrics set an evaluation scores with, from the first
    answer that names it: a warning when the command did not choose it (--metrics absent),
    since then the service took the tenant's latest set, whichever that is now."""

    def __init__(self, results_id: str, chosen: str | None) -> None:
        self.results_id = results_id
        self.chosen = chosen
        self.said = False

    def __call__(self, body: dict[str, Any]) -> None:
        metrics_id = body.get("metrics_id")
        if self.said or not isinstance(metrics_id, str) or not metrics_id:
            return
        self.said = True
        definitions = body.get("metrics_definitions")
        count = len(definitions) if isinstance(definitions, list) else 0
        named = f"metrics set {cut(metrics_id, 128)} ({count} metric{'s' if count != 1 else ''})"
        dataset = cut(str(body.get("dataset_id")), 128)
        if self.chosen is None:
            print(
                f"evalsvc: warning: no --metrics given, so evaluation {self.results_id} of "
                f"dataset {dataset} uses the tenant's latest {named}; pass --metrics ID to "
                "choose the set (evalsvc metrics creates one)",
                file=sys.stderr,
            )
        else:
            print(
                f"evaluation {self.results_id} of dataset {dataset} uses {named}",
                file=sys.stderr,
            )


def _start_evaluation(client: Client, path: str, body: dict[str, Any]) -> tuple[Any, int]:
    """POST `body` to `path`, an evaluation queued at once when the service honours
    respond-async (so that its progress shows from the start): the answer and its status."""
    try:
        answer = client.request("POST", path, body, headers={"Prefer": "respond-async"})
        return answer.json(), answer.status
    except HttpError as exc:
        # Were respond-async not honoured (a proxy dropping Prefer), a plain request that
        # outlives its wait answers 503 with the result to follow in Location.
        queued = location_id(exc.location) if exc.status == 503 else None
        if queued is None:
            raise
        return {"eval_results_id": queued, "status": "running"}, exc.status


def _evaluation_result(
    client: Client,
    results_id: str,
    first: dict[str, Any],
    status: int,
    samples: int,
    interval: float,
    on_answer: Callable[[dict[str, Any]], None] | None = None,
) -> Any:
    """The result of the evaluation `first` (with `status`) answered for: followed with its
    progress while it runs (in judge calls with `samples` > 1, asking at most every `interval`
    seconds), else read as a result, the shape --json prints whichever way the run went.
    Ctrl-C says the evaluation goes on."""
    try:
        if status in (202, 503) or first.get("status") == "running":
            kind = SAMPLED_EVALUATION if samples > 1 else EVALUATION
            return follow_shown(client, kind, results_id, first, interval, on_answer)
        # Done inside the request (a v1 body, or a finished job's status).
        result = client.request("GET", f"/evaluation/{segment(results_id)}").json()
        if isinstance(result, dict) and on_answer is not None:
            on_answer(result)
        return result
    except KeyboardInterrupt:
        raise ClientError(
            f"interrupted; evaluation {results_id} goes on in the service "
            f"(GET /evaluation/{results_id}, or evalsvc report {results_id})",
            EXIT_INTERRUPTED,
        ) from None


@user_command
def evaluate(args: argparse.Namespace) -> int:
    client = client_for(args)
    interval = poll_seconds()
    if not args.json:
        rich_console()  # say now, not after the run, when rich is missing
    try:
        body, status = _start_evaluation(client, "/evaluate", _evaluate_body(args))
    except HttpError as exc:
        if exc.status == 404 and args.metrics is None and "no metrics set" in exc.said:
            raise ClientError(
                f"{exc.message}; from the command line: evalsvc metrics --check non_empty "
                "--question 'Is the answer polite?'"
            ) from None
        raise
    results_id = _results_id(body, status)
    name_metrics = MetricsNamer(results_id, args.metrics)
    samples = args.judge_samples or 1
    result = _evaluation_result(client, results_id, body, status, samples, interval, name_metrics)
    code = show_ended(
        args, result, f"evaluation {results_id}", f"/evaluation/{results_id}", render_evaluation
    )
    if not args.json:
        print_anchored(client, results_id, result)
    return code


def print_anchored(client: Client, results_id: str, result: Any) -> None:
    """Below a complete result's table, what people would say of each metric with audit labels
    (E12, GET /evaluation/{id}/anchored); nothing for a metric without."""
    if not isinstance(result, dict) or result.get("status") != "complete":
        return
    definitions = result.get("metrics_definitions")
    if not isinstance(definitions, list):
        return
    lines = anchored_lines(client, results_id, len(definitions))
    if lines:
        from rich.text import Text

        rich_console().print(Text("\n".join(lines)))


# ---- rerun ---------------------------------------------------------------------------------------


def _pairs_digest(result: Any) -> str | None:
    inputs = result.get("inputs") if isinstance(result, dict) else None
    digest = inputs.get("pairs_digest") if isinstance(inputs, dict) else None
    return digest if isinstance(digest, str) else None


def _check_same_pairs(args: argparse.Namespace, original: dict[str, Any], result: Any) -> None:
    """Say whether the rerun scored the pairs the original did (equal pairs_digest), on
    stdout with the result (stderr with --json); ClientError when it did not."""
    before, after = _pairs_digest(original), _pairs_digest(result)
    out = sys.stderr if args.json else sys.stdout
    if before is None or after is None:
        which = "the original's" if before is None else "the rerun's"
        print(
            f"evalsvc: {which} pairs_digest is not recorded: whether the rerun scored the same "
            "pairs is not known",
            file=sys.stderr,
        )
        return
    if before != after:
        raise ClientError(
            f"the rerun's pairs_digest {terminal_safe(after)} differs from the original's "
            f"{terminal_safe(before)}: it did not score the pairs evaluation {args.id} scored"
        )
    print(
        f"pairs_digest {terminal_safe(after)} equals evaluation {args.id}'s: the same pairs "
        "were scored again",
        file=out,
    )


@user_command
def rerun(args: argparse.Namespace) -> int:
    """POST /evaluation/{id}/rerun: exactly the pairs evaluation ID scored, evaluated again
    with its definitions and judge settings; followed as evaluate follows, then shown with
    what produced it and whether its pairs_digest equals the original's (read first with GET
    /evaluation/{id}). With --async it is queued and its id printed, not followed."""
    if not is_client_id(args.id):
        raise ClientError(
            f"{args.id[:140]!r} is not an evaluation result id: {CLIENT_ID_RULE}; nothing was sent",
            EXIT_USAGE,
        )
    if args.max_cost_usd is not None and not 0 < args.max_cost_usd <= MAX_COST_USD:
        raise ClientError(
            f"--max-cost-usd is {args.max_cost_usd:g}: it must be more than 0 and at most "
            f"{MAX_COST_USD:,.0f}; nothing was sent",
            EXIT_USAGE,
        )
    client = client_for(args)
    interval = poll_seconds()
    if not args.json:
        rich_console()  # say now, not after the run, when rich is missing
    path = f"/evaluation/{segment(args.id)}"
    original = read_retrying(client, "GET", path).json()
    if not isinstance(original, dict):
        raise ClientError(f"GET {path} did not answer with an object")
    body: dict[str, Any] = {}
    if args.max_cost_usd is not None:
        body["max_cost_usd"] = args.max_cost_usd
    first, status = _start_evaluation(client, f"{path}/rerun", body)
    results_id = _results_id(first, status, f"/evaluation/{args.id}/rerun")
    if args.asynchronous:
        print(terminal_json(first) if args.json else results_id)
        print(
            f"evaluation {results_id} evaluates again the pairs evaluation {args.id} scored: "
            f"follow it with GET /evaluation/{results_id}, or evalsvc report {results_id}",
            file=sys.stderr,
        )
        return 0
    print(
        f"evaluation {results_id} evaluates again the {count(original, 'pair_count'):,} pairs "
        f"evaluation {args.id} scored, of dataset {cut(str(original.get('dataset_id')), 128)}",
        file=sys.stderr,
    )
    samples = count(original, "judge_samples") or 1
    result = _evaluation_result(client, results_id, first, status, samples, interval)
    show_ended(
        args, result, f"evaluation {results_id}", f"/evaluation/{results_id}", render_evaluation
    )
    _check_same_pairs(args, original, result)
    return 0


def add_parsers(commands: Subcommands) -> None:
    evaluate_parser = commands.add_parser(
        "evaluate", help="evaluate a dataset, following its progress; a table of the result"
    )
    dataset = evaluate_parser.add_mutually_exclusive_group(required=True)
    dataset.add_argument("--seed", metavar="ID", help="a seed dataset (or latest)")
    dataset.add_argument("--synthetic", metavar="ID", help="a synthetic dataset (or latest)")
    evaluate_parser.add_argument(
        "--metrics",
        metavar="ID",
        help="the metrics set (from evalsvc metrics); without it the tenant's latest set is "
        "used, with a warning naming it",
    )
    evaluate_parser.add_argument(
        "--label", action="append", metavar="L", help="only pairs carrying this label (repeat: all)"
    )
    evaluate_parser.add_argument(
        "--latest-n", type=positive_int, metavar="N", help="only the N most recent pairs"
    )
    evaluate_parser.add_argument(
        "--cluster-by",
        choices=CLUSTER_BY,
        help="pairs that are not independent: those sharing their first label (or their "
        "input, or their conversation_id) count as one cluster; the table adds each metric's "
        "clustered interval",
    )
    evaluate_parser.add_argument(
        "--judge-samples",
        type=int,
        choices=range(1, 6),
        metavar="K",
        help="ask the judge K times (1-5) about each pair and question, average the answers and "
        "report the judge's own noise; costs K times the calls",
    )
    evaluate_parser.add_argument("--json", action="store_true", help="print the result's JSON body")
    add_service_flags(evaluate_parser)
    evaluate_parser.set_defaults(run=evaluate)

    rerun_parser = commands.add_parser(
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
    rerun_parser.add_argument("id", metavar="ID", help="the evaluation result to run again")
    rerun_parser.add_argument(
        "--max-cost-usd",
        type=finite_float,
        metavar="X",
        help="refuse, before any LLM call, when the rerun could cost more than X dollars",
    )
    rerun_parser.add_argument(
        "--async",
        dest="asynchronous",
        action="store_true",
        help="queue it and print the new result's id at once, without following it (then "
        "evalsvc report ID, or GET /evaluation/ID)",
    )
    rerun_parser.add_argument(
        "--json",
        action="store_true",
        help="print the new result's JSON body (with --async: the answer that queued it)",
    )
    add_service_flags(rerun_parser)
    rerun_parser.set_defaults(run=rerun)
