"""The pairwise report page's content (GET /pairwise/{id}/report, E5): the run as GET
/pairwise/{id} has it, and the first comparisons whose two orders disagreed, with their texts.
Apart from logic.pairwise so that judging never imports the page's templates."""

from __future__ import annotations

from typing import cast

from evalsvc.core.deadlines import Deadline
from evalsvc.logic.pairwise_judging import Texts, read_texts
from evalsvc.logic.pairwise_runs import existing_run, run_body
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.models.jobs import Status
from evalsvc.models.pairwise import Verdict
from evalsvc.reports.pairwise_page import MAX_DISAGREEMENTS, Disagreement, PairwiseReport
from evalsvc.statistics import pairwise as pairwise_stats
from evalsvc.storage import pairwise as store
from evalsvc.storage import results as results_store

# Verdicts read looking for comparisons whose two orders disagreed, at most (pages of 1,000).
REPORT_MAX_PAIRS = 20_000
# Text read for the disagreements the page shows, at most, per run.
REPORT_TEXT_BYTES = 8 * 1024 * 1024


def _disagreed(verdict: Verdict) -> bool:
    """Both orders judged, and they chose different runs (a tie in one only counts too)."""
    first, second = verdict.first_order, verdict.second_order
    if first is None or second is None:
        return False
    one = pairwise_stats.chosen(1, cast(pairwise_stats.Judgement, first.winner))
    return one != pairwise_stats.chosen(2, cast(pairwise_stats.Judgement, second.winner))


def report(identity: Identity, pairwise_id: str, deadline: Deadline) -> PairwiseReport:
    """What GET /pairwise/{id}/report draws: the run as GET /pairwise/{id} has it, and the first
    comparisons (in pair id order) whose two orders disagreed, with their texts."""
    run = existing_run(identity, pairwise_id)
    body = run_body(identity, run, 1, None)
    found: list[Verdict] = []
    total: int | None = 0
    after, read = "", 0
    while run.status is Status.COMPLETE and deadline.left() > 5:
        pages, more = store.verdict_page(identity.tenant, pairwise_id, after, 1_000)
        for pair in pages:
            for verdict in pair:
                if _disagreed(verdict):
                    total = (total or 0) + 1
                    if len(found) < MAX_DISAGREEMENTS:
                        found.append(verdict)
        read += len(pages)
        if not more or not pages:
            break
        after = pages[-1][0].pair_id
        if read >= REPORT_MAX_PAIRS:
            total = None  # not every verdict was read: the page says how many it lists
            break
    texts: dict[str, Texts] = {}
    if found:
        results = [results_store.get(identity.tenant, rid) for rid in run.result_ids]
        if all(result is not None for result in results):
            texts, _ = read_texts(
                identity.tenant,
                cast(list[EvaluationResult], results),
                [v.pair_id for v in found],
                REPORT_TEXT_BYTES,
            )
    shown = []
    for v in found:
        text = texts.get(v.pair_id)
        assert v.first_order is not None and v.second_order is not None
        shown.append(
            Disagreement(
                pair_id=v.pair_id,
                a=run.result_ids[v.a],
                b=run.result_ids[v.b],
                input=text.input if text else None,
                output_a=text.outputs[v.a] if text else None,
                output_b=text.outputs[v.b] if text else None,
                first_order_winner=cast(pairwise_stats.Judgement, v.first_order.winner),
                first_order_reason=v.first_order.reason,
                second_order_winner=cast(pairwise_stats.Judgement, v.second_order.winner),
                second_order_reason=v.second_order.reason,
            )
        )
    return PairwiseReport.from_body(body, shown, total)
