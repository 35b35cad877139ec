"""GET /evaluation/{id}/audit_sample: the Lambda entry point. The route lives in the layer."""

from evalsvc.api.routes.get_audit_sample import router
from evalsvc.handlers.http import build_handler

handler = build_handler(router)
