"""PUT /vote_eval_pair/{id}: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.routes.vote_eval_pair import router
from evalsvc.handlers.http import build_handler

handler = build_handler(router)
