"""Pairwise judging's tables (E5, `evalsvc pairwise`): the leaderboard, the matchups, the judge's
position bias; and an estimate of what judging would take."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalsvc_tools.render.figures import (
    FIELD_WIDTH,
    MISSING,
    PAIR_ID_WIDTH,
    field,
    format_figure,
    format_p_value,
    format_percent,
    format_signed,
    money,
    print_usage,
    rows,
)
from evalsvc_tools.terminal import cut

if TYPE_CHECKING:
    from rich.console import Console

# How each matchup's verdict is shown, and its style.
MATCHUP_VERDICTS = {
    "a_better": ("a better", "green"),
    "b_better": ("b better", "green"),
    "no_significant_difference": ("not significant", ""),
}


def describe_estimate(estimate: dict[str, Any]) -> str:
    """E3's estimate (POST /pairwise/estimate, or any other), as lines to print: terminal-safe."""
    expected = estimate.get("cost_usd_expected")
    most = estimate.get("cost_usd_max")
    model = field(estimate.get("model"))
    if isinstance(most, int | float) and not isinstance(most, bool):
        cost = f"cost {money(expected)} expected, at most {money(most)} ({model})"
    else:
        cost = f"cost unknown: the model {model} has no price"
    return (
        f"estimate: {field(estimate.get('pairs'))} pairs, "
        f"{field(estimate.get('llm_calls'))} LLM calls "
        f"({field(estimate.get('cached_calls'))} of them cached), at most "
        f"{field(estimate.get('input_tokens_max'))} input and "
        f"{field(estimate.get('output_tokens_max'))} output tokens\n{cost}"
    )


def _run(value: Any) -> Any:
    from rich.text import Text

    return Text(cut(str(value), PAIR_ID_WIDTH))


def render_pairwise(body: dict[str, Any], console: Console) -> None:
    """A complete pairwise judging (GET /pairwise/{id}): what was judged, the leaderboard, the
    matchups, and how often the judge chose the output shown first."""
    from rich.table import Table
    from rich.text import Text

    runs = body.get("result_ids")
    both = body.get("both_orders")
    orders = "both orders" if both is True else "one order" if both is False else "orders -"
    console.print(
        Text(
            f"pairwise judging {field(body.get('pairwise_id'))}: "
            f"{len(runs) if isinstance(runs, list) else MISSING} runs over "
            f"{field(body.get('pairs_used'))} pairs, {orders}; alpha {field(body.get('alpha'))}"
            f"\nquestion: {cut(str(body.get('question')), FIELD_WIDTH)}"
        )
    )
    print_usage(body.get("usage"), console)

    leaderboard = Table(title="leaderboard (Bradley-Terry strength, natural log scale)")
    leaderboard.add_column("rank", justify="right")
    leaderboard.add_column("run", overflow="fold")  # an id is copied: folded, never cut
    leaderboard.add_column("strength", justify="right")
    leaderboard.add_column("95% interval", justify="right")
    leaderboard.add_column("wins", justify="right")
    leaderboard.add_column("losses", justify="right")
    leaderboard.add_column("ties", justify="right")
    for row in rows(body, "leaderboard"):
        leaderboard.add_row(
            Text(field(row.get("rank"))),
            _run(row.get("result_id")),
            format_signed(row.get("strength")),
            f"[{format_signed(row.get('ci_low'))}, {format_signed(row.get('ci_high'))}]",
            Text(field(row.get("wins"))),
            Text(field(row.get("losses"))),
            Text(field(row.get("ties"))),
        )
    console.print(leaderboard)

    matchups = Table(title="matchups (win rate of a over b, ties aside; Holm-adjusted p)")
    matchups.add_column("a", overflow="fold")
    matchups.add_column("b", overflow="fold")
    matchups.add_column("a wins", justify="right")
    matchups.add_column("b wins", justify="right")
    matchups.add_column("ties", justify="right")
    matchups.add_column("a win rate (95% interval)", justify="right")
    matchups.add_column("p adj.", justify="right")
    matchups.add_column("verdict", no_wrap=True)
    for row in rows(body, "matchups"):
        verdict = str(row.get("verdict"))
        shown, style = MATCHUP_VERDICTS.get(verdict, (cut(verdict, 30), ""))
        matchups.add_row(
            _run(row.get("a")),
            _run(row.get("b")),
            Text(field(row.get("a_wins"))),
            Text(field(row.get("b_wins"))),
            Text(field(row.get("ties"))),
            f"{format_figure(row.get('win_rate'))} [{format_figure(row.get('ci_low'))}, "
            f"{format_figure(row.get('ci_high'))}]",
            format_p_value(row.get("p_adjusted")),
            Text(shown, style=style),
        )
    console.print(matchups)

    position = body.get("position")
    if isinstance(position, dict):
        consistency = format_percent(position.get("consistency"))
        meaning = "one order judged" if consistency == MISSING else "both orders agreed"
        console.print(
            Text(
                f"position: {field(position.get('judgements'))} judgements, first chosen "
                f"{field(position.get('first_chosen'))}, second chosen "
                f"{field(position.get('second_chosen'))}, ties {field(position.get('ties'))}; "
                f"consistency {consistency} ({meaning})"
            )
        )
