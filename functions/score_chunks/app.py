"""The work queue's worker: scores chunks of queued evaluations. The logic lives in the layer."""

from evalsvc.workers import chunk_handler

handler = chunk_handler
