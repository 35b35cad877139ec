"""The scheduled sweeper: stalled queued jobs are queued again, or failed saying why."""

from evalsvc.workers import sweep_handler

handler = sweep_handler
