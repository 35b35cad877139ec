"""The juries of an evaluation's metrics (E13), a line per metric judged by a jury, and each
model's part of the usage when several did the work: `evalsvc evaluate` and `evalsvc rerun`
print them below the table, `evalsvc report` on stderr. Read from the result already in hand
(GET /evaluation's score_juries, or POST /evaluate's scores[i].jury): no request more."""

from __future__ import annotations

from typing import Any

from evalsvc_tools.render.figures import field, format_figure, money, rows
from evalsvc_tools.terminal import cut

# How much of a judge's name a line shows (the service takes names of up to 256 characters;
# a model id is far shorter).
JUDGE_WIDTH = 64


def _judge(name: Any) -> str:
    return cut(str(name), JUDGE_WIDTH)


def _count(value: Any, one: str, many: str) -> str:
    return f"{field(value)} {one if value == 1 else many}"


def jury_line(index: int, entry: Any) -> str | None:
    """`metric 0: jury of 3 (mean): alpha 0.41; a 4.20, b 2.90, c 3.30`, or None when `entry`
    (a score_juries item: {"jury": {...}, "per_judge": [...]}) is not a jury. Every name the
    service gave is shown as text, terminal-safe."""
    if not isinstance(entry, dict) or not isinstance(entry.get("jury"), dict):
        return None
    jury = entry["jury"]
    judges = jury.get("judges")
    size = len(judges) if isinstance(judges, list) else field(judges)
    line = (
        f"metric {index}: jury of {size} ({field(jury.get('aggregate'))}): "
        f"alpha {format_figure(jury.get('alpha'))}"
    )
    means = [
        f"{_judge(judge.get('judge'))} {format_figure(judge.get('mean'))}"
        for judge in rows(entry, "per_judge")
    ]
    return f"{line}; {', '.join(means)}" if means else line


def _juries(result: dict[str, Any]) -> list[Any]:
    """Each metric's jury entry: GET /evaluation's score_juries, else POST /evaluate's
    scores[i] (whose jury and per_judge are the same figures)."""
    juries = result.get("score_juries")
    if isinstance(juries, list):
        return juries
    return [
        {"jury": score.get("jury"), "per_judge": score.get("per_judge")}
        for score in rows(result, "scores")
    ]


def model_lines(usage: Any) -> list[str]:
    """Each model's calls and cost, when the usage has by_model (a jury's judges, or a judge
    and an embeddings model): `openai:a: 12 calls, 2 cache hits, $0.000123`."""
    if not isinstance(usage, dict):
        return []
    return [
        f"  {_judge(part.get('model'))}: {_count(part.get('llm_calls'), 'call', 'calls')}, "
        f"{_count(part.get('cache_hits'), 'cache hit', 'cache hits')}, "
        f"{money(part.get('cost_usd'))}"
        for part in rows(usage, "by_model")
    ]


def jury_lines(result: dict[str, Any]) -> list[str]:
    """The line of each metric judged by a jury, in metric order, then (under `by model:`)
    each model's part of the usage when the service gives it; none without either."""
    juries = _juries(result)
    lines = [
        line for index, entry in enumerate(juries) if (line := jury_line(index, entry)) is not None
    ]
    parts = model_lines(result.get("usage"))
    if parts:
        lines += ["by model:", *parts]
    return lines
