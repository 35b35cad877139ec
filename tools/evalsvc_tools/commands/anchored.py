"""Reading what people would say about every pair of each metric of a result (GET
/evaluation/{id}/anchored, E12), for `evalsvc evaluate` and `evalsvc report`."""

from __future__ import annotations

import sys

from evalsvc_tools.client import Client, ClientError, segment
from evalsvc_tools.commands.polling import read_retrying
from evalsvc_tools.render.anchored import anchored_line
from evalsvc_tools.terminal import terminal_safe


def anchored_lines(client: Client, results_id: str, metrics: int) -> list[str]:
    """The line of each of the result's `metrics` metrics with audit labels, in metric order
    (none for a metric without). What the service does not answer is said once on stderr, and
    the lines read until then are kept: the result itself has already been shown."""
    lines = []
    path = f"/evaluation/{segment(results_id)}/anchored"
    for idx in range(metrics):
        try:
            body = read_retrying(client, "GET", path, query={"metric_idx": str(idx)}).json()
        except ClientError as exc:
            print(
                "evalsvc: what people would say is not shown (GET /evaluation/"
                f"{terminal_safe(results_id)}/anchored): {terminal_safe(exc.message)}",
                file=sys.stderr,
            )
            break
        line = anchored_line(body)
        if line is not None:
            lines.append(line)
    return lines
