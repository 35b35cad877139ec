"""POST /data/seed/pair: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.lambda_handler import build_handler
from evalsvc.api.routes.add_seed_pair_for_prompt import router

handler = build_handler(router)
