"""POST /augment: a new synthetic dataset of variants of the seed pairs."""

from fastapi import APIRouter, Depends

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.identifiers import format_ms
from evalsvc.logic import augment as augmentation
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.generation import AugmentIn, AugmentOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["generation"])


@router.post("/augment", response_model=AugmentOut, responses=error_responses(400, 404, 413, 502))
def augment(body: AugmentIn, identity: Identity = Depends(current_identity)) -> AugmentOut:
    done = augmentation.augment(identity, body)
    return AugmentOut(
        synthetic_data_id=done.header.dataset_id,
        created_at=format_ms(done.header.created_ms),
        seed_data_size=done.seed_size,
        synthetic_data_size=done.header.pair_count,
        system_prompt=done.header.system_prompt,
        target_metrics=done.target_metrics,
    )
