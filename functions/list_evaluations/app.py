"""GET /evaluations: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.routes.list_evaluations import router
from evalsvc.handlers.http import build_handler

handler = build_handler(router)
