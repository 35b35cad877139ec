"""PUT /pairwise/{id}/vote: the Lambda entry point. The route itself lives in the layer."""

from evalsvc.api.routes.vote_pairwise import router
from evalsvc.handlers.http import build_handler

handler = build_handler(router)
