"""GET /data/seed/{id}/versions: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.lambda_handler import build_handler
from evalsvc.api.routes.list_seed_dataset_versions import router

handler = build_handler(router)
