"""POST /otlp/v1/traces: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.routes.ingest_traces import router
from evalsvc.handlers.http import build_handler

handler = build_handler(router)
