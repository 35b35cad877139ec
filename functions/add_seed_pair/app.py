"""POST /data/seed/{id}/pair: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.routes.add_seed_pair import router
from evalsvc.handlers.http import build_handler

handler = build_handler(router)
