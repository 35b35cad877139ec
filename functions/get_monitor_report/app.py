"""GET /monitors/{id}/report: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.lambda_handler import build_handler
from evalsvc.api.routes.get_monitor_report import router

handler = build_handler(router)
