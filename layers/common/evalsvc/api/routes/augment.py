"""POST /augment: a new synthetic dataset of variants of the seed pairs.

Large LLM work runs as a queued job: a plain request waits for it while it safely can (the v1
body when it completes, else a 503 naming the dataset to poll); with `Prefer: respond-async`
it answers at once (202) with the synthetic dataset's id and status.
"""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.prefer import PreferHeader, preferences, request_key, wait_budget
from evalsvc.identifiers import format_ms
from evalsvc.logic import augment as augmentation
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.generation import AugmentIn, AugmentOut, AugmentQueuedOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["generation"])


@router.post(
    "/augment",
    response_model=AugmentOut,
    responses={
        202: {"model": AugmentQueuedOut, "description": "Queued (only with Prefer: respond-async)"},
        **error_responses(400, 404, 409, 413, 502),
    },
)
def augment(
    request: Request,
    body: AugmentIn,
    prefer: PreferHeader = None,
    identity: Identity = Depends(current_identity),
) -> AugmentOut | JSONResponse:
    wanted = preferences(prefer)
    respond_async = "respond-async" in wanted
    done = augmentation.augment(
        identity,
        body,
        respond_async=respond_async,
        wait_seconds=0.0 if respond_async else wait_budget(request, wanted),
        request_key=request_key(request, body),
    )
    if done.header is None:
        assert done.job is not None
        queued = AugmentQueuedOut(
            synthetic_data_id=done.job.dataset_id,
            status=done.job.status.value,
            pairs_done=done.job.pairs_done,
            pairs_total=done.job.pairs_total,
        )
        return JSONResponse(
            status_code=202,
            content=queued.model_dump(),
            headers={
                "Preference-Applied": "respond-async",
                "Location": f"data/synthetic/{done.job.dataset_id}",
            },
        )
    if respond_async:  # no queue here: it ran inside the request
        return JSONResponse(
            content=AugmentQueuedOut(
                synthetic_data_id=done.header.dataset_id,
                status="complete",
                pairs_done=done.header.pair_count,
                pairs_total=done.header.pair_count,
            ).model_dump()
        )
    return AugmentOut(
        synthetic_data_id=done.header.dataset_id,
        created_at=format_ms(done.header.created_ms),
        seed_data_size=done.seed_size,
        synthetic_data_size=done.header.pair_count,
        system_prompt=done.header.system_prompt,
        target_metrics=done.target_metrics,
    )
