"""The dead-letter queue's worker: a chunk that kept failing fails its evaluation result."""

from evalsvc.workers import dead_chunk_handler

handler = dead_chunk_handler
