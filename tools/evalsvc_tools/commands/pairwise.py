"""`evalsvc pairwise`: which of 2-8 runs answers better, judged two at a time (POST /pairwise,
or /pairwise/estimate for what it would cost), followed like an evaluation when queued; a
leaderboard.

    evalsvc pairwise RUN RUN [RUN...] --question Q      which runs answer better: a leaderboard
"""

from __future__ import annotations

import argparse
from typing import Any

from evalsvc.core.identifiers import CLIENT_ID_RULE, is_client_id
from evalsvc.models.usage import MAX_COST_USD

from evalsvc_tools.client import ClientError
from evalsvc_tools.commands.common import (
    EXIT_INTERRUPTED,
    Subcommands,
    add_service_flags,
    client_for,
    finite_float,
    poll_seconds,
    positive_int,
    refuse,
    user_command,
)
from evalsvc_tools.commands.polling import (
    PAIRWISE,
    follow_shown,
    location_id,
    read_retrying,
    show_ended,
)
from evalsvc_tools.render.pairwise import describe_estimate, render_pairwise
from evalsvc_tools.terminal import rich_console, terminal_json

# E5's bounds on POST /pairwise, checked before anything is sent (max_pairs: --max-pairs' type).
MIN_RUNS = 2
MAX_RUNS = 8
MAX_QUESTION_CHARS = 2_000
MAX_ALPHA = 0.5


def _pairwise_body(args: argparse.Namespace) -> dict[str, Any]:
    """The body of POST /pairwise (and of /pairwise/estimate) from the arguments; every
    problem with them is said, and nothing sent, when there is any."""
    runs: list[str] = args.runs
    problems: list[str] = []
    if not MIN_RUNS <= len(runs) <= MAX_RUNS:
        problems.append(
            f"pairwise judges {MIN_RUNS} to {MAX_RUNS} runs (evaluation result ids), "
            f"not {len(runs)}"
        )
    problems += [
        f"run {run[:140]!r} is not an evaluation result id: {CLIENT_ID_RULE}"
        for run in runs
        if not is_client_id(run)
    ]
    repeated = sorted({run for run in runs if runs.count(run) > 1}, key=runs.index)
    if repeated:
        problems.append(
            f"each run is judged once, but {', '.join(repr(r[:140]) for r in repeated)} "
            f"{'is' if len(repeated) == 1 else 'are'} given more than once"
        )
    question: str = args.question
    if not question.strip():
        problems.append(
            "--question is empty: give the criterion, e.g. 'Which answer is more helpful?'"
        )
    elif len(question) > MAX_QUESTION_CHARS:
        over = f"over the limit of {MAX_QUESTION_CHARS:,}"
        problems.append(f"--question has {len(question):,} characters, {over}")
    if args.alpha is not None and not 0 < args.alpha < MAX_ALPHA:
        problems.append(f"--alpha is {args.alpha:g}: it must be more than 0 and less than 0.5")
    if args.max_cost_usd is not None and not 0 < args.max_cost_usd <= MAX_COST_USD:
        problems.append(
            f"--max-cost-usd is {args.max_cost_usd:g}: it must be more than 0 and at most "
            f"{MAX_COST_USD:,.0f}"
        )
    refuse(problems)
    body: dict[str, Any] = {"result_ids": runs, "question": question}
    if args.one_order:
        body["both_orders"] = False
    if args.max_pairs is not None:
        body["max_pairs"] = args.max_pairs
    if args.alpha is not None:
        body["alpha"] = args.alpha
    if args.max_cost_usd is not None:
        body["max_cost_usd"] = args.max_cost_usd
    return body


def _pairwise_id(body: dict[str, Any], location: str | None, status: int) -> str:
    found = body.get("pairwise_id")
    if isinstance(found, str) and is_client_id(found):
        return found
    named = location_id(location, PAIRWISE.route)
    if named is None:
        raise ClientError(f"POST /pairwise answered HTTP {status} without a pairwise_id")
    return named


@user_command
def pairwise(args: argparse.Namespace) -> int:
    """POST /pairwise (or /pairwise/estimate): the runs' outputs judged two by two against
    the question, followed like an evaluation when queued; the leaderboard, the matchups and
    the judge's position bias as tables, or the final body (--json)."""
    body = _pairwise_body(args)
    client = client_for(args)
    if args.estimate:
        # Stores nothing, so asked again while the service says it may answer later.
        estimate = read_retrying(client, "POST", "/pairwise/estimate", body).json()
        if not isinstance(estimate, dict):
            raise ClientError("POST /pairwise/estimate did not answer with an object")
        print(terminal_json(estimate) if args.json else describe_estimate(estimate))
        return 0
    interval = poll_seconds()
    if not args.json:
        rich_console()  # say now, not after the run, when rich is missing
    # Queued at once when the service honours respond-async, so the progress shows from the
    # start; else it answers 200 when the work fits the request, 202 when it does not.
    answer = client.request("POST", "/pairwise", body, headers={"Prefer": "respond-async"})
    first = answer.json()
    if not isinstance(first, dict):
        raise ClientError(f"POST /pairwise answered HTTP {answer.status} without an object")
    pairwise_id = _pairwise_id(first, answer.header("Location"), answer.status)
    path = PAIRWISE.path(pairwise_id)
    try:
        if answer.status == 202 or first.get("status") == "running":
            final = follow_shown(client, PAIRWISE, pairwise_id, first, interval)
            if args.json:  # followed with one verdict a page: the body with its first page
                final = read_retrying(client, "GET", path).json()
        elif "leaderboard" in first:  # finished inside the request: the whole body
            final = first
        else:  # ended already, answered with its id and status only
            final = read_retrying(client, "GET", path).json()
    except KeyboardInterrupt:
        raise ClientError(
            f"interrupted; pairwise judging {pairwise_id} goes on in the service "
            f"(GET /pairwise/{pairwise_id})",
            EXIT_INTERRUPTED,
        ) from None
    return show_ended(
        args, final, f"pairwise judging {pairwise_id}", f"/pairwise/{pairwise_id}", render_pairwise
    )


def add_parsers(commands: Subcommands) -> None:
    pairwise_parser = commands.add_parser(
        "pairwise",
        help="judge which of 2-8 runs answers better, two at a time; a leaderboard",
        description="Ask the judge which of two runs' outputs for the same input is better, "
        "for the pairs all the runs share (POST /pairwise), in both orders unless --one-order; "
        "follows the work's progress when it is queued, then prints the leaderboard (Bradley-"
        "Terry strengths with 95% intervals), each two runs' matchup (wins, win rate, Holm-"
        "adjusted p, verdict) and how often the judge chose the output shown first. Exits 1 "
        "when the judging fails.",
    )
    pairwise_parser.add_argument(
        "runs",
        nargs="+",
        metavar="RUN",
        help="2 to 8 distinct evaluation result ids (complete), whose outputs are compared",
    )
    pairwise_parser.add_argument(
        "--question",
        required=True,
        metavar="TEXT",
        help="the criterion, 1-2,000 characters, e.g. 'Which answer is more helpful?'",
    )
    pairwise_parser.add_argument(
        "--one-order",
        action="store_true",
        help="judge each comparison once, not in both orders (half the calls; the judge's "
        "bias toward the first or second position no longer cancels)",
    )
    pairwise_parser.add_argument(
        "--max-pairs",
        type=positive_int,
        metavar="N",
        help="pair ids used at most (default 500; a sample when the runs share more)",
    )
    pairwise_parser.add_argument(
        "--alpha",
        type=finite_float,
        metavar="A",
        help="significance level of the matchups' verdicts, 0 < A < 0.5 (default 0.05)",
    )
    pairwise_parser.add_argument(
        "--max-cost-usd",
        type=finite_float,
        metavar="X",
        help="refuse, before any LLM call, when the judging could cost more than X dollars",
    )
    pairwise_parser.add_argument(
        "--estimate",
        action="store_true",
        help="judge nothing: print what the judging would take and cost (POST /pairwise/estimate)",
    )
    pairwise_parser.add_argument(
        "--json", action="store_true", help="print the final JSON body (or the estimate's)"
    )
    add_service_flags(pairwise_parser)
    pairwise_parser.set_defaults(run=pairwise)
