"""GET /evaluation/{id}/audit_sample: the Lambda entry point. The route lives in the layer."""

from evalsvc.api.lambda_handler import build_handler
from evalsvc.api.routes.get_audit_sample import router

handler = build_handler(router)
