"""GET /data/seed/{id}: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.routes.get_seed_dataset import router
from evalsvc.handlers.http import build_handler

handler = build_handler(router)
