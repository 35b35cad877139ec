"""POST /otlp/v1/traces: OpenTelemetry traces (OTLP over HTTP, protobuf or JSON, gzip allowed)
whose GenAI spans are kept as pairs of a seed dataset (logic.traces). What an exporter sends
with `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and `OTEL_EXPORTER_OTLP_HEADERS` set to this route and
an API key."""

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Request, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, ConfigDict, Field

from evalsvc.api.auth import AuthenticatedRoute, current_identity
from evalsvc.api.middleware import SENT_CONTENT_TYPE
from evalsvc.api.request_deadline import request_deadline
from evalsvc.logic import traces
from evalsvc.models.api_keys import Identity
from evalsvc.models.common import error_responses

router = APIRouter(route_class=AuthenticatedRoute, tags=["traces"])

# Kept for the answer once the pairs are stored: stop appending with this much left.
ANSWER_SECONDS = 2.0


class PartialSuccess(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    rejected_spans: int | None = Field(
        default=None,
        alias="rejectedSpans",
        description="GenAI spans left out (no output, too large, a field over its limit)",
    )
    error_message: str | None = Field(
        default=None, alias="errorMessage", description="Why they were left out"
    )


class ExportTraceServiceResponse(BaseModel):
    """OTLP's answer: `partialSuccess` is `{}` when every GenAI span was kept."""

    partial_success: PartialSuccess = Field(alias="partialSuccess")


_BINARY = {"type": "string", "format": "binary"}
_BODY = {
    "requestBody": {
        "required": True,
        "description": "An OTLP ExportTraceServiceRequest, in protobuf or in OTLP's JSON (hex "
        "trace and span ids), gzip-compressed or not",
        "content": {
            "application/x-protobuf": {"schema": _BINARY},
            "application/json": {"schema": {"type": "object"}},
        },
    }
}


@router.post(
    "/otlp/v1/traces",
    response_model=ExportTraceServiceResponse,
    responses={
        200: {
            "description": "OTLP's answer, in the request's encoding: an "
            "ExportTraceServiceResponse in protobuf to a protobuf export, its JSON to a JSON one",
            "content": {
                "application/x-protobuf": {"schema": {"type": "string", "format": "binary"}}
            },
        },
        **error_responses(400, 413, 415, 503),
    },
    openapi_extra=_BODY,
)
async def ingest_traces(
    request: Request,
    dataset: Annotated[
        str | None,
        Header(
            alias="X-Evalsvc-Dataset",
            description="The seed dataset to keep the spans in (created when absent); without "
            "it, the resource attribute evalsvc.dataset_id names it",
        ),
    ] = None,
    identity: Identity = Depends(current_identity),
) -> Response:
    deadline = request_deadline(request)
    body = await request.body()
    sent_type = request.scope.get(SENT_CONTENT_TYPE)
    content_type = sent_type.decode("latin-1") if isinstance(sent_type, bytes) else None
    ingested = await run_in_threadpool(
        traces.ingest,
        identity,
        body,
        content_type,
        request.headers.get("content-encoding"),
        dataset,
        lambda: deadline.left() < ANSWER_SECONDS,
    )
    return Response(ingested.body, media_type=ingested.media_type)
