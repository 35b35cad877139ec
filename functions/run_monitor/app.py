"""POST /monitors/{id}/run: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.lambda_handler import build_handler
from evalsvc.api.routes.run_monitor import router

handler = build_handler(router)
