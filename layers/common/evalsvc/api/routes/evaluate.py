"""POST /evaluate: score a seed or synthetic dataset against a metrics set.

A large evaluation runs as a queued job. A plain request waits for it while it safely can (the
v1 body when it completes, else a 503 naming the result to poll); with `Prefer: respond-async`
it answers at once (202) with the result id and status.
"""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from evalsvc.api import replays
from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.prefer import PreferHeader, async_answer, queue_options
from evalsvc.error_bars import ClusteredMean
from evalsvc.identifiers import format_ms
from evalsvc.logic import evaluations, results
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.evaluations import (
    EvaluateIn,
    EvaluateOut,
    EvaluationResult,
    LowestScoringPair,
    MetricScoreOut,
    QueuedOut,
    clustered_out,
    inputs_out,
)
from evalsvc.models.jobs import Status
from evalsvc.models.usage import usage_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


def v1_body(result: EvaluationResult) -> EvaluateOut:
    clustered: list[ClusteredMean | None] = [None] * len(result.definitions)
    if result.clustered is not None:
        clustered = list(result.clustered)
    noise = result.judge_noise or [None] * len(result.definitions)
    return EvaluateOut(
        eval_results_id=result.results_id,
        dataset_id=result.dataset_id,
        created_at=format_ms(result.created_ms),
        pair_count=result.pair_count,
        scores=[
            MetricScoreOut(
                metric=definition,
                mean_score=summary.mean,
                std_dev=summary.std_dev,
                ci_low=summary.ci_low,
                ci_high=summary.ci_high,
                ci_confidence=summary.ci_confidence,
                median_score=summary.median,
                min_score=summary.min,
                max_score=summary.max,
                lowest_scoring_pairs=[
                    LowestScoringPair(pair_id=low.pair_id, score_reason=low.reason, score=low.score)
                    for low in lowest
                ],
                judge_noise_sd=noise_sd,
                **clustered_out(cluster).model_dump(),
            )
            for definition, summary, lowest, cluster, noise_sd in zip(
                result.definitions, result.summaries, result.lowest, clustered, noise, strict=True
            )
        ],
        usage=usage_out(result.usage),
        inputs=inputs_out(result),
    )


@router.post(
    "/evaluate",
    response_model=EvaluateOut,
    responses={
        202: {"model": QueuedOut, "description": "Queued (only with Prefer: respond-async)"},
        **error_responses(400, 404, 409, 413, 429, 502),
    },
)
def evaluate(
    request: Request,
    body: EvaluateIn,
    prefer: PreferHeader = None,
    identity: Identity = Depends(current_identity),
) -> EvaluateOut | JSONResponse:
    options = queue_options(request, prefer, body)
    result = evaluations.evaluate(
        identity,
        body,
        options.deadline,
        respond_async=options.respond_async,
        wait_seconds=options.wait_seconds,
        request_key=options.request_key,
    )
    if options.respond_async:
        queued = QueuedOut(
            eval_results_id=result.results_id,
            status=result.status.value,
            pairs_done=result.pairs_done,
            pairs_total=result.pair_count,
            judge_calls_done=result.judge_calls(result.pairs_done),
            judge_calls_total=result.judge_calls(result.pair_count),
        )
        running = result.status is Status.RUNNING
        return async_answer(queued, running=running, location=f"evaluation/{result.results_id}")
    replays.name(request, "evaluation", result.results_id)
    return v1_body(result)


def _replay(request: Request, identity: Identity, results_id: str) -> JSONResponse:
    """The answer to an evaluation, again (for a retry with its Idempotency-Key): its result
    as stored, with the reasons of its lowest-scoring pairs."""
    stored = results.read_evaluation(identity, results_id, include_all=False)
    return JSONResponse(v1_body(stored.result).model_dump(mode="json"))


replays.register("evaluation", _replay)
