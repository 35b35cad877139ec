"""GET /pairwise/{id}/report: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.routes.get_pairwise_report import router
from evalsvc.handlers.http import build_handler

handler = build_handler(router)
