"""POST /augment: a new synthetic dataset of variants of the seed pairs.

Large LLM work runs as a queued job: a plain request waits for it while it safely can (the v1
body when it completes, else a 503 naming the dataset to poll); with `Prefer: respond-async`
it answers at once (202) with the synthetic dataset's id and status.
"""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.prefer import PreferHeader, async_answer, queue_options
from evalsvc.core.identifiers import format_ms
from evalsvc.logic import augment as augmentation
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.generation import AugmentIn, AugmentOut, AugmentQueuedOut
from evalsvc.models.usage import usage_out

router = APIRouter(route_class=AuthenticatedRoute, tags=["generation"])


@router.post(
    "/augment",
    response_model=AugmentOut,
    responses={
        202: {"model": AugmentQueuedOut, "description": "Queued (only with Prefer: respond-async)"},
        **error_responses(400, 404, 409, 413, 429, 502),
    },
)
def augment(
    request: Request,
    body: AugmentIn,
    prefer: PreferHeader = None,
    identity: Identity = Depends(current_identity),
) -> AugmentOut | JSONResponse:
    options = queue_options(request, prefer, body)
    done = augmentation.augment(
        identity,
        body,
        options.deadline,
        respond_async=options.respond_async,
        wait_seconds=options.wait_seconds,
        request_key=options.request_key,
    )
    header, job = done.header, done.job
    if header is None:  # queued, answering at once
        assert job is not None
        queued = AugmentQueuedOut(
            synthetic_data_id=job.job_id,
            status=job.status.value,
            pairs_done=job.pairs_done,
            pairs_total=job.pairs_total,
        )
        return async_answer(queued, running=True, location=f"data/synthetic/{job.job_id}")
    if options.respond_async:  # done inside the request, or found done by a retry
        queued = AugmentQueuedOut(
            synthetic_data_id=header.dataset_id,
            status="complete",
            pairs_done=header.pair_count,
            pairs_total=header.pair_count,
        )
        return async_answer(queued, running=False, location=f"data/synthetic/{header.dataset_id}")
    return AugmentOut(
        synthetic_data_id=header.dataset_id,
        created_at=format_ms(header.created_ms),
        seed_data_size=done.seed_size,
        synthetic_data_size=header.pair_count,
        system_prompt=header.system_prompt,
        target_metrics=done.target_metrics,
        usage=usage_out(done.usage),
    )
