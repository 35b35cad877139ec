"""PUT /vote_eval_pair/{id}: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.lambda_handler import build_handler
from evalsvc.api.routes.vote_eval_pair import router

handler = build_handler(router)
