"""The scheduled sweeper: stalled queued jobs are queued again, or failed saying why."""

from evalsvc.handlers.background import sweep_handler

handler = sweep_handler
