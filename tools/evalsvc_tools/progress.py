"""How `evalsvc evaluate` and `evalsvc pairwise` show the progress of the work they follow: a
rich bar on a terminal, a plain line at each tenth of the way elsewhere (a file, a CI log). The
work is named by `noun` and its id ("evaluation ev_1"), what is counted by `unit` ("pairs"; none
when the service does not say what it counts)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Protocol

from evalsvc_tools.terminal import cut, rich_console

if TYPE_CHECKING:
    from rich.progress import Progress as RichProgress


class ProgressDisplay(Protocol):
    def update(self, done: int, total: int) -> None: ...

    def close(self) -> None: ...


class RichBar:
    """A progress bar on the terminal (stderr)."""

    def __init__(
        self, job_id: str, noun: str = "evaluation", doing: str = "scoring", unit: str = "pairs"
    ) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        console = rich_console(stderr=True)
        console.print(Text(f"{noun} {cut(job_id, 200)}"))
        self.progress: RichProgress = Progress(
            TextColumn(doing),
            BarColumn(bar_width=32),
            MofNCompleteColumn(),
            *([TextColumn(unit)] if unit else []),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self.task = self.progress.add_task(doing, total=None)
        self.progress.start()

    def update(self, done: int, total: int) -> None:
        self.progress.update(self.task, completed=done, total=total or None)
        self.progress.refresh()

    def close(self) -> None:
        self.progress.stop()


class PlainLines:
    """Off a terminal: a line at each tenth of the way, no escape codes."""

    def __init__(self, job_id: str, noun: str = "evaluation", unit: str = "pairs") -> None:
        self.name = f"{noun} {cut(job_id, 200)}"
        self.unit = f" {unit}" if unit else ""
        self.shown = -1

    def update(self, done: int, total: int) -> None:
        tenth = 10 * done // total if total else 0
        if tenth > self.shown:
            self.shown = tenth
            percent = 100 * done // total if total else 0
            print(
                f"{self.name}: {done}/{total}{self.unit} ({percent}%)",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        pass
