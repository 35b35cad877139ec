"""`evalsvc compare` and `evalsvc plan`: two evaluations compared pair by pair (POST /compare, as
a table; with --fail-on-regression a CI gate), and the pairs a comparison needs (POST /plan).

    evalsvc compare BASELINE CANDIDATE ...              POST /compare, as a table; a CI gate
    evalsvc plan BASELINE [CANDIDATE] --effect X        POST /plan: the pairs a comparison needs
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evalsvc_tools.client import ClientError
from evalsvc_tools.commands.common import (
    CLUSTER_BY,
    Subcommands,
    add_service_flags,
    client_for,
    finite_float,
    user_command,
)
from evalsvc_tools.commands.polling import read_retrying
from evalsvc_tools.render.comparison import render_comparison, render_plan
from evalsvc_tools.render.figures import format_p_value, format_signed
from evalsvc_tools.terminal import cut, rich_console, terminal_json

if TYPE_CHECKING:
    from rich.console import Console


def regressed_metrics(comparison: dict[str, Any]) -> list[dict[str, Any]]:
    metrics = comparison.get("metrics")
    return [
        m
        for m in (metrics if isinstance(metrics, list) else [])
        if isinstance(m, dict) and m.get("verdict") == "regressed"
    ]


def _post_and_show(
    args: argparse.Namespace,
    path: str,
    body: dict[str, Any],
    render: Callable[[dict[str, Any], Console], None],
) -> dict[str, Any]:
    """POST `body` to `path` (asked again while the service says to), then print the answer:
    its JSON with --json, else `render`ed; the answer."""
    client = client_for(args)
    if not args.json:
        rich_console()  # rich is there, before anything is asked
    answer = read_retrying(client, "POST", path, body).json()
    if not isinstance(answer, dict):
        raise ClientError(f"POST {path} did not answer with an object")
    if args.json:
        print(terminal_json(answer))
    else:
        render(answer, rich_console())
    return answer


@user_command
def compare(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"baseline_id": args.baseline, "candidate_id": args.candidate}
    if args.alpha is not None:
        body["alpha"] = args.alpha
    if args.limit is not None:
        body["limit"] = args.limit
    if args.cluster_by is not None:
        body["cluster_by"] = args.cluster_by
    comparison = _post_and_show(args, "/compare", body, render_comparison)
    regressed = regressed_metrics(comparison)
    if args.fail_on_regression and regressed:
        for metric in regressed:
            print(
                f"evalsvc: regressed: {cut(str(metric.get('metric')), 80)}: mean diff "
                f"{format_signed(metric.get('mean_diff'))} "
                f"[{format_signed(metric.get('ci_low'))}, {format_signed(metric.get('ci_high'))}], "
                f"p adjusted {format_p_value(metric.get('p_adjusted'))}",
                file=sys.stderr,
            )
        raise ClientError(
            f"the candidate {args.candidate} regressed on {len(regressed)} of "
            f"{len(comparison.get('metrics') or [])} metrics against {args.baseline}"
        )
    return 0


# ---- plan --------------------------------------------------------------------------------------


@user_command
def plan(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"baseline_id": args.baseline, "effect": args.effect}
    if args.candidate is not None:
        body["candidate_id"] = args.candidate
    if args.alpha is not None:
        body["alpha"] = args.alpha
    if args.power is not None:
        body["power"] = args.power
    _post_and_show(args, "/plan", body, render_plan)
    return 0


def add_parsers(commands: Subcommands) -> None:
    compare_parser = commands.add_parser("compare", help="compare two evaluations pair by pair")
    compare_parser.add_argument("baseline", metavar="BASELINE", help="the baseline evaluation's id")
    compare_parser.add_argument(
        "candidate", metavar="CANDIDATE", help="the candidate evaluation's id"
    )
    compare_parser.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when any metric's verdict is regressed",
    )
    compare_parser.add_argument(
        "--alpha", type=finite_float, help="significance level (default 0.05)"
    )
    compare_parser.add_argument("--limit", type=int, help="regressions listed at most (default 20)")
    compare_parser.add_argument(
        "--cluster-by",
        choices=CLUSTER_BY,
        help="pairs that are not independent: add each metric's clustered interval, by the "
        "baseline pair's first label, its input or its conversation_id",
    )
    compare_parser.add_argument(
        "--json", action="store_true", help="print the comparison's JSON body"
    )
    add_service_flags(compare_parser)
    compare_parser.set_defaults(run=compare)

    plan_parser = commands.add_parser(
        "plan",
        help="how many pairs a comparison needs to detect a difference",
        description="Per metric, how many pairs a comparison needs to detect a mean difference "
        "of --effect with probability --power (POST /plan): from the spread of the paired "
        "differences with CANDIDATE, or without one from the baseline's spread (two "
        "independent runs).",
    )
    plan_parser.add_argument("baseline", metavar="BASELINE", help="the baseline evaluation's id")
    plan_parser.add_argument(
        "candidate",
        metavar="CANDIDATE",
        nargs="?",
        help="a candidate evaluation's id: plan a paired comparison from their differences",
    )
    plan_parser.add_argument(
        "--effect",
        type=finite_float,
        required=True,
        metavar="X",
        help="the mean difference to detect, on the score scale (> 0)",
    )
    plan_parser.add_argument("--alpha", type=finite_float, help="significance level (default 0.05)")
    plan_parser.add_argument(
        "--power", type=finite_float, help="chance to detect the effect, 0.5-1 (default 0.8)"
    )
    plan_parser.add_argument("--json", action="store_true", help="print the plan's JSON body")
    add_service_flags(plan_parser)
    plan_parser.set_defaults(run=plan)
