"""PUT /pairwise/{id}/vote: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.lambda_handler import build_handler
from evalsvc.api.routes.vote_pairwise import router

handler = build_handler(router)
