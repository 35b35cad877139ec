"""The dead-letter queue's worker: a chunk that kept failing fails its evaluation result."""

from evalsvc.handlers.background import dead_chunk_handler

handler = dead_chunk_handler
