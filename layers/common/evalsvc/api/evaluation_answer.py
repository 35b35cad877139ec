"""How a request that evaluates answers, whichever route started the evaluation (POST /evaluate,
POST /evaluation/{id}/rerun): the v1 body of the result; with `Prefer: respond-async`, the
queued shape (202 with Location while it runs); and the same answer rebuilt from storage for a
retry with the request's Idempotency-Key when it was too large to keep (api.replays)."""

from fastapi import Request
from fastapi.responses import JSONResponse

from evalsvc.api import queued_work, replays
from evalsvc.api.prefer import QueueOptions
from evalsvc.core.identifiers import format_ms
from evalsvc.logic import evaluations, results
from evalsvc.models.api_keys import Identity
from evalsvc.models.clustered import clustered_out
from evalsvc.models.evaluation_inputs import inputs_out
from evalsvc.models.evaluation_out import (
    EvaluateOut,
    LowestScoringPair,
    MetricScoreOut,
    QueuedOut,
    jury_fields,
)
from evalsvc.models.evaluations import EvaluationResult
from evalsvc.models.jobs import Status
from evalsvc.models.usage import usage_out
from evalsvc.statistics.error_bars import ClusteredMean
from evalsvc.statistics.scores import CONFIDENCE

# The OpenAPI entry of the queued answer.
QUEUED_RESPONSE: dict[int | str, dict[str, object]] = {
    202: {"model": QueuedOut, "description": "Queued (only with Prefer: respond-async)"}
}


def v1_body(result: EvaluationResult) -> EvaluateOut:
    clustered: list[ClusteredMean | None] = [None] * len(result.definitions)
    if result.clustered is not None:
        clustered = list(result.clustered)
    noise = result.judge_noise or [None] * len(result.definitions)
    juries = result.juries or [None] * len(result.definitions)
    return EvaluateOut(
        eval_results_id=result.results_id,
        dataset_id=result.dataset_id,
        created_at=format_ms(result.created_ms),
        pair_count=result.pair_count,
        scores=[
            MetricScoreOut(
                metric=definition,
                mean_score=summary.mean if summary else None,
                std_dev=summary.std_dev if summary else None,
                ci_low=summary.ci_low if summary else None,
                ci_high=summary.ci_high if summary else None,
                ci_confidence=summary.ci_confidence if summary else CONFIDENCE,
                median_score=summary.median if summary else None,
                min_score=summary.min if summary else None,
                max_score=summary.max if summary else None,
                lowest_scoring_pairs=[
                    LowestScoringPair(pair_id=low.pair_id, score_reason=low.reason, score=low.score)
                    for low in lowest
                ],
                judge_noise_sd=noise_sd,
                not_applicable=result.not_applicable_count(m),
                **jury_fields(juries[m]),
                **clustered_out(cluster).model_dump(),
            )
            for m, (definition, summary, lowest, cluster, noise_sd) in enumerate(
                zip(
                    result.definitions,
                    result.summaries,
                    result.lowest,
                    clustered,
                    noise,
                    strict=True,
                )
            )
        ],
        usage=usage_out(result.usage),
        inputs=inputs_out(result),
    )


def answer(
    request: Request, options: QueueOptions, result: EvaluationResult
) -> EvaluateOut | JSONResponse:
    """The answer to a request that evaluated (or queued) `result`, as `options` asked
    (api.queued_work)."""

    def done() -> EvaluateOut:
        replays.name(request, "evaluation", result.results_id)
        return v1_body(result)

    return queued_work.answer(
        request,
        options,
        running=result.status is Status.RUNNING,
        location=evaluations.SUBJECT.where(result.results_id),
        queued=lambda: QueuedOut(
            eval_results_id=result.results_id,
            status=result.status.value,
            pairs_done=result.pairs_done,
            pairs_total=result.pair_count,
            judge_calls_done=result.judge_calls(result.pairs_done),
            judge_calls_total=result.judge_calls(result.pair_count),
        ),
        done=done,
    )


def _replay(request: Request, identity: Identity, results_id: str) -> JSONResponse:
    """The answer to an evaluation, again (for a retry with its Idempotency-Key): its result
    as stored, with the reasons of its lowest-scoring pairs (and nothing the v1 body does not
    show: no critiques, which the routes that evaluate may not read)."""
    result = results.existing_result(identity, results_id)
    results.fill_lowest_reasons(identity.tenant, result)
    return JSONResponse(v1_body(result).model_dump(mode="json"))


replays.register("evaluation", _replay)
