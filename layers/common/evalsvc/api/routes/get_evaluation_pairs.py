"""GET /evaluation/{id}/pairs: the pairs an evaluation result scored, in pages, as they were
when it scored them, whatever happened to the dataset since (logic.reproduce)."""

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.params import PageCursorParam, list_limit
from evalsvc.api.responses import json_response, or_gzip
from evalsvc.logic import reproduce
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses
from evalsvc.models.datasets import Pair, optional_fields_out
from evalsvc.models.evaluation_lists import ResultPairsOut

router = APIRouter(route_class=AuthenticatedRoute, tags=["evaluations"])


def _pair_out(pair: Pair) -> dict[str, object]:
    out: dict[str, object] = {
        "pair_id": pair.id,
        "input": pair.input,
        "output": pair.output,
        "labels": pair.labels,
    }
    if pair.input_media is not None:
        out["input_media"] = pair.input_media
    if pair.system_prompt_template is not None:
        out["system_prompt_template"] = pair.system_prompt_template
    out.update(optional_fields_out(pair))
    return out


@router.get(
    "/evaluation/{id}/pairs",
    response_model=ResultPairsOut,
    responses=error_responses(400, 404, 410, 413),
)
def get_evaluation_pairs(
    request: Request,
    results_id: Annotated[str, Path(alias="id", description="The evaluation result id")],
    limit: Annotated[
        int,
        list_limit(
            reproduce.MAX_PAGE_PAIRS,
            reproduce.DEFAULT_PAGE_PAIRS,
            "pairs",
            "; fewer when their texts are long",
        ),
    ] = reproduce.DEFAULT_PAGE_PAIRS,
    cursor: PageCursorParam = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    page = reproduce.pairs_page(identity, results_id, limit, cursor)
    content = {"pairs": [_pair_out(pair) for pair in page.pairs], "next_cursor": page.next_cursor}
    too_large = or_gzip(request, "this page is too large: ask for a smaller limit")
    return json_response(request, content, too_large=too_large)
