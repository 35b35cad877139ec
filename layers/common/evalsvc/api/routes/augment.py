"""POST /augment: a new synthetic dataset of variants of the seed pairs.

Large LLM work runs as a queued job: a plain request waits for it while it safely can (the v1
body when it completes, else a 503 naming the dataset to poll); with `Prefer: respond-async`
it answers at once (202) with the synthetic dataset's id and status (api.queued_work).
"""

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse

from evalsvc.api import queued_work
from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.prefer import PreferHeader, queue_options
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
    return queued_work.answer(
        request,
        options,
        running=done.header is None,
        location=augmentation.SUBJECT.where(_made_id(done)),
        queued=lambda: _queued(done),
        done=lambda: _full(done),
    )


def _made_id(done: augmentation.Augmentation) -> str:
    if done.header is not None:
        return done.header.dataset_id
    assert done.job is not None
    return done.job.job_id


def _queued(done: augmentation.Augmentation) -> AugmentQueuedOut:
    """The queued shape: the running job's progress, or the dataset made."""
    header, job = done.header, done.job
    if header is not None:
        count = header.pair_count
        return AugmentQueuedOut(
            synthetic_data_id=header.dataset_id,
            status="complete",
            pairs_done=count,
            pairs_total=count,
        )
    assert job is not None
    return AugmentQueuedOut(
        synthetic_data_id=job.job_id,
        status=job.status.value,
        pairs_done=job.pairs_done,
        pairs_total=job.pairs_total,
    )


def _full(done: augmentation.Augmentation) -> AugmentOut:
    header = done.header
    assert header is not None
    return AugmentOut(
        synthetic_data_id=header.dataset_id,
        created_at=format_ms(header.created_ms),
        seed_data_size=done.seed_size,
        synthetic_data_size=header.pair_count,
        system_prompt=header.system_prompt,
        target_metrics=done.target_metrics,
        usage=usage_out(done.usage),
    )
