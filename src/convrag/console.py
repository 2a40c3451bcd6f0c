"""Terminal output: a shared rich console and a progress reporter that draws bars.

rich reads square brackets as markup: data (ids, titles, passages, paths, reports) goes through
``rich.markup.escape`` inside a line that has markup of ours, and text with none is written with
``console.out``, which reads no markup."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from .progress import Advance

# Piped output (CI logs, files) gets a wide fixed width so tables are not squeezed to 80 columns.
console = Console(width=None if sys.stdout.isatty() else 120, soft_wrap=True)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 200)


class RichReporter:
    """Shows a progress bar for stages expected to take over a second (all of them, quietly, when fast).

    :meth:`note` adds a word on what the stage's current step is doing to its bar ("page 12 of 40
    read by OCR": one scanned file is minutes of a folder's bar); the next step clears it."""

    def __init__(self) -> None:
        self._live: tuple[Progress, TaskID, str] | None = None

    @contextmanager
    def stage(self, description: str, total: int | None = None) -> Iterator[Advance]:
        # a description names collections, folders and files: shown as written, never read as markup
        columns = [SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
        if total:
            columns.append(TimeRemainingColumn())
        start = time.perf_counter()
        if err_console.is_terminal:
            with Progress(*columns, console=err_console, transient=True) as progress:
                task = progress.add_task(description, total=total)
                self._live = (progress, task, description)

                def advance(n: int = 1) -> None:
                    progress.update(task, advance=n, description=description)

                try:
                    yield advance
                finally:
                    self._live = None
        else:  # logs and pipes: no live bar, only the timing line below
            yield lambda n=1: None
        elapsed = time.perf_counter() - start
        if elapsed >= 1.0:
            err_console.print(f"[dim]{escape(description)}: {elapsed:.1f}s[/dim]")

    def note(self, what: str) -> None:
        """Say ``what`` the current step of the stage on show is doing, after its description, until the step ends."""
        if self._live is not None:
            progress, task, description = self._live
            progress.update(task, description=f"{description} ({what})")
