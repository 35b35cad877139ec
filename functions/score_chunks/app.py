"""The work queue's worker: scores chunks of queued evaluations. The logic lives in the layer."""

from evalsvc.pricing import check_prices
from evalsvc.workers import chunk_handler

# A malformed EVALSVC_PRICES stops the worker at its start, naming the problem.
check_prices()

handler = chunk_handler
