"""GET /evaluation/{id}: an evaluation result, its lowest-scoring pairs and human critiques;
with includeAllScores=true, every scored pair. With `limit` or `cursor`, one page of the scored
pairs and critiques (for results too large for one response)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.params import PageCursorParam
from evalsvc.api.responses import json_response, readable_bytes
from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import format_ms
from evalsvc.logic import results
from evalsvc.logic.datasets import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from evalsvc.models.api_keys import Identity
from evalsvc.models.clustered import clustered_out
from evalsvc.models.common import error_responses
from evalsvc.models.evaluation_inputs import inputs_out
from evalsvc.models.evaluation_out import (
    EvaluationOut,
    EvaluationPageOut,
    jury_out,
)
from evalsvc.models.evaluations import Critique, EvaluationResult, ScoredPair
from evalsvc.models.jobs import Status
from evalsvc.models.usage import usage_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])

_TRUE, _FALSE = {"true", "1"}, {"false", "0"}


def parse_flag(name: str, value: str | None) -> bool:
    """true/false in any case, or 1/0; anything else is a 400."""
    if value is None:
        return False
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InvalidInput(f"{name} must be true or false (or 1 or 0), not {value[:40]!r}")


def _error_bars(result: EvaluationResult) -> dict[str, object]:
    """score_clustered and score_judge_noise_sds: per metric once complete, else null."""
    complete = result.status is Status.COMPLETE
    clustered = result.clustered if complete and result.cluster_by is not None else None
    noise: list[float | None] | None = None
    if complete:
        noise = result.judge_noise or [None] * len(result.definitions)
    return {
        "score_clustered": None
        if clustered is None
        else [clustered_out(c).model_dump() for c in clustered],
        "score_judge_noise_sds": noise,
    }


def _juries(result: EvaluationResult) -> list[dict[str, object] | None] | None:
    """E13's score_juries: per metric once complete, with a jury; else null."""
    if result.status is not Status.COMPLETE or result.juries is None:
        return None
    return [None if (out := jury_out(j)) is None else out.model_dump() for j in result.juries]


def _critique(c: Critique) -> dict[str, object]:
    return {
        "id": c.id,
        "pair_id": c.pair_id,
        "metric_idx": c.metric_idx,
        "comment": c.comment,
        "vote": c.vote,
        "user": c.user,
        "user_email": c.user_email,
        "time": format_ms(c.time_ms),
    }


def _all_scored(
    scored: list[ScoredPair], metrics: int, judges: list[str] | None
) -> list[list[dict[str, object]]]:
    """Per metric, the pairs it scored (a pair it is not applicable to is not listed, E10)."""
    return [
        [_scored_out(p, m, judges) for p in scored if p.scores[m] is not None]
        for m in range(metrics)
    ]


def _scored_out(pair: ScoredPair, metric: int, judges: list[str] | None) -> dict[str, object]:
    """One pair's entry under one metric; with the judge's k answers when it gave several."""
    out: dict[str, object] = {
        "reason": pair.reasons[metric],
        "pair_id": pair.pair_id,
        "score": pair.scores[metric],
    }
    if pair.samples is not None and metric < len(pair.samples) and pair.samples[metric]:
        out["samples"] = pair.samples[metric]
    if judges and pair.judge_scores is not None and metric < len(pair.judge_scores):
        scores = pair.judge_scores[metric]
        if len(scores) == len(judges):
            out["judge_scores"] = dict(zip(judges, scores, strict=True))
    return out


@router.get(
    "/evaluation/{id}",
    response_model=EvaluationOut | EvaluationPageOut,
    responses=error_responses(400, 404, 413),
)
def get_evaluation(
    request: Request,
    results_id: Annotated[str, Path(alias="id", description="The evaluation result id")],
    include_all_scores: Annotated[
        str | None,
        Query(alias="includeAllScores", description="true to include every scored pair"),
    ] = None,
    limit: Annotated[
        int | None,
        Query(
            ge=1,
            le=MAX_PAGE_SIZE,
            description="Read one page of at most this many scored pairs (with includeAllScores) "
            "and critiques; the response then carries next_cursor",
        ),
    ] = None,
    cursor: PageCursorParam = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    include_all = parse_flag("includeAllScores", include_all_scores)
    if limit is not None or cursor is not None:
        page = results.read_evaluation_page(
            identity,
            results_id,
            include_all=include_all,
            limit=limit or DEFAULT_PAGE_SIZE,
            cursor=cursor,
        )
        paged: dict[str, object] = {
            "results_id": page.result.results_id,
            "status": page.result.status.value,
            "human_critique": [_critique(c) for c in page.critiques],
            "next_cursor": page.next_cursor,
        }
        if page.all_scored is not None:
            paged["all_scored_pairs"] = _all_scored(
                page.all_scored, len(page.result.definitions), page.result.judges
            )
        return json_response(
            request, paged, too_large="this page is too large: ask for a smaller limit"
        )
    stored = results.read_evaluation(
        identity, results_id, include_all=include_all, max_bytes=readable_bytes(request)
    )
    result = stored.result
    content: dict[str, object] = {
        "status": result.status.value,
        "pairs_done": result.pairs_done,
        "pairs_total": result.pair_count,
        "judge_calls_done": result.judge_calls(result.pairs_done),
        "judge_calls_total": result.judge_calls(result.pair_count),
        "results_id": result.results_id,
        "created_at": format_ms(result.created_ms),
        "dataset_id": result.dataset_id,
        "metrics_id": result.metrics_id,
        "metrics_definitions": result.definitions,
        "pair_count": result.pair_count,
        "system_prompt": result.system_prompt,
        "score_means": [s.mean if s else None for s in result.summaries],
        "score_medians": [s.median if s else None for s in result.summaries],
        "score_mins": [s.min if s else None for s in result.summaries],
        "score_maxes": [s.max if s else None for s in result.summaries],
        "score_std_devs": [s.std_dev if s else None for s in result.summaries],
        "score_confidence_intervals": [
            {"ci_low": s.ci_low, "ci_high": s.ci_high, "ci_confidence": s.ci_confidence}
            if s
            else None
            for s in result.summaries
        ],
        "score_not_applicable": [
            result.not_applicable_count(m) for m in range(len(result.definitions))
        ],
        "min_scoring_pairs": [
            [{"reason": low.reason, "pair_id": low.pair_id, "score": low.score} for low in metric]
            for metric in result.lowest
        ],
        "score_histograms": (result.histograms if result.status is Status.COMPLETE else None),
        "cluster_by": result.cluster_by,
        "judge_samples": result.judge_samples,
        **_error_bars(result),
        "score_juries": _juries(result),
        "human_critique": [_critique(c) for c in stored.critiques],
        "usage": usage_out(result.usage).model_dump(mode="json"),
        "inputs": None if (inputs := inputs_out(result)) is None else inputs.model_dump(),
    }
    if result.failure:
        content["failure"] = result.failure
    if stored.all_scored is not None:
        content["all_scored_pairs"] = _all_scored(
            stored.all_scored, len(result.definitions), result.judges
        )
    return json_response(
        request,
        content,
        too_large=f"evaluation result {result.results_id!r} is too large for one response: ask "
        "with Accept-Encoding: gzip, or read its scored pairs and critiques in pages with "
        "?limit=1000 (and includeAllScores=true), then &cursor=<next_cursor>",
    )
