"""GET /evaluation/{id}/anchored: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.routes.get_evaluation_anchored import router
from evalsvc.handlers.http import build_handler

handler = build_handler(router)
