"""The work queue's worker: scores chunks of queued evaluations. The logic lives in the layer."""

from evalsvc.handlers.background import chunk_handler
from evalsvc.spending.prices import check_prices

# A malformed EVALSVC_PRICES stops the worker at its start, naming the problem.
check_prices()

handler = chunk_handler
