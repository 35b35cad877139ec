"""POST /evaluate: score a seed or synthetic dataset against a metrics set."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.identifiers import format_ms
from evalsvc.logic import evaluations
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.evaluations import EvaluateIn, EvaluateOut, LowestScoringPair, MetricScoreOut
from evalsvc.scoring.judges import configured_judge

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


@router.post("/evaluate", response_model=EvaluateOut, responses=error_responses(400, 404, 413, 502))
def evaluate(body: EvaluateIn, identity: Identity = Depends(current_identity)) -> EvaluateOut:
    done = evaluations.evaluate(identity, body, configured_judge(identity.tenant))
    result = done.result
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
            )
            for definition, summary, lowest in zip(
                result.definitions, result.summaries, result.lowest, strict=True
            )
        ],
    )
