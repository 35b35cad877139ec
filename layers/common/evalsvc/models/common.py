"""Shapes and limits shared by every route."""

from typing import Annotated

from pydantic import BaseModel, Field

# Lambda takes at most 6 MB (6,291,456 bytes) of event per synchronous invocation, and API
# Gateway sends the request body in it base64-encoded (BinaryMediaTypes is */*, for gzip
# responses; see docs/design.md): 4/3 of the body, beside the headers, query and request
# context (64 KiB is kept for them; API Gateway caps headers at 10 KB). The largest body that
# reaches the function whole is this: 4,669,440 bytes.
LAMBDA_EVENT_BYTES = 6 * 1024 * 1024
EVENT_ENVELOPE_BYTES = 64 * 1024
MAX_BODY_BYTES = (LAMBDA_EVENT_BYTES - EVENT_ENVELOPE_BYTES) * 3 // 4

# The smallest alpha (POST /compare, /plan, a monitor's): below it the interval of two pairs (a
# t quantile with 1 degree of freedom, about 1 / (pi * alpha / 2)) passes 1e100 and leaves
# double precision's reach. Here rather than in models.comparisons, whose models (and the
# evaluation models they use) the routes that only check an alpha need not build.
MIN_ALPHA = 1e-100


# The next_cursor of a list read in pages.
ListNextCursor = Annotated[
    str | None, Field(description="Pass it as cursor for the next page; null on the last")
]


class ErrorBody(BaseModel):
    error: str


def error_responses(*codes: int) -> dict[int | str, dict[str, object]]:
    """OpenAPI entries for the error codes a route can answer (always with ErrorBody)."""
    meaning = {
        400: "Malformed JSON, a wrong type, a missing field or a bad id",
        401: "Missing, unknown or revoked API key",
        404: "No such dataset, metrics set, result or pair (or it belongs to another tenant), "
        "or no such route",
        409: "The pair id already exists in the dataset, the dataset was overwritten "
        "between two pages, or an evaluation result is still running or failed",
        413: "The body or a field is over its size limit, or what was asked is too large for "
        "one request or response whatever the load (read it in pages, or ask for less: the "
        "message says how); never for running out of time",
        415: "A body in a type or an encoding the route does not read: the message names those "
        "it does",
        429: "LLM work the tenant's monthly spending limit leaves no room for, or (for work "
        "that would queue) the tenant runs as many queued jobs as it may at once: nothing was "
        "stored and no model was called; the message says which, Retry-After when to retry",
        410: "The dataset version the evaluation result scored was replaced and its retention "
        "(EVALSVC_VERSION_RETENTION_DAYS) ended, so its pairs are no longer kept (the message "
        "names the day it expired); or the result was stored before results kept their pairs: "
        "evaluate the dataset again",
        502: "The LLM judge failed (after retries) for a metric and pair; nothing was stored",
        503: "Storage is busy, or the LLM provider is not available (nothing was changed), or "
        "the work did not fit the request's time (the service busy): retry after Retry-After; "
        "when the work goes on in the background, Location names what to poll",
    }
    # 401, 404 (an id that is not the caller's, or a path no route takes) and 503 can answer
    # any request.
    every = sorted({401, 404, 503, *codes})
    return {code: {"model": ErrorBody, "description": meaning[code]} for code in every}


def html_page(description: str) -> dict[int | str, dict[str, object]]:
    """The OpenAPI entry of a route answering 200 with an HTML page."""
    return {
        200: {
            "description": f"{description}: one self-contained HTML page (UTF-8)",
            "content": {"text/html": {"schema": {"type": "string"}}},
        }
    }
